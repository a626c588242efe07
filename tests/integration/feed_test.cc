// The page feed in packs and snapshots (issue 26): pushes, changes,
// deletions (410) and redirects (301) travel as packs; once the packs
// outgrow the site, ingest publishes a snapshot and purges the packs before
// it; a FRESH edge then replays the snapshot and the packs after it and
// answers every URL exactly as the running edge does. A removed site's
// pages leave a running edge and the bucket.
// Real nats-server, folio-ingest and two folio-edge processes.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "cluster.h"
#include "folio/bus/bus.h"
#include "folio/bus/page_pack.h"
#include "folio/bus/page_schema.h"
#include "folio/testing/feed.h"
#include "folio/testing/testing.h"

using namespace folio;
using namespace folio::it;

namespace {

std::unique_ptr<bus::Bus> Connect(Cluster& c) {
  bus::BusOptions o;
  o.url = c.nats().url();
  o.name = "feed_test";
  auto b = bus::Bus::Connect(o);
  REQUIRE_MESSAGE(b.ok(), b.status().ToString());
  return std::move(*b);
}

// A decoded URL path as a request target: bytes outside ASCII and spaces
// percent-encoded.
std::string Target(const std::string& url) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : url) {
    if (ch <= 0x20 || ch >= 0x7f || ch == '%' || ch == '#') {
      out += '%';
      out += hex[ch >> 4];
      out += hex[ch & 15];
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

// folio_ingest_feed_snapshots_total, summed over sites.
double Snapshots(Cluster& c) {
  auto m = http::Get(c.ingest_url() + "/metrics");
  double n = 0;
  if (!m.ok()) return -1;
  const std::string name = "folio_ingest_feed_snapshots_total";
  for (size_t at = m->body.find("\n" + name); at != std::string::npos; at = m->body.find("\n" + name, at + 1)) {
    size_t sp = m->body.find(' ', at + 1);
    if (sp != std::string::npos) n += std::stod(m->body.substr(sp + 1));
  }
  return n;
}

// Pushes edits of one note until ingest has published one more snapshot.
void EditUntilSnapshot(Cluster& c) {
  const double before = Snapshots(c);
  for (int i = 0; i < 30; ++i) {
    std::string body(4000 + 100 * i, 'x');
    REQUIRE(c.Push(PushBody({{"Churn.md", "# Churn " + std::to_string(i) + "\n\n" + body + "\n"}})).status == 200);
    if (Snapshots(c) > before) return;
  }
  FAIL("no snapshot after 30 pushes");
}

// Every URL answers on edge2 exactly as on the edge; the 301s seen.
int CompareEdges(Cluster& c, const std::vector<std::string>& urls) {
  int redirects = 0;
  for (const std::string& url : urls) {
    auto one = c.EdgeGet(Target(url));
    auto two = http::Get(c.edge2_url() + Target(url));
    REQUIRE(two.ok());
    CHECK_MESSAGE(one.status == two->status, url);
    CHECK_MESSAGE(one.body == two->body, url);
    CHECK_MESSAGE(one.Header("Location") == two->Header("Location"), url);
    CHECK_MESSAGE(one.Header("ETag") == two->Header("ETag"), url);
    if (one.status == 301) ++redirects;
  }
  return redirects;
}

}  // namespace

TEST_CASE("feed: a fresh edge after a snapshot answers every URL as the running edge") {
  Cluster c({"--feed-snapshot-bytes", "1"});
  INFO(c.Logs());
  REQUIRE(c.Push(PushBody({{"Welcome.md", "---\naliases: [Old Welcome]\n---\n# Welcome\n\nSee [[Second]] and [[Gone]].\n"},
                           {"Second.md", "# Second\n\nBack to [[Welcome]].\n"},
                           {"Gone.md", "# Gone\n\nSoon deleted.\n"},
                           {"Caps Note.md", "# Caps\n"},
                           {"Unicode/Заметка.md", "# Заметка\n"}}))
              .status == 200);
  REQUIRE(c.WaitForPage("/second", 200, "Second").status == 200);
  auto b = Connect(c);

  // A deletion (410) before the snapshot, packs until one, then changes after it.
  REQUIRE(c.Push(PushBody({}, {"Gone.md"})).status == 200);
  REQUIRE(c.WaitForPage("/gone", 410).status == 410);
  EditUntilSnapshot(c);
  REQUIRE(c.Push(PushBody({{"Second.md", "# Second v2\n\nBack to [[Welcome]].\n"}}, {"Caps Note.md"})).status == 200);
  REQUIRE(c.WaitForPage("/second", 200, "Second v2").status == 200);
  REQUIRE(c.WaitForPage("/caps-note", 410).status == 410);

  // The bucket: the snapshot's chunks first, then only packs after it.
  auto feed = testing::ReadFeed(b.get(), "default");
  REQUIRE(feed.ok());
  REQUIRE(!feed->keys.empty());
  CHECK(feed->keys.front().rfind("default.s.", 0) == 0);
  for (size_t i = feed->snapshots; i < feed->keys.size(); ++i) {
    CHECK_MESSAGE(feed->keys[i].rfind("default.p.", 0) == 0, feed->keys[i]);
  }
  CHECK(feed->snapshots >= 1);

  c.StartEdge2();
  REQUIRE(testing::WaitForHttp(c.edge2_url() + "/readyz", 200, 10000));
  REQUIRE(Cluster::WaitForPageOn(c.edge2_url(), "/second", 200, "Second v2").status == 200);
  std::vector<std::string> urls;
  for (const auto& [url, record] : feed->records) urls.push_back(url);
  for (const char* extra : {"/no-such-page", "/gone", "/caps-note", "/Caps-Note"}) urls.push_back(extra);
  CHECK(feed->records.count("/gone") == 1);  // a 410 page
  CHECK(feed->records.count("/_folio/404") == 1);
  const int redirects = CompareEdges(c, urls);
  CHECK(redirects > 0);  // the alias, /old-welcome
  CHECK(c.EdgeGet("/old-welcome").status == 301);
  CHECK(c.EdgeGet("/gone").status == 410);
  CHECK(c.EdgeGet("/no-such-page").status == 404);
}

TEST_CASE("feed: removing a site drops its pages from a running edge and from the bucket") {
  Cluster c({}, /*start_services=*/false);
  std::string out, err;
  REQUIRE(c.RunIngest({"site", "add", "a", "--host", "a.example"}, &out, &err) == 0);
  std::string token_a = out.substr(0, out.find('\n'));
  c.StartIngest();
  c.StartEdge();
  INFO(c.Logs());
  REQUIRE(c.Push(PushBody({{"Alpha.md", "# Alpha on A\n"}}), token_a).status == 200);
  REQUIRE(c.Push(PushBody({{"Gamma.md", "# Gamma on default\n"}})).status == 200);
  REQUIRE(c.WaitForPageAt("a.example", "/alpha", 200, "Alpha on A").status == 200);
  REQUIRE(c.WaitForPage("/gamma", 200).status == 200);
  auto pages = [&] {
    auto m = c.EdgeGet("/metrics");
    auto at = m.body.find("\nfolio_edge_pages ");
    return at == std::string::npos ? -1.0 : std::stod(m.body.substr(at + 18));
  };
  auto b = Connect(c);
  auto a_feed = testing::ReadFeed(b.get(), "a");
  REQUIRE(a_feed.ok());
  REQUIRE(!a_feed->records.empty());
  const double all = pages();
  auto default_feed = testing::ReadFeed(b.get(), "default");
  REQUIRE(default_feed.ok());
  CHECK(all == static_cast<double>(a_feed->records.size() + default_feed->records.size()));

  REQUIRE(c.RunIngest({"site", "remove", "a"}, &out, &err) == 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pages() != static_cast<double>(default_feed->records.size()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(pages() == static_cast<double>(default_feed->records.size()));
  // The bucket holds nothing of it any more, not even its version marker.
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    auto now = testing::ReadFeed(b.get(), "a");
    REQUIRE(now.ok());
    if (now->keys.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(testing::ReadFeed(b.get(), "a")->keys.empty());
  CHECK(b->KvGet(bus::kPagesBucket, "_meta.a").status().code() == Code::kNotFound);
  CHECK(c.WaitForPage("/gamma", 200).status == 200);

  // Added again: ingest publishes its stored pages again.
  REQUIRE(c.RunIngest({"site", "add", "a", "--host", "a.example"}, &out, &err) == 0);
  CHECK(c.WaitForPageAt("a.example", "/alpha", 200, "Alpha on A", 15000).status == 200);
}

TEST_CASE("feed: a blob page (the bundled mermaid in storage) replays after a snapshot") {
  Cluster c({"--feed-snapshot-bytes", "1"}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.StartIngest();
  c.StartEdge();
  INFO(c.Logs());
  REQUIRE(c.Push(PushBody({{"Diagram.md", "# Diagram\n\n```mermaid\ngraph TD; A-->B;\n```\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/diagram", 200, "mermaid").status == 200);
  EditUntilSnapshot(c);
  auto b = Connect(c);
  auto feed = testing::ReadFeed(b.get(), "default");
  REQUIRE(feed.ok());
  std::vector<std::string> urls, blobs;
  for (const auto& [url, record] : feed->records) {
    urls.push_back(url);
    bus::PageRecord r;
    REQUIRE(bus::DecodePageRecord(record, &r).ok());
    if (!r.body_blob.empty()) blobs.push_back(url);
  }
  if (blobs.empty()) {
    MESSAGE("skipped the blob check: no bundled mermaid.min.js next to the binaries");
  }
  c.StartEdge2();
  REQUIRE(testing::WaitForHttp(c.edge2_url() + "/readyz", 200, 10000));
  REQUIRE(Cluster::WaitForPageOn(c.edge2_url(), "/churn", 200).status == 200);
  CompareEdges(c, urls);
  for (const std::string& url : blobs) CHECK_MESSAGE(c.EdgeGet(url).status == 200, url);
}

TEST_CASE("feed: ingest moves a site still in per-page keys to a snapshot and purges those keys") {
  Cluster c;
  INFO(c.Logs());
  REQUIRE(c.Push(PushBody({{"One.md", "# One\n\n[[Two]]\n"}, {"Two.md", "# Two\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/two", 200, "Two").status == 200);
  c.StopIngest();
  auto b = Connect(c);
  auto now = testing::ReadFeed(b.get(), "default");
  REQUIRE(now.ok());
  const std::map<std::string, std::string> records = now->records;
  // What an ingest of the layout before packs left: a key per page, no packs.
  REQUIRE(b->PurgeStream("KV_pages", bus::PackSubjects("default"), 0).ok());
  REQUIRE(b->PurgeStream("KV_pages", bus::SnapshotSubjects("default"), 0).ok());
  for (const auto& [url, record] : records) REQUIRE(b->KvPutAsync(bus::kPagesBucket, bus::PageKey("default", url), record).ok());
  REQUIRE(b->WaitForAcks(5000).ok());

  c.StartIngest();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  testing::FeedPages feed;
  for (;;) {
    auto f = testing::ReadFeed(b.get(), "default");
    REQUIRE(f.ok());
    feed = *f;
    // The snapshot first, then the purge of the per-page keys.
    const bool moved = feed.snapshots > 0 && feed.keys.size() == static_cast<size_t>(feed.snapshots);
    if (moved || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(feed.snapshots > 0);
  std::string site, url;
  for (const std::string& k : feed.keys) CHECK_MESSAGE(!bus::ParsePageKey(k, &site, &url), k);
  CHECK(feed.records == records);
  // Running and fresh edges agree.
  c.StartEdge2();
  REQUIRE(testing::WaitForHttp(c.edge2_url() + "/readyz", 200, 10000));
  std::vector<std::string> urls;
  for (const auto& [u, r] : records) urls.push_back(u);
  CompareEdges(c, urls);
  CHECK(c.EdgeGet("/two").status == 200);
}

TEST_CASE("feed: packs fit a server whose max payload is smaller than a pack") {
  testing::TempDir dir;
  const int port = testing::FreePort(), monitor = testing::FreePort();
  std::ofstream(dir.path() + "/nats.conf") << "listen: 127.0.0.1:" << port << "\nhttp: 127.0.0.1:" << monitor
                                           << "\nmax_payload: 65536\njetstream { store_dir: \"" << dir.path()
                                           << "/js\" }\n";
  testing::Process nats({"nats-server", "-c", dir.path() + "/nats.conf"}, {}, dir.path() + "/nats.log");
  REQUIRE(testing::WaitForHttp("http://127.0.0.1:" + std::to_string(monitor) + "/healthz?js-enabled-only=true", 200,
                               10000));
  Cluster c("nats://127.0.0.1:" + std::to_string(port), {});
  c.StartIngest();
  c.StartEdge();
  INFO(c.Logs());
  // ~100 notes of ~2 KiB: far more than one 64 KiB message.
  std::vector<std::pair<std::string, std::string>> notes;
  for (int i = 0; i < 100; ++i) {
    notes.push_back({"N" + std::to_string(i) + ".md", "# N" + std::to_string(i) + "\n\n" + std::string(2000, 'a' + i % 26) + "\n"});
  }
  REQUIRE(c.Push(PushBody(notes)).status == 200);
  for (int i : {0, 50, 99}) CHECK(c.WaitForPage("/n" + std::to_string(i), 200).status == 200);
  bus::BusOptions o;
  o.url = "nats://127.0.0.1:" + std::to_string(port);
  auto b = bus::Bus::Connect(o);
  REQUIRE(b.ok());
  CHECK((*b)->max_payload() == 65536);
  auto feed = testing::ReadFeed(b->get(), "default");
  REQUIRE(feed.ok());
  for (int i = 0; i < 100; ++i) CHECK(feed->records.count("/n" + std::to_string(i)) == 1);
  CHECK(feed->keys.size() > 3);  // several packs, none refused
}
