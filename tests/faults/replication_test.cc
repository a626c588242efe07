// Fault test (issue 23): lose any one machine and lose nothing. A whole
// replicated deployment on loopback: 3 nats-server nodes (JetStream,
// --nats-replicas 3), 3 folio-storage replicas, 2 folio-search replicas,
// folio-ingest (--restore-from-storage) and 2 edges, each edge and ingest
// given all three storage URLs. A vault of 200 attachments (some over
// 1 MiB) is pushed with the CLI and backed up; then, under a steady read
// load of pages, assets and searches on both edges, one machine at a time
// is lost:
//   1. a storage replica is SIGKILLed and its data directory deleted (and
//      it is started again, empty);
//   2. a NATS node is SIGKILLed (and started again);
//   3. a search replica is SIGKILLed;
//   4. ingest is SIGKILLed and its data directory deleted; it is started
//      with --restore-from-storage and the author re-pushes with the CLI.
// Asserts: no asset read answered with anything but its bytes, no page read
// failed, searches answered throughout; no acknowledged blob lost; the
// wiped storage replica refilled its own journal; after the re-push every
// URL on both edges has the ETag it had before the failures.
#include <doctest/doctest.h>
#include <strings.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../integration/cluster.h"
#include "../integration/test_util.h"
#include "folio/core/hash.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"

using namespace folio;
using namespace folio::it;

namespace {

constexpr int kAttachments = 200;
constexpr int kLarge = 8;  // of them over 1 MiB
constexpr int kNotes = 40;  // each embeds 5 attachments
constexpr const char* kSiteToken = kToken;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

http::ClientResponse Get(const std::string& url, std::vector<std::pair<std::string, std::string>> headers = {},
                         int64_t timeout_ms = 10000) {
  http::ClientRequest req;
  req.url = url;
  req.headers = std::move(headers);
  req.timeout_ms = timeout_ms;
  auto r = http::Fetch(req);
  return r.ok() ? *r : http::ClientResponse{};
}

double MetricAt(const std::string& base, const std::string& series) {
  return Metric(Get(base + "/metrics").body, series);
}

// One process of the deployment, with its port, data dir and log.
struct Node {
  std::string name;
  int port = testing::FreePort();
  std::string data;
  std::string log;
  std::vector<std::string> argv;  // without --listen/--data
  std::unique_ptr<testing::Process> proc;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  void Start() {
    proc.reset();
    std::vector<std::string> a = argv;
    a.insert(a.begin() + 1, {"--listen", "127.0.0.1:" + std::to_string(port)});
    if (!data.empty()) a.insert(a.begin() + 3, {"--data", data});
    proc = std::make_unique<testing::Process>(a, std::vector<std::string>{}, log);
  }
  void Kill() {
    if (proc) proc->Stop(9, 5000);
    proc.reset();
  }
  void Wipe() { std::filesystem::remove_all(data); }
};

struct Deployment {
  testing::TempDir dir;
  testing::NatsCluster nats{3};
  std::vector<Node> storage{3}, search{2};
  Node ingest, edge1, edge2;
  std::string key_file;

  std::string storage_urls() const {
    std::string s;
    for (const Node& n : storage) s += (s.empty() ? "" : ",") + n.url();
    return s;
  }
  std::vector<std::string> Bus() const { return {"--nats", nats.urls(), "--nats-replicas", "3"}; }

  Deployment() {
    key_file = dir.path() + "/backup.key";
    for (size_t i = 0; i < storage.size(); ++i) {
      Node& n = storage[i];
      n.name = "storage" + std::to_string(i);
      n.data = dir.path() + "/" + n.name;
      n.log = dir.path() + "/" + n.name + ".log";
      n.argv = {testing::BinPath("folio-storage"), "--replicated", "--write-token", kStorageWriteToken, "--read-token",
                kStorageReadToken, "--io-threads", "2"};
      for (auto& a : Bus()) n.argv.push_back(a);
    }
    for (size_t i = 0; i < search.size(); ++i) {
      Node& n = search[i];
      n.name = "search" + std::to_string(i);
      n.data = dir.path() + "/" + n.name;
      n.log = dir.path() + "/" + n.name + ".log";
      n.argv = {testing::BinPath("folio-search"), "--replica-id", n.name, "--query-threads", "1"};
      for (auto& a : Bus()) n.argv.push_back(a);
    }
    ingest.name = "ingest";
    ingest.data = dir.path() + "/ingest";
    ingest.log = dir.path() + "/ingest.log";
    ingest.argv = {testing::BinPath("folio-ingest"), "--token", kSiteToken, "--storage", storage_urls(),
                   "--storage-token", kStorageWriteToken, "--backup-key-file", key_file,
                   "--restore-from-storage", "--mermaid-url=",
                   // The lease holder's name, as a StatefulSet pod's: the restarted process takes the
                   // lease its predecessor held at once, not after the lease's TTL.
                   "--instance", "ingest-0"};
    for (auto& a : Bus()) ingest.argv.push_back(a);
    int e = 1;
    for (Node* n : {&edge1, &edge2}) {
      n->name = "edge" + std::to_string(e++);
      n->log = dir.path() + "/" + n->name + ".log";
      // A small asset cache: most asset reads go to storage.
      n->argv = {testing::BinPath("folio-edge"), "--storage", storage_urls(), "--storage-token", kStorageReadToken,
                 "--asset-cache", "1MiB"};
      for (auto& a : Bus()) n->argv.push_back(a);
    }
  }

  std::string Logs() const {
    std::string all;
    for (const Node* n : {&storage[0], &storage[1], &storage[2], &search[0], &search[1], &ingest, &edge1, &edge2}) {
      std::string text = Slurp(n->log);
      if (text.size() > 6000) text = "...\n" + text.substr(text.size() - 6000);
      all += "--- " + n->name + "\n" + text;
    }
    return all;
  }
};

bool Ready(const Node& n, int timeout_ms) { return testing::WaitForHttp(n.url() + "/readyz", 200, timeout_ms); }

struct Asset {
  std::string file;  // in the vault's media/
  std::string sha;
  std::string url;  // /assets/<16>/<file>
};

// The read load: pages, assets and searches on both edges, round robin,
// each answer checked. Retries inside the edge are fine; an error page, a
// wrong byte or a failed search counts.
class ReadLoad {
 public:
  ReadLoad(std::vector<std::string> edges, std::vector<std::string> pages, std::vector<Asset> assets)
      : edges_(std::move(edges)), pages_(std::move(pages)), assets_(std::move(assets)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~ReadLoad() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint64_t reads() const { return reads_; }
  uint64_t asset_reads() const { return asset_reads_; }
  uint64_t searches() const { return searches_; }
  uint64_t errors() const { return errors_; }
  std::string first_errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return first_errors_;
  }

 private:
  void Fail(const std::string& what) {
    ++errors_;
    std::lock_guard<std::mutex> lock(mu_);
    if (first_errors_.size() < 4000) first_errors_ += what + "\n";
  }
  void Run() {
    size_t i = 0;
    while (!stop_) {
      const std::string& edge = edges_[i % edges_.size()];
      const Asset& a = assets_[i % assets_.size()];
      auto r = Get(edge + a.url, {}, 15000);
      ++asset_reads_;
      if (r.status != 200 || Sha256Hex(r.body) != a.sha) {
        Fail(edge + a.url + " -> " + std::to_string(r.status) + " (" + std::to_string(r.body.size()) + " bytes)");
      }
      const std::string& page = pages_[i % pages_.size()];
      r = Get(edge + page, {}, 15000);
      if (r.status != 200) Fail(edge + page + " -> " + std::to_string(r.status));
      if (i % 4 == 0) {
        r = Get(edge + "/_/search?q=attachment&mode=text", {}, 15000);
        ++searches_;
        if (r.status != 200) Fail(edge + " search -> " + std::to_string(r.status) + " " + r.body.substr(0, 200));
      }
      ++reads_;
      ++i;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  std::vector<std::string> edges_, pages_;
  std::vector<Asset> assets_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> reads_{0}, asset_reads_{0}, searches_{0}, errors_{0};
  std::mutex mu_;
  std::string first_errors_;
  std::thread thread_;
};

// Every URL of the site (GET /api/v1/export, all pages of it).
std::vector<std::string> SiteUrls(const std::string& ingest) {
  std::vector<std::string> urls;
  std::string after;
  for (int guard = 0; guard < 1000; ++guard) {
    auto r = Get(ingest + "/api/v1/export" + (after.empty() ? "" : "?after=" + after),
                 {{"Authorization", std::string("Bearer ") + kSiteToken}});
    REQUIRE(r.status == 200);
    size_t pos = r.body.find("\"urls\":[");
    REQUIRE(pos != std::string::npos);
    size_t end = r.body.find(']', pos);
    std::string list = r.body.substr(pos + 8, end - pos - 8);
    for (size_t q = list.find('"'); q != std::string::npos; q = list.find('"', q + 1)) {
      size_t close = list.find('"', q + 1);
      urls.push_back(list.substr(q + 1, close - q - 1));
      q = close;
    }
    size_t next = r.body.find("\"next\":\"");
    if (next == std::string::npos) break;
    after = r.body.substr(next + 8, r.body.find('"', next + 8) - next - 8);
    if (after.empty()) break;
  }
  return urls;
}

// url -> ETag on one edge.
std::map<std::string, std::string> ETags(const std::string& edge, const std::vector<std::string>& urls) {
  std::map<std::string, std::string> out;
  for (const std::string& u : urls) {
    auto r = Get(edge + u, {{"Accept-Encoding", "gzip"}});
    std::string etag;
    for (const auto& [k, v] : r.headers) {
      if (strcasecmp(k.c_str(), "etag") == 0) etag = v;
    }
    out[u] = std::to_string(r.status) + " " + etag;
  }
  return out;
}

int RunCli(const std::vector<std::string>& args, std::string* out) {
  std::string cmd = testing::BinPath("folio");
  for (const auto& a : args) cmd += " '" + a + "'";
  return testing::RunShell(cmd + " 2>&1", out);
}

}  // namespace

TEST_CASE("faults: lose a storage replica, a NATS node, a search replica and ingest's disk; readers and authors "
          "lose nothing") {
  Deployment d;
  INFO("logs:\n" << d.Logs());
  for (Node& n : d.storage) n.Start();
  for (Node& n : d.storage) REQUIRE(Ready(n, 30000));
  for (Node& n : d.search) n.Start();
  d.ingest.Start();
  d.edge1.Start();
  d.edge2.Start();
  REQUIRE(Ready(d.ingest, 30000));
  REQUIRE(Ready(d.edge1, 30000));
  REQUIRE(Ready(d.edge2, 30000));

  // The vault: 200 attachments, 8 of them over 1 MiB, each embedded once.
  const std::string vault = d.dir.path() + "/vault";
  std::filesystem::create_directories(vault + "/media");
  std::vector<Asset> assets;
  for (int i = 0; i < kAttachments; ++i) {
    bool large = i < kLarge;
    std::string file = large ? "doc" + std::to_string(i) + ".pdf" : "img" + std::to_string(i) + ".png";
    std::string bytes = RandomBytes(large ? (1u << 20) + 300'000 + 10'000 * i : 2'000 + 97 * i, 1000 + i);
    WriteFile(vault + "/media/" + file, bytes);
    std::string sha = Sha256Hex(bytes);
    assets.push_back({file, sha, AssetPath(bytes, file)});
  }
  std::vector<std::string> pages;
  for (int n = 0; n < kNotes; ++n) {
    std::string text = "# Note " + std::to_string(n) + "\n\nAn attachment note.\n\n";
    for (int k = 0; k < kAttachments / kNotes; ++k) text += "![[" + assets[n * (kAttachments / kNotes) + k].file + "]]\n\n";
    WriteFile(vault + "/Note " + std::to_string(n) + ".md", text);
    pages.push_back("/note-" + std::to_string(n));
  }
  const std::vector<std::string> push{"push", vault, "--server", d.ingest.url(), "--token", kSiteToken};
  std::string out;
  int rc = RunCli(push, &out);
  INFO("push: " << out);
  REQUIRE(rc == 0);

  // Backed up (what --restore-from-storage will restore), then one note
  // changes: the backup lacks it, the re-push must bring it back.
  std::string backup_out;
  rc = testing::RunShell(testing::BinPath("folio-ingest") + " backup --data '" + d.ingest.data + "' --storage '" +
                             d.storage_urls() + "' --storage-token " + kStorageWriteToken + " --backup-key-file '" +
                             d.key_file + "' 2>&1",
                         &backup_out);
  INFO("backup: " << backup_out);
  REQUIRE(rc == 0);
  WriteFile(vault + "/Note 0.md", "# Note 0\n\nChanged after the backup.\n\n![[" + assets[0].file + "]]\n");
  REQUIRE(RunCli(push, &out) == 0);

  // Both edges serve every page; every asset reads back.
  for (const std::string& edge : {d.edge1.url(), d.edge2.url()}) {
    CHECK(Cluster::WaitForPageOn(edge, "/note-0", 200, "Changed after the backup", 30000).status == 200);
    for (const std::string& p : pages) CHECK(Cluster::WaitForPageOn(edge, p, 200, "", 30000).status == 200);
  }
  REQUIRE(Eventually([&] { return Get(d.edge1.url() + "/_/search?q=attachment&mode=text").status == 200; }, 60000));
  // Every URL of the site, and every attachment's (the export lists pages).
  const std::vector<std::string> site_urls = SiteUrls(d.ingest.url());
  REQUIRE(site_urls.size() >= static_cast<size_t>(kNotes));
  std::vector<std::string> urls = site_urls;
  for (const Asset& a : assets) urls.push_back(a.url);
  // Settled first: search indexes the push and publishes related lists, and
  // ingest re-renders the pages that show them; the state the failures must
  // not change is the one after that (two snapshots 1.5 s apart agree).
  auto before1 = ETags(d.edge1.url(), urls);
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    auto again = ETags(d.edge1.url(), urls);
    if (again == before1) break;
    before1 = std::move(again);
  }
  const auto before2 = ETags(d.edge2.url(), urls);
  for (const auto& [u, tag] : before1) {
    CAPTURE(u);
    CHECK(tag.rfind(u == "/_folio/404" ? "404 " : "200 ", 0) == 0);  // the site's own 404 page answers 404
  }

  ReadLoad load({d.edge1.url(), d.edge2.url()}, pages, assets);
  auto settle = [&](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
  };
  settle(1000);

  // 1. A storage replica and its disk.
  MESSAGE("1. storage2 SIGKILLed, data deleted, started empty");
  d.storage[2].Kill();
  d.storage[2].Wipe();
  settle(1500);
  auto t0 = Clock::now();
  d.storage[2].Start();
  REQUIRE(Ready(d.storage[2], 30000));
  MESSAGE("   the empty replica is ready in " << ms_since(t0) << " ms");
  CHECK(Eventually([&] { return MetricAt(d.storage[2].url(), "folio_storage_replica_missing_blobs") == 0 &&
                                MetricAt(d.storage[2].url(), "folio_storage_blobs") >= kAttachments; },
                   120000));
  MESSAGE("   and holds every blob after " << ms_since(t0) << " ms");

  // 2. A NATS node.
  MESSAGE("2. a NATS node SIGKILLed");
  d.nats.node(1).Kill();
  settle(3000);
  t0 = Clock::now();
  d.nats.node(1).Start();
  CHECK(d.nats.WaitHealthy(60000));
  MESSAGE("   the node is back and current after " << ms_since(t0) << " ms");

  // 3. A search replica.
  MESSAGE("3. search0 SIGKILLed");
  d.search[0].Kill();
  settle(3000);

  // 4. Ingest and its disk; it restores itself; the author re-pushes.
  MESSAGE("4. ingest SIGKILLed, data deleted, restarted with --restore-from-storage");
  d.ingest.Kill();
  d.ingest.Wipe();
  t0 = Clock::now();
  d.ingest.Start();
  REQUIRE(Ready(d.ingest, 60000));
  MESSAGE("   ingest restored and ready in " << ms_since(t0) << " ms");
  out.clear();
  t0 = Clock::now();
  rc = RunCli(push, &out);
  MESSAGE("   the re-push took " << ms_since(t0) << " ms: " << out);
  INFO("re-push: " << out);
  CHECK(rc == 0);
  for (const std::string& edge : {d.edge1.url(), d.edge2.url()}) {
    CHECK(Cluster::WaitForPageOn(edge, "/note-0", 200, "Changed after the backup", 30000).status == 200);
  }
  settle(2000);
  load.Stop();

  MESSAGE("reads " << load.reads() << ", asset reads " << load.asset_reads() << ", searches " << load.searches()
                   << ", errors " << load.errors());
  CHECK(load.asset_reads() > 100);
  CHECK(load.searches() > 20);
  CHECK_MESSAGE(load.errors() == 0, load.first_errors());

  // No acknowledged blob lost: every replica answers every blob's bytes.
  for (Node& s : d.storage) {
    for (const Asset& a : assets) {
      auto r = Get(s.url() + "/blobs/sha256/" + a.sha, {{"Authorization", std::string("Bearer ") + kStorageReadToken}});
      CAPTURE(s.name);
      CAPTURE(a.file);
      CHECK((r.status == 200 && Sha256Hex(r.body) == a.sha));
    }
  }
  // The wiped replica holds every blob in its own journal.
  CHECK(MetricAt(d.storage[2].url(), "folio_storage_replica_missing_blobs") == 0);

  // Every URL on both edges is as it was.
  CHECK(SiteUrls(d.ingest.url()) == site_urls);
  const auto after1 = ETags(d.edge1.url(), urls), after2 = ETags(d.edge2.url(), urls);
  int differ = 0;
  for (const auto& [u, tag] : before1) {
    if (after1.at(u) != tag || after2.at(u) != before2.at(u)) {
      if (++differ < 10) MESSAGE(u << ": " << tag << " -> " << after1.at(u) << " / " << after2.at(u));
    }
  }
  CHECK(differ == 0);
}
