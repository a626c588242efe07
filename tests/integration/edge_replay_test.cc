// A fresh folio-edge replaying a big pages bucket (issue 12, "edges that
// start in constant time"): a real nats-server -js, page records put
// straight into the KV bucket "pages" by this process (no ingest: the
// bucket is what an edge reads), and a real folio-edge process. What must
// hold:
//  - every page is served byte-identical to its record in both encodings,
//    with the record's ETag (and the -gz one), headers and status;
//  - puts and deletes made while the replay runs all apply, in order: the
//    final state equals the bucket's;
//  - the edge's /metrics shows the page bytes it holds next to its RSS.
// FOLIO_REPLAY_PAGES=N (default 3000) sizes the bucket; the replay time and
// RSS are printed (a measurement aid, never asserted).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "folio/bus/bus.h"
#include "folio/bus/page_pack.h"
#include "folio/bus/page_schema.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/core/time.h"
#include "folio/http/client.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/testing/testing.h"

using namespace folio;
using namespace std::chrono_literals;

namespace {

constexpr int kWaitMs = 120'000;  // generous: a slow, noisy machine, sanitizer builds

int PagesToReplay() {
  const char* n = std::getenv("FOLIO_REPLAY_PAGES");
  return n != nullptr && std::atoi(n) > 0 ? std::atoi(n) : 3000;
}

std::string Url(int i) { return "/bench/note_" + std::to_string(i); }

// A note page shaped like push-bench's notes, assembled by the real layout.
bus::PageRecord Record(int i, int version) {
  site::NotePage p;
  p.url = Url(i);
  p.title = "note_" + std::to_string(i);
  p.body_html = "<h1>Note " + std::to_string(i) + "</h1>\n<p>Revision " + std::to_string(version) +
                ". This note links to <a href=\"/bench/note_0\">note_0</a> and to <a href=\"/bench/note_" +
                std::to_string((i * 7919) % 100000) + "\">another</a>, and carries a little text so that it "
                "looks like a real one.</p>\n<ul><li>one</li><li>two</li><li>three</li></ul>\n"
                "<pre><code class=\"language-js\">const x = " + std::to_string(i) +
                ";\nconsole.log(x * 2);\n</code></pre>\n<p>A closing paragraph with a few more words.</p>\n";
  p.description = "Note " + std::to_string(i);
  p.updated = "2026-11-30";
  p.tags = {"bench"};
  p.backlinks = {{"note_0", "/bench/note_0", ""}};
  p.backlinks_total = 1;
  std::string html = site::AssembleNotePage(p);
  bus::PageRecord rec;
  rec.status = 200;
  rec.content_type = "text/html; charset=utf-8";
  rec.csp = site::PageCsp();
  rec.last_modified_s = 1'780'000'000 + i;
  rec.version = version;
  rec.etag = "\"" + Sha256Hex(html).substr(0, 32) + "\"";
  rec.body_gzip = GzipCompress(html);
  return rec;
}

std::unique_ptr<bus::Bus> Connect(const testing::NatsServer& nats) {
  bus::BusOptions o;
  o.url = nats.url();
  auto b = bus::Bus::Connect(o);
  REQUIRE_MESSAGE(b.ok(), b.status().message());
  REQUIRE((*b)->EnsureSchema().ok());
  return std::move(*b);
}

void Put(bus::Bus* b, int i, int version) {
  REQUIRE(b->KvPutAsync(bus::kPagesBucket, bus::PageKey("docs", Url(i)), bus::EncodePageRecord(Record(i, version))).ok());
}

// Pages [from, to) at `version` as packs of the page feed (issue 26), the
// key of each the index of its first page plus `key_base`.
void PutPacks(bus::Bus* b, int from, int to, int version, uint64_t key_base = 0) {
  std::optional<bus::PagePackWriter> w;
  int first = from;
  auto flush = [&] {
    if (!w) return;
    w->SetVersion(version);
    REQUIRE(b->KvPutAsync(bus::kPagesBucket, bus::PackKey("docs", key_base + static_cast<uint64_t>(first)), w->Finish()).ok());
    w.reset();
  };
  for (int i = from; i < to; ++i) {
    std::string rec = bus::EncodePageRecord(Record(i, version));
    if (w && w->size() + bus::PagePackWriter::OpSize(Url(i), rec) > bus::kMaxPack) flush();
    if (!w) {
      w.emplace(bus::PackHeader{});
      first = i;
    }
    w->Put(Url(i), rec);
  }
  flush();
}

// A snapshot of the pages `ids` at `version`, chunks of `per_chunk` pages.
void PutSnapshot(bus::Bus* b, const std::vector<int>& ids, int version, size_t per_chunk,
                 bus::PackKind kind = bus::PackKind::kSnapshot) {
  const auto chunks = static_cast<uint32_t>((ids.size() + per_chunk - 1) / per_chunk);
  for (uint32_t k = 0; k < chunks; ++k) {
    bus::PagePackWriter w(bus::PackHeader{kind, version, k, chunks});
    for (size_t j = k * per_chunk; j < ids.size() && j < (k + 1) * per_chunk; ++j) {
      w.Put(Url(ids[j]), bus::EncodePageRecord(Record(ids[j], version)));
    }
    REQUIRE(b->KvPutAsync(bus::kPagesBucket, bus::SnapshotKey("docs", version, k), w.Finish()).ok());
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One folio-edge on free ports (public and admin) against `nats`.
class Edge {
 public:
  explicit Edge(const testing::NatsServer& nats) : port_(testing::FreePort()), admin_(testing::FreePort()) {
    proc_ = std::make_unique<testing::Process>(
        std::vector<std::string>{testing::BinPath("folio-edge"), "--listen", Addr(port_), "--admin-listen",
                                 Addr(admin_), "--nats", nats.url(), "--site", "docs", "--threads", "2"},
        std::vector<std::string>{}, dir_.path() + "/edge.log");
  }
  // Waits until ready (the public port opens only after the replay); the
  // time from the process start, in ms, or -1.
  int64_t WaitReady() {
    if (!testing::WaitForHttp("http://" + Addr(admin_) + "/readyz", 200, kWaitMs)) return -1;
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count();
  }
  std::string PublicUrl(const std::string& path) const { return "http://" + Addr(port_) + path; }
  http::ClientResponse Get(const std::string& path, bool gzip) {
    http::ClientRequest req;
    req.url = PublicUrl(path);
    req.headers = {{"Accept-Encoding", gzip ? "gzip" : "identity"}};
    req.timeout_ms = 10'000;
    auto r = http::Fetch(req);
    return r.ok() ? *r : http::ClientResponse{};
  }
  // A sample's value from the admin port's /metrics, or -1.
  double Metric(const std::string& name) {
    http::ClientRequest req;
    req.url = "http://" + Addr(admin_) + "/metrics";
    auto r = http::Fetch(req);
    if (!r.ok()) return -1;
    std::istringstream in(r->body);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(name + " ", 0) == 0) return std::atof(line.c_str() + name.size() + 1);
    }
    return -1;
  }
  std::string Log() const { return ReadFile(dir_.path() + "/edge.log"); }
  // CPU seconds the edge has used (user + system; /proc/<pid>/stat).
  double CpuSeconds() const {
    std::string stat = ReadFile("/proc/" + std::to_string(proc_->pid()) + "/stat");
    std::istringstream in(stat.substr(stat.rfind(')') + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && in >> field; ++i) {
      if (i == 14 || i == 15) ticks += std::atof(field.c_str());  // utime, stime
    }
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  }

 private:
  static std::string Addr(int port) { return "127.0.0.1:" + std::to_string(port); }
  testing::TempDir dir_;
  int port_, admin_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::unique_ptr<testing::Process> proc_;
};

// Page `i` as served equals record `rec`, in both encodings.
void CheckServed(Edge& edge, int i, const bus::PageRecord& rec) {
  std::string html;
  REQUIRE(GzipDecompress(rec.body_gzip, &html).ok());
  auto plain = edge.Get(Url(i), false);
  REQUIRE_MESSAGE(plain.status == 200, Url(i));
  CHECK(plain.body == html);
  CHECK(plain.Header("ETag") == rec.etag);
  CHECK(plain.Header("Content-Length") == std::to_string(html.size()));
  CHECK(plain.Header("Content-Type") == rec.content_type);
  CHECK(plain.Header("Content-Security-Policy") == rec.csp);
  CHECK(plain.Header("Last-Modified") == HttpDate(rec.last_modified_s));
  CHECK(plain.Header("Cache-Control") == "public, max-age=0, must-revalidate");
  CHECK(plain.Header("Vary") == "Accept-Encoding");
  CHECK(plain.Header("X-Content-Type-Options") == "nosniff");
  CHECK(plain.Header("X-Frame-Options") == "SAMEORIGIN");
  auto gz = edge.Get(Url(i), true);
  REQUIRE(gz.status == 200);
  CHECK(gz.Header("Content-Encoding") == "gzip");
  CHECK(gz.body == rec.body_gzip);
  CHECK(gz.Header("ETag") == rec.etag.substr(0, rec.etag.size() - 1) + "-gz\"");
  CHECK(gz.Header("Content-Security-Policy") == rec.csp);
}

}  // namespace

TEST_CASE("a fresh edge replays a big bucket: every page served byte-identical, page bytes next to RSS") {
  testing::NatsServer nats;
  auto b = Connect(nats);
  const int n = PagesToReplay();
  for (int i = 0; i < n; ++i) Put(b.get(), i, 1);
  REQUIRE(b->WaitForAcks(kWaitMs).ok());

  Edge edge(nats);
  int64_t ready_ms = edge.WaitReady();
  REQUIRE_MESSAGE(ready_ms >= 0, "edge not ready:\n" << edge.Log());
  double cpu_s = edge.CpuSeconds();
  double rss = edge.Metric("process_resident_memory_bytes"), bytes = edge.Metric("folio_edge_page_bytes");
  CHECK(edge.Metric("folio_edge_pages") == n);
  CHECK(bytes > 0);
  MESSAGE("replay of " << n << " pages: ready in " << ready_ms << " ms (edge CPU " << cpu_s << " s); RSS " << rss / 1e6 << " MB, page bytes "
                       << bytes / 1e6 << " MB");
  // Every page when small, else a spread sample (the first, the last, and between).
  const int step = n <= 5000 ? 1 : n / 2000;
  for (int i = 0; i < n; i += step) CheckServed(edge, i, Record(i, 1));
  CheckServed(edge, n - 1, Record(n - 1, 1));
}

TEST_CASE("puts and deletes made during a replay apply in order: the edge ends at the bucket's state") {
  testing::NatsServer nats;
  auto b = Connect(nats);
  const int n = PagesToReplay();
  for (int i = 0; i < n; ++i) Put(b.get(), i, 1);
  REQUIRE(b->WaitForAcks(kWaitMs).ok());

  // While the edge replays: rewrite every 7th page twice (the last write
  // wins), delete every 11th (some after a rewrite, some rewritten after
  // their delete: every 77th comes back), add pages past the end.
  std::map<int, int> final_version;  // absent = deleted
  for (int i = 0; i < n + 50; ++i) {
    if (i < n) final_version[i] = 1;
  }
  Edge edge(nats);
  for (int round = 2; round <= 3; ++round) {
    for (int i = 0; i < n; i += 7) {
      Put(b.get(), i, round);
      final_version[i] = round;
    }
  }
  for (int i = 0; i < n; i += 11) {
    REQUIRE(b->KvDeleteAsync(bus::kPagesBucket, bus::PageKey("docs", Url(i))).ok());
    final_version.erase(i);
  }
  for (int i = 0; i < n; i += 77) {
    Put(b.get(), i, 4);
    final_version[i] = 4;
  }
  for (int i = n; i < n + 50; ++i) {
    Put(b.get(), i, 1);
    final_version[i] = 1;
  }
  REQUIRE(b->WaitForAcks(kWaitMs).ok());
  REQUIRE_MESSAGE(edge.WaitReady() >= 0, "edge not ready:\n" << edge.Log());

  // Applied in order: once the last write is visible, every other is too.
  auto last = edge.Get(Url(n + 49), false);
  for (int i = 0; i < 400 && last.status != 200; ++i) {
    std::this_thread::sleep_for(50ms);
    last = edge.Get(Url(n + 49), false);
  }
  REQUIRE(last.status == 200);
  CHECK(edge.Metric("folio_edge_pages") == static_cast<double>(final_version.size()));
  for (int i = 0; i < n + 50; ++i) {
    bool touched = i % 7 == 0 || i % 11 == 0 || i >= n;
    if (!touched && i % 97 != 0) continue;  // untouched pages: a sample
    auto it = final_version.find(i);
    if (it == final_version.end()) {
      CHECK_MESSAGE(edge.Get(Url(i), false).status == 404, Url(i));
    } else {
      CheckServed(edge, i, Record(i, it->second));
    }
  }
}

TEST_CASE("a fresh edge replays packs (issue 26): every page served byte-identical") {
  testing::NatsServer nats;
  auto b = Connect(nats);
  const int n = PagesToReplay();
  PutPacks(b.get(), 0, n, 1);
  REQUIRE(b->WaitForAcks(kWaitMs).ok());
  auto packs = b->StreamMessageCount("KV_pages");
  REQUIRE(packs.ok());
  CHECK(*packs < static_cast<uint64_t>(n) / 100 + 2);  // few, large messages

  Edge edge(nats);
  int64_t ready_ms = edge.WaitReady();
  REQUIRE_MESSAGE(ready_ms >= 0, "edge not ready:\n" << edge.Log());
  double cpu_s = edge.CpuSeconds();
  CHECK(edge.Metric("folio_edge_pages") == n);
  MESSAGE("replay of " << n << " pages in " << *packs << " packs: ready in " << ready_ms << " ms (edge CPU " << cpu_s
                       << " s); RSS " << edge.Metric("process_resident_memory_bytes") / 1e6 << " MB");
  const int step = n <= 5000 ? 1 : n / 2000;
  for (int i = 0; i < n; i += step) CheckServed(edge, i, Record(i, 1));
  CheckServed(edge, n - 1, Record(n - 1, 1));
}

TEST_CASE("snapshots on a running edge: one it has is skipped; one over pages it lagged on erases what it does not list") {
  testing::NatsServer nats;
  auto b = Connect(nats);
  PutPacks(b.get(), 0, 10, 3);
  REQUIRE(b->WaitForAcks(kWaitMs).ok());
  Edge edge(nats);
  REQUIRE_MESSAGE(edge.WaitReady() >= 0, "edge not ready:\n" << edge.Log());
  CHECK(edge.Metric("folio_edge_pages") == 10);
  const double updates = edge.Metric("folio_edge_updates_total");

  // A snapshot of a version the edge is at: skipped unread (its pages would
  // be version 2, older than what the edge serves).
  PutSnapshot(b.get(), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, 4);
  // Then a newer snapshot, as an edge that lagged past a purge meets it: it
  // lists pages 0..5 and 20 (6..9 were deleted by packs this edge missed).
  PutSnapshot(b.get(), {0, 1, 2, 3, 4, 5, 20}, 7, 3);
  REQUIRE(b->WaitForAcks(kWaitMs).ok());
  auto until = std::chrono::steady_clock::now() + 20s;
  while (edge.Get(Url(20), false).status != 200 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
  until = std::chrono::steady_clock::now() + 10s;
  while (edge.Metric("folio_edge_pages") != 7 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
  CHECK(edge.Metric("folio_edge_pages") == 7);
  CHECK(edge.Metric("folio_edge_updates_total") == updates + 7);  // the skipped snapshot applied nothing
  for (int i : {0, 1, 2, 3, 4, 5, 20}) CheckServed(edge, i, Record(i, 7));
  for (int i : {6, 7, 8, 9}) CHECK_MESSAGE(edge.Get(Url(i), false).status == 404, Url(i));

  // A pack after it applies as usual; a fresh edge replays all of it alike.
  PutPacks(b.get(), 30, 32, 8, 1000);
  REQUIRE(b->WaitForAcks(kWaitMs).ok());
  Edge fresh(nats);
  REQUIRE(fresh.WaitReady() >= 0);
  CheckServed(fresh, 31, Record(31, 8));
  CheckServed(fresh, 20, Record(20, 7));

  // A resync snapshot (ingest's store went back to a backup: version 5, below
  // the edges' 8) is applied all the same, and prunes.
  PutSnapshot(b.get(), {0, 1}, 5, 1, bus::PackKind::kResync);
  REQUIRE(b->WaitForAcks(kWaitMs).ok());
  for (Edge* e : {&edge, &fresh}) {
    until = std::chrono::steady_clock::now() + 10s;
    while (e->Metric("folio_edge_pages") != 2 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
    CHECK(e->Metric("folio_edge_pages") == 2);
    CheckServed(*e, 0, Record(0, 5));
    CHECK(e->Get(Url(20), false).status == 404);
  }
}
