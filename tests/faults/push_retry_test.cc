// Fault test (issue 10, "restarts that drop nothing"): pushes while
// folio-ingest restarts. The folio CLI retries a push that met a closed port,
// a reset connection or a 5xx, with the same Idempotency-Key on every
// attempt; ingest records the key with the push in one transaction and
// answers a known key with the recorded reply. What must hold:
//  - a loop of CLI pushes, each changing one note, while ingest is
//    SIGTERMed and SIGKILLed and restarted: every invocation exits 0, the
//    versions the pushes report are consecutive (each push applied exactly
//    once), and every note is served by the edge;
//  - the same key and body twice: the same reply (the second says
//    "replayed"), one version; the same key with another body: 422 naming
//    the problem, nothing applied; a malformed key: 400;
//  - a push that finds ingest busy (its request-body budget full: 503 with
//    Retry-After, issue 22) waits what Retry-After asks, then goes through.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../integration/cluster.h"
#include "../integration/test_util.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"

using namespace folio;
using namespace folio::it;

namespace {

constexpr int kPushes = 20;

// The version a CLI summary line names ("...; version 12; 0.05 s"), or -1.
long VersionOf(const std::string& out) {
  size_t at = out.rfind("; version ");
  return at == std::string::npos ? -1 : std::atol(out.c_str() + at + 10);
}

http::ClientResponse PushWithKey(Cluster& c, const std::string& body, const std::string& key) {
  http::ClientRequest req;
  req.method = "POST";
  req.url = c.ingest_url() + "/api/v1/push";
  req.body = body;
  req.headers = {{"Authorization", "Bearer " + std::string(kToken)}, {"Content-Type", "application/json"}};
  if (!key.empty()) req.headers.emplace_back("Idempotency-Key", key);
  auto r = http::Fetch(req);
  REQUIRE(r.ok());
  return *r;
}

// The manifest's "version".
long ServerVersion(Cluster& c) {
  auto m = c.Manifest();
  size_t at = m.body.find("\"version\":");
  return at == std::string::npos ? -1 : std::atol(m.body.c_str() + at + 10);
}

}  // namespace

TEST_CASE("faults: CLI pushes while ingest restarts (SIGTERM and SIGKILL): each applied exactly once") {
  Cluster c;
  const std::string vault = c.dir() + "/vault";
  std::filesystem::create_directories(vault);
  std::vector<std::string> outs(kPushes);
  std::vector<int> codes(kPushes, -1);
  std::atomic<int> done{0};
  std::thread pusher([&] {
    for (int i = 0; i < kPushes; ++i) {
      std::ofstream(vault + "/note-" + std::to_string(i) + ".md") << "# Note " << i << "\n\nmarker-" << i << "\n";
      codes[i] = c.RunCli({"push", vault, "--server", c.ingest_url(), "--token", kToken, "--retry-for", "120s"},
                          &outs[i]);
      ++done;
    }
  });
  // Restarts spread over the loop: SIGTERM (a drain), SIGKILL (a crash,
  // maybe mid-push), twice each. Each waits until pushes went on meanwhile.
  const int signals[] = {SIGTERM, SIGKILL, SIGTERM, SIGKILL};
  int restarts = 0;
  for (int sig : signals) {
    int before = done.load();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (done.load() < before + 2 && done.load() < kPushes && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (done.load() >= kPushes) break;
    c.StopIngest(sig);
    c.StartIngest();
    ++restarts;
  }
  pusher.join();
  MESSAGE("ingest restarted ", restarts, " times during ", kPushes, " pushes");
  CHECK(restarts >= 2);

  std::set<long> versions;
  for (int i = 0; i < kPushes; ++i) {
    INFO("push ", i, ": ", outs[i], "\n", c.Logs());
    CHECK(codes[i] == 0);
    long v = VersionOf(outs[i]);
    CHECK(v > 0);
    versions.insert(v);
  }
  // One version per push, consecutive: none applied twice, none lost.
  REQUIRE(versions.size() == static_cast<size_t>(kPushes));
  CHECK(*versions.rbegin() - *versions.begin() == kPushes - 1);
  CHECK(ServerVersion(c) == *versions.rbegin());
  for (int i = 0; i < kPushes; ++i) {
    auto r = c.WaitForPage("/note-" + std::to_string(i), 200, "marker-" + std::to_string(i), 30000);
    CHECK_MESSAGE(r.status == 200, "note ", i, " not served:\n", c.Logs());
  }
}

TEST_CASE("push: the same Idempotency-Key twice is applied once; with another body it is refused") {
  Cluster c;
  const std::string key = "0123456789abcdef0123456789abcdef";
  const std::string body = PushBody({{"k.md", "# K\n\nfirst\n"}});
  auto first = PushWithKey(c, body, key);
  INFO(first.body, "\n", c.Logs());
  REQUIRE(first.status == 200);
  CHECK(first.body.find("\"replayed\"") == std::string::npos);
  const long version = ServerVersion(c);

  auto again = PushWithKey(c, body, key);
  CHECK(again.status == 200);
  CHECK(again.Header("Idempotent-Replayed") == "true");
  CHECK(again.body.find("\"replayed\":true") != std::string::npos);
  // Everything the first reply said but its timing is said again.
  auto fields = [](const std::string& b) { return b.substr(0, b.find(",\"published\"")); };
  CHECK(fields(again.body) == fields(first.body));
  CHECK(ServerVersion(c) == version);

  auto other = PushWithKey(c, PushBody({{"k.md", "# K\n\nsecond\n"}}), key);
  CHECK(other.status == 422);
  CHECK(other.body.find("idempotency_key_reused") != std::string::npos);
  CHECK(other.body.find(key) != std::string::npos);
  CHECK(ServerVersion(c) == version);
  CHECK(c.WaitForPage("/k", 200, "first").status == 200);

  // A push that changes nothing is recorded too: its key cannot be reused.
  const std::string key2 = "fedcba9876543210fedcba9876543210";
  CHECK(PushWithKey(c, body, key2).status == 200);
  CHECK(PushWithKey(c, PushBody({{"k.md", "# K\n\nthird\n"}}), key2).status == 422);
  CHECK(ServerVersion(c) == version);

  // The record survives a restart (it is in SQLite with the push).
  c.StopIngest(SIGKILL);
  c.StartIngest();
  auto after = PushWithKey(c, body, key);
  CHECK(after.status == 200);
  CHECK(after.body.find("\"replayed\":true") != std::string::npos);
  CHECK(ServerVersion(c) == version);

  auto bad = PushWithKey(c, body, "not a key!");
  CHECK(bad.status == 400);
  CHECK(bad.body.find("Idempotency-Key") != std::string::npos);
  // Without a key a push is applied as before.
  CHECK(PushWithKey(c, PushBody({{"k.md", "# K\n\nfourth\n"}}), "").status == 200);
  CHECK(ServerVersion(c) == version + 1);
}

TEST_CASE("faults: a CLI push that finds ingest's body budget full waits Retry-After, then goes through (issue 22)") {
  Cluster c({"--max-body", "4MiB", "--max-inflight-body-bytes", "4MiB"}, /*start_services=*/false);
  c.StartIngest();
  INFO(c.Logs());
  const std::string url = c.ingest_url();
  auto metric = [&](const char* series) {
    auto r = http::Get(url + "/metrics");
    return r.ok() ? Metric(r->body, series) : -1;
  };
  // Another client holds the whole budget: a push's headers and one byte.
  const uint64_t held = (4u << 20) - 64;  // plus the 64 bytes of padding: all 4 MiB
  int holder = Connect(std::stoi(url.substr(url.rfind(':') + 1)));
  REQUIRE(holder >= 0);
  const std::string head = std::string("POST /api/v1/push HTTP/1.1\r\nHost: i\r\nAuthorization: Bearer ") + kToken +
                           "\r\nContent-Length: " + std::to_string(held) + "\r\n\r\n{";
  REQUIRE(send(holder, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size()));
  REQUIRE(Eventually([&] { return metric("folio_http_body_bytes_in_flight") == 4u << 20; }));

  const std::string vault = c.dir() + "/vault";
  std::filesystem::create_directories(vault);
  std::ofstream(vault + "/busy.md") << "# Busy\n\nit got through\n";
  std::string out;
  int code = -1;
  std::thread pusher([&] { code = c.RunCli({"push", vault, "--server", url, "--token", kToken, "--retry-for", "60s"}, &out); });
  REQUIRE(Eventually([&] { return metric("folio_http_body_budget_refusals_total") >= 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  close(holder);  // the budget comes back
  pusher.join();
  INFO(out);
  CHECK(code == 0);
  // The first retry waits the 1 s the 503 asked, not the backoff's 0.25 s.
  CHECK(out.find("retrying in 1.0 s") != std::string::npos);
  CHECK(out.find("in flight") != std::string::npos);  // the 503's message, as the CLI prints it
  CHECK(c.Manifest().body.find("busy.md") != std::string::npos);
}
