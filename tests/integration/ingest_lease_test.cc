// Issue 23: one writer per deployment, and an ingest that restores itself.
// Two real folio-ingest processes on one real nats-server -js (each with its
// own SQLite data): the one holding the lease in KV bucket
// folio_ingest_lease writes; the other answers every write 503 not_leader
// naming the holder (with Retry-After) and /readyz 503 "not leader (held by
// X)", takes over once the leader is SIGKILLed and its lease goes
// --lease-ttl without a renew, and the old leader comes back as the
// standby. --restore-from-storage: an ingest started on an empty --data
// restores the newest backup signed by its key from folio-storage, serves
// the site's pages, and a re-push changes only what the backup lacked; with
// no backups it starts empty; with backups none of which it can verify (or
// no key for them) it refuses to start.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <signal.h>
#include <sys/wait.h>

#include "cluster.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"
#include "json_util.h"
#include "test_util.h"

using namespace folio;
using namespace folio::it;

namespace {

namespace fs = std::filesystem;

// Short lease times keep the test quick; the rule is the same at 10s/2s.
const std::vector<std::string> kLeaseArgs{"--lease-ttl", "3s", "--lease-renew", "500ms"};
constexpr int kTtlMs = 3000, kRenewMs = 500;

http::ClientResponse Get(const std::string& url) {
  auto r = http::Get(url);
  return r.ok() ? *r : http::ClientResponse{};
}

http::ClientResponse PushTo(const std::string& base, const std::string& body) {
  http::ClientRequest req;
  req.method = "POST";
  req.url = base + "/api/v1/push";
  req.body = body;
  req.headers.emplace_back("Authorization", std::string("Bearer ") + kToken);
  req.headers.emplace_back("Content-Type", "application/json");
  auto r = http::Fetch(req);
  return r.ok() ? *r : http::ClientResponse{};
}

// A second folio-ingest on the cluster's NATS, with data of its own.
// Its probes and /metrics on --admin-listen, as in deploy/k8s.
std::unique_ptr<testing::Process> StartSecondIngest(Cluster& c, int port, int admin_port, const std::string& instance) {
  std::vector<std::string> argv{testing::BinPath("folio-ingest"), "--listen", "127.0.0.1:" + std::to_string(port),
                                "--admin-listen", "127.0.0.1:" + std::to_string(admin_port),
                                "--nats", c.nats().url(), "--data", c.dir() + "/ingest-b", "--token", kToken,
                                "--site-name", "Test Site", "--instance", instance};
  argv.insert(argv.end(), kLeaseArgs.begin(), kLeaseArgs.end());
  auto p = std::make_unique<testing::Process>(argv, std::vector<std::string>{}, c.dir() + "/ingest-b.log");
  REQUIRE(testing::WaitForHttp("http://127.0.0.1:" + std::to_string(admin_port) + "/livez", 200, 10000));
  return p;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void CheckNotLeader(const http::ClientResponse& r, const std::string& holder) {
  CHECK(r.status == 503);
  CHECK(r.body.find("\"not_leader\"") != std::string::npos);
  CHECK(r.body.find(holder) != std::string::npos);
  CHECK(r.Header("Retry-After") == "3");
}

}  // namespace

TEST_CASE("issue 23: one writer: the standby answers 503 not_leader, takes over after a SIGKILL, the old leader follows") {
  Cluster c(kLeaseArgs, /*start_services=*/false);
  c.StartIngest();  // instance "it-ingest"
  const std::string a = c.ingest_url();
  REQUIRE(Eventually([&] { return Get(a + "/readyz").status == 200; }));
  REQUIRE(PushTo(a, PushBody({{"One.md", "# One\n"}})).status == 200);

  const int b_port = testing::FreePort(), b_admin_port = testing::FreePort();
  const std::string b = "http://127.0.0.1:" + std::to_string(b_port);
  const std::string b_admin = "http://127.0.0.1:" + std::to_string(b_admin_port);
  auto proc_b = StartSecondIngest(c, b_port, b_admin_port, "ingest-b");
  INFO(c.Logs());
  INFO(ReadAll(c.dir() + "/ingest-b.log"));
  // Its first look at the lease, once connected.
  REQUIRE(Eventually([&] { return Get(b_admin + "/readyz").body.find("held by it-ingest") != std::string::npos; }));
  CheckNotLeader(PushTo(b, PushBody({{"Two.md", "# Two\n"}})), "it-ingest");
  auto ready = Get(b_admin + "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body.find("not leader (held by it-ingest)") != std::string::npos);
  CHECK(Metric(Get(b_admin + "/metrics").body, "folio_ingest_leader") == 0);
  CHECK(Metric(Get(a + "/metrics").body, "folio_ingest_leader") == 1);
  CHECK(fs::exists(c.dir() + "/ingest-b/ingest.db") == false);  // a standby leaves --data closed
  CHECK(PushTo(a, PushBody({{"Two.md", "# Two\n"}})).status == 200);  // the leader still writes

  const auto killed = std::chrono::steady_clock::now();
  c.StopIngest(9);
  REQUIRE(Eventually([&] { return Get(b_admin + "/readyz").status == 200; }, 20000));
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed).count();
  CAPTURE(took);
  CHECK(took >= kTtlMs - kRenewMs);          // not before the lease ran out
  CHECK(took <= kTtlMs + 2 * kRenewMs + 3000);  // TTL + renew (+ a busy machine's slack)
  auto pushed = PushTo(b, PushBody({{"Three.md", "# Three\n"}}));
  CHECK(pushed.status == 200);
  CHECK(Metric(Get(b_admin + "/metrics").body, "folio_ingest_leader") == 1);

  // A again: the follower now, naming B.
  c.StartIngest();
  REQUIRE(Eventually([&] { return Get(a + "/readyz").body.find("held by ingest-b") != std::string::npos; }));
  CheckNotLeader(PushTo(a, PushBody({{"Four.md", "# Four\n"}})), "ingest-b");
  CHECK(PushTo(b, PushBody({{"Four.md", "# Four\n"}})).status == 200);

  // A graceful stop releases the lease: A takes over at its next check.
  proc_b->Stop(15);
  CHECK(Eventually([&] { return Get(a + "/readyz").status == 200; }, kTtlMs));
}

TEST_CASE("issue 23: a leader frozen past its TTL writes nothing when it wakes, and exits 75 for a restart") {
  Cluster c(kLeaseArgs, /*start_services=*/false);
  c.StartIngest();
  const std::string a = c.ingest_url();
  REQUIRE(Eventually([&] { return Get(a + "/readyz").status == 200; }));
  const int b_port = testing::FreePort(), b_admin_port = testing::FreePort();
  const std::string b = "http://127.0.0.1:" + std::to_string(b_port);
  auto proc_b = StartSecondIngest(c, b_port, b_admin_port, "ingest-b");
  INFO(c.Logs());
  INFO(ReadAll(c.dir() + "/ingest-b.log"));

  // A stalls (a long GC pause, a frozen VM): no renews; B takes over.
  kill(c.ingest_pid(), SIGSTOP);
  REQUIRE(Eventually([&] { return PushTo(b, PushBody({{"B.md", "# B\n"}})).status == 200; }, 20000));
  kill(c.ingest_pid(), SIGCONT);
  // Its window has passed: refused at once (or, if its lease thread has
  // already learnt it was taken over, the port is closing): never written.
  auto late = PushTo(a, PushBody({{"A.md", "# A\n"}}));
  CHECK(late.status != 200);
  if (late.status != 0) CheckNotLeader(late, "");  // the holder: known once its lease thread has looked
  REQUIRE(Eventually([&] { return c.Logs().find("lease taken over by another ingest") != std::string::npos; }));
  int status = c.StopIngest(0);  // signal 0: waits (5 s) for it to exit by itself
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 75);
}

namespace {

std::vector<std::string> Cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("issue 23: --restore-from-storage restores the newest signed backup into an empty --data") {
  Cluster c(kLeaseArgs, /*start_services=*/false);
  c.StartStorage();
  const std::string key = c.dir() + "/backup-key";  // the Secret's file, outside --data
  {
    std::ofstream(key) << "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";
  }
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  c.AddIngestArgs(Cat(c.IngestStorageArgs(), {"--backup-key-file", key, "--restore-from-storage"}));

  // Nothing in storage yet: starts empty, and says so.
  c.StartIngest();
  INFO(c.Logs());
  REQUIRE(Eventually([&] { return Get(c.ingest_url() + "/readyz").status == 200; }));
  CHECK(c.Logs().find("no backups yet; starting empty") != std::string::npos);
  const auto notes = std::vector<std::pair<std::string, std::string>>{{"A.md", "# A\n\nalpha\n"},
                                                                     {"B.md", "# B\n\nbeta\n"}};
  REQUIRE(c.Push(PushBody(notes)).status == 200);
  std::string out, err;
  REQUIRE(c.RunIngest(Cat({"backup", "--backup-key-file", key}, c.IngestStorageArgs()), &out, &err) == 0);
  REQUIRE(c.Push(PushBody({{"C.md", "# C\n\ngamma\n"}})).status == 200);  // after the backup

  c.StopIngest(9);
  fs::remove_all(c.ingest_data_dir());
  c.StartIngest();
  REQUIRE(Eventually([&] { return Get(c.ingest_url() + "/readyz").status == 200; }));
  CHECK(c.Logs().find("restored from storage") != std::string::npos);
  c.StartEdge();
  CHECK(c.WaitForPage("/a", 200, "alpha", 15000).status == 200);
  CHECK(c.WaitForPage("/b", 200, "beta", 15000).status == 200);
  // The re-push changes only what the backup lacked.
  auto again = c.Push(PushBody({{"A.md", "# A\n\nalpha\n"}, {"B.md", "# B\n\nbeta\n"}, {"C.md", "# C\n\ngamma\n"}}));
  INFO(again.body);
  REQUIRE(again.status == 200);
  CHECK(JsonInt(again.body, "changed") == 1);
  CHECK(c.WaitForPage("/c", 200, "gamma", 15000).status == 200);

  // Backups there, none signed by this key: refuse to start empty.
  c.StopIngest(9);
  fs::remove_all(c.ingest_data_dir());
  {
    std::ofstream(key, std::ios::trunc) << "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210\n";
  }
  std::vector<std::string> argv{testing::BinPath("folio-ingest"), "--listen",
                                "127.0.0.1:" + std::to_string(testing::FreePort()), "--nats", c.nats().url(),
                                "--data", c.ingest_data_dir(), "--token", kToken, "--instance", "it-refuse",
                                "--lease-ttl", "0"};
  argv = Cat(argv, Cat(c.IngestStorageArgs(), {"--backup-key-file", key, "--restore-from-storage"}));
  testing::Process refused(argv, {}, c.dir() + "/refused.log");
  int status = -1;
  CHECK(Eventually([&] { return !refused.Running(); }, 15000));
  status = refused.Stop(15);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) != 0);
  std::string log = ReadAll(c.dir() + "/refused.log");
  CHECK(log.find("--restore-from-storage") != std::string::npos);
  CHECK(log.find("signed") != std::string::npos);
  CHECK(!fs::exists(c.ingest_data_dir() + "/ingest.db"));

  // Backups there and no key at all: refuse too (a new key would verify none).
  const std::string missing = c.dir() + "/no-such-key";
  for (std::string& a : argv) {
    if (a == key) a = missing;
  }
  testing::Process keyless(argv, {}, c.dir() + "/keyless.log");
  CHECK(Eventually([&] { return !keyless.Running(); }, 15000));
  status = keyless.Stop(15);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) != 0);
  log = ReadAll(c.dir() + "/keyless.log");
  CHECK(log.find("only the key which signed them can verify") != std::string::npos);
  CHECK(!fs::exists(missing));
}
