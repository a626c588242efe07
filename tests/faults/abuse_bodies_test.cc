// Fault test, issue 22: large request bodies cannot take a service's memory.
// The attack run that found it: 16 unauthenticated pushes with
// Content-Length 73400320 took ingest from 45 MiB to 843 MiB before each got
// its 401 (bodies were read whole, then copied, before the token was looked
// at). Real processes (nats-server, folio-ingest, folio-storage), raw sockets
// sending junk bodies as fast as the server takes them, and the services'
// resident memory sampled every 2 ms (plus the kernel's high-water mark).
//  - 16 unauthenticated 80 MiB pushes (no token, or a token no site knows,
//    which waits for a reload of the sites table first): every one gets 401
//    with the JSON body before it has sent its body, and ingest's RSS stays
//    within 20 MiB of where it started, at its peak and after. So do 80 MiB
//    bodies sent to the probes (413), unknown paths (404/405) and the
//    manifest (401).
//  - 16 authenticated 80 MiB pushes against --max-inflight-body-bytes
//    200MiB: at most two are admitted at once (the budget's peak), the rest
//    get 503 with Retry-After before their body, and RSS grows less than the
//    bound.
//  - folio-storage: unauthenticated 80 MiB uploads get 401 before their
//    body; authenticated ones past its budget 503 with Retry-After.
#include <doctest/doctest.h>

#include <barrier>
#include <string>
#include <thread>
#include <vector>

#include "../integration/cluster.h"
#include "../integration/test_util.h"
#include "folio/http/client.h"
#include "upload_flood.h"

using namespace folio;
using namespace folio::it;

namespace {

constexpr uint64_t kBody = 80u << 20;  // 83886080
constexpr int kClients = 16;

// Under AddressSanitizer the services' RSS is not glibc's: freed memory
// sits in the quarantine and shadow memory adds an eighth. The budget's own
// gauges still hold; the RSS bounds of admitted bodies are checked in
// ordinary builds only.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPlainMalloc = false;
#else
constexpr bool kPlainMalloc = true;
#endif

int PortOf(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

// Runs `clients` uploads of `body` bytes at once, with heads[i % heads.size()].
std::vector<UploadOutcome> Flood(int port, const std::vector<std::string>& heads, int clients = kClients,
                                 uint64_t body = kBody) {
  std::barrier go(clients);
  std::vector<UploadOutcome> out(static_cast<size_t>(clients));
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] { out[static_cast<size_t>(i)] = RawUpload(port, heads[i % heads.size()], body, &go); });
  }
  for (auto& t : threads) t.join();
  return out;
}

std::string PushHead(const std::string& authorization) {
  return "POST /api/v1/push HTTP/1.1\r\nHost: ingest\r\nContent-Type: application/json\r\n" + authorization +
         "Content-Length: " + std::to_string(kBody) + "\r\n\r\n";
}

double Scrape(const std::string& base, const std::string& series) {
  auto r = http::Get(base + "/metrics");
  return r.ok() ? Metric(r->body, series) : -1;
}

}  // namespace

TEST_CASE("issue 22: 16 unauthenticated 80 MiB pushes get 401 before their body; ingest's memory stays put") {
  Cluster c({"--max-body", "96MiB"}, /*start_services=*/false);
  c.StartIngest();
  INFO(c.Logs());
  REQUIRE(c.Push(PushBody({{"A.md", "# A\n\nwarm\n"}})).status == 200);  // code paths warm
  RssSampler rss(c.ingest_pid());
  auto outcomes = Flood(PortOf(c.ingest_url()), {PushHead(""), PushHead("Authorization: Bearer no-site-has-this\r\n")});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  rss.Stop();
  const uint64_t after = rss.now();
  MESSAGE("ingest RSS, 16 unauthenticated 80 MiB pushes: start " << MiB(rss.start()) << " MiB, peak "
          << MiB(rss.peak()) << " MiB, after " << MiB(after) << " MiB");
  for (const UploadOutcome& o : outcomes) {
    CHECK(o.status == 401);
    CHECK(o.answered_early());
    CHECK_MESSAGE(o.sent < kBody / 2, "sent " << o.sent << " body bytes before the answer");
    CHECK(o.Header("WWW-Authenticate") == "Bearer");
    CHECK(o.body.find("\"unauthenticated\"") != std::string::npos);
  }
  CHECK(rss.peak() < rss.start() + (20u << 20));
  CHECK(after < rss.start() + (20u << 20));
  CHECK(c.Manifest().body.find("A.md") != std::string::npos);  // still serving

  // Nor can routes that need no token, or none at all, be made to hold one.
  const std::pair<std::string, int> others[] = {
      {"GET /livez", 413}, {"GET /metrics", 413}, {"POST /nope", 404}, {"PUT /api/v1/push", 405},
      {"GET /api/v1/manifest", 401}};
  for (const auto& [request, status] : others) {
    CAPTURE(request);
    std::barrier alone(1);
    UploadOutcome o = RawUpload(PortOf(c.ingest_url()),
                                request + " HTTP/1.1\r\nHost: ingest\r\nContent-Length: " + std::to_string(kBody) +
                                    "\r\n\r\n", kBody, &alone);
    CHECK(o.status == status);
    CHECK(o.answered_early());
    CHECK(o.body.find("{\"error\":") == 0);
  }
}

TEST_CASE("issue 22: 16 authenticated 80 MiB pushes against --max-inflight-body-bytes 200MiB: the rest get 503") {
  const uint64_t limit = 200u << 20;
  Cluster c({"--max-body", "96MiB", "--max-inflight-body-bytes", "200MiB"}, /*start_services=*/false);
  c.StartIngest();
  INFO(c.Logs());
  REQUIRE(c.Push(PushBody({{"A.md", "# A\n\nwarm\n"}})).status == 200);
  RssSampler rss(c.ingest_pid());
  auto outcomes = Flood(PortOf(c.ingest_url()), {PushHead(std::string("Authorization: Bearer ") + kToken + "\r\n")});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  rss.Stop();
  const uint64_t after = rss.now();
  MESSAGE("ingest RSS, 16 authenticated 80 MiB pushes, 200 MiB in flight at most: start " << MiB(rss.start())
          << " MiB, peak " << MiB(rss.peak()) << " MiB, after " << MiB(after) << " MiB");
  int admitted = 0, busy = 0;
  for (const UploadOutcome& o : outcomes) {
    if (o.status == 503) {
      ++busy;
      CHECK(o.answered_early());
      CHECK(o.Header("Retry-After") == "1");
      CHECK(o.body.find("\"unavailable\"") != std::string::npos);
      CHECK(o.body.find("in flight") != std::string::npos);
      CHECK(o.body.find("200.0 MiB") != std::string::npos);
    } else {
      ++admitted;
      CHECK(o.status == 400);  // admitted, read whole: the junk is not JSON
      CHECK(o.sent == kBody);
    }
  }
  MESSAGE(admitted << " admitted, " << busy << " refused with 503");
  CHECK(admitted >= 1);
  CHECK(busy >= 1);
  const std::string base = c.ingest_url();
  const double peak = Scrape(base, "folio_http_body_bytes_in_flight_peak");
  CHECK(peak >= static_cast<double>(kBody));
  CHECK(peak <= static_cast<double>(limit));  // two 80 MiB bodies at once at most
  CHECK(Scrape(base, "folio_http_body_bytes_in_flight") == 0);
  CHECK(Scrape(base, "folio_http_body_budget_bytes") == static_cast<double>(limit));
  CHECK(Scrape(base, "folio_http_body_budget_refusals_total") == busy);
  if (kPlainMalloc) {
    CHECK(rss.peak() < rss.start() + limit);
    CHECK(after < rss.start() + (20u << 20));
  }
}

TEST_CASE("issue 22: folio-storage refuses unauthenticated uploads before their body, and busy ones with 503") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage({"--max-inflight-body-bytes", "8MiB"});
  INFO(c.Logs());
  const int port = PortOf(c.storage_url());
  auto put_head = [](const std::string& authorization, int i, uint64_t length = kBody) {
    return "PUT /objects/flood/" + std::to_string(i) + " HTTP/1.1\r\nHost: storage\r\n" + authorization +
           "Content-Length: " + std::to_string(length) + "\r\n\r\n";
  };
  RssSampler rss(c.storage_pid());
  auto refused = Flood(port, {put_head("", 0), put_head("Authorization: Bearer wrong\r\n", 1)});
  rss.Stop();
  MESSAGE("storage RSS, 16 unauthenticated 80 MiB uploads: start " << MiB(rss.start()) << " MiB, peak "
          << MiB(rss.peak()) << " MiB");
  for (const UploadOutcome& o : refused) {
    CHECK(o.status == 401);
    CHECK(o.answered_early());
    CHECK(o.Header("WWW-Authenticate") == "Bearer");
  }
  CHECK(rss.peak() < rss.start() + (20u << 20));

  // Eight 16 MiB uploads with the write token: each holds ~2 MiB of its body
  // while it streams to disk, so 8 MiB admits three at once; the rest are
  // told to come back.
  const uint64_t upload = 16u << 20;
  std::vector<std::string> heads;
  for (int i = 0; i < 8; ++i) {
    heads.push_back(put_head("Authorization: Bearer " + c.storage_write_token() + "\r\n", i, upload));
  }
  auto outcomes = Flood(port, heads, 8, upload);
  int stored = 0, busy = 0;
  for (const UploadOutcome& o : outcomes) {
    if (o.status == 503) {
      ++busy;
      CHECK(o.answered_early());
      CHECK(o.Header("Retry-After") == "1");
    } else {
      CHECK(o.status == 201);
      ++stored;
    }
  }
  MESSAGE(stored << " uploads stored, " << busy << " refused with 503");
  CHECK(stored >= 1);
  CHECK(busy >= 1);
  CHECK(Scrape(c.storage_url(), "folio_http_body_bytes_in_flight_peak") <= 8 << 20);
}
