// Fault test (issue 10): folio on a real 3-node JetStream cluster. ingest,
// two edges and search get all three URLs and --nats-replicas 3; the node
// leading the pages stream (KV_pages) is SIGKILLed between two pushes.
// Both edges must serve every page of both pushes, search must index both,
// nothing may be lost (the bucket holds exactly what the edges hold), and
// the killed node, restarted, must catch up with the others.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <map>
#include <string>
#include <vector>

#include "../integration/cluster.h"
#include "../integration/test_util.h"
#include "folio/bus/bus.h"
#include "folio/http/client.h"
#include "folio/testing/feed.h"

using namespace folio;
using namespace folio::it;

namespace {

constexpr int kNotes = 12;  // per push
const char* const kStreams[] = {"KV_pages", "notes", "related"};

struct StreamView {
  std::string leader;
  int replicas = 0;
  uint64_t messages = 0;
  uint64_t last_seq = 0;
};

// What one node's /jsz says about folio's streams (empty if it does not answer).
std::map<std::string, StreamView> Streams(testing::NatsServer& node) {
  std::map<std::string, StreamView> out;
  std::string body = node.Monitor("/jsz?streams=true&config=true");
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  simdjson::dom::array accounts;
  if (body.empty() || p.parse(body).get(doc) || doc["account_details"].get_array().get(accounts)) return out;
  for (simdjson::dom::element acc : accounts) {
    simdjson::dom::array streams;
    if (acc["stream_detail"].get_array().get(streams)) continue;
    for (simdjson::dom::element s : streams) {
      std::string_view name, leader;
      StreamView v;
      if (s["name"].get_string().get(name)) continue;
      if (!s["cluster"]["leader"].get_string().get(leader)) v.leader = leader;
      int64_t r = 0;
      if (!s["config"]["num_replicas"].get_int64().get(r)) v.replicas = static_cast<int>(r);
      if (s["state"]["messages"].get_uint64().get(v.messages)) v.messages = 0;
      if (s["state"]["last_seq"].get_uint64().get(v.last_seq)) v.last_seq = 0;
      out[std::string(name)] = v;
    }
  }
  return out;
}

std::string NotePath(const std::string& batch, int i) { return "Cluster/" + batch + std::to_string(i) + ".md"; }
std::string NoteUrl(const std::string& batch, int i) { return "/cluster/" + batch + std::to_string(i); }

// kNotes notes, each with the batch's unique word.
std::string Batch(const std::string& batch, const std::string& word) {
  std::vector<std::pair<std::string, std::string>> notes;
  for (int i = 0; i < kNotes; ++i) {
    notes.push_back({NotePath(batch, i), "# " + batch + " " + std::to_string(i) + "\n\nThe " + word + " note " +
                                             batch + std::to_string(i) + ".\n"});
  }
  return PushBody(notes);
}

double ServiceMetric(const std::string& base, const std::string& series) {
  auto r = http::Get(base + "/metrics");
  return r.ok() && r->status == 200 ? Metric(r->body, series) : -1;
}

// Every note of `batch` is served by both edges with its text.
void CheckServed(Cluster& c, const std::string& batch) {
  for (const std::string& edge : {c.edge_url(), c.edge2_url()}) {
    for (int i = 0; i < kNotes; ++i) {
      CAPTURE(edge);
      CAPTURE(NoteUrl(batch, i));
      CHECK(Cluster::WaitForPageOn(edge, NoteUrl(batch, i), 200, batch + std::to_string(i), 30000).status == 200);
    }
  }
}

// Search's full-text index finds every note of `batch` by its word.
bool SearchFinds(Cluster& c, const std::string& batch, const std::string& word) {
  auto r = http::Get(c.search_url() + "/api/v1/search?site=default&mode=text&k=50&q=" + word);
  if (!r.ok() || r->status != 200) return false;
  for (int i = 0; i < kNotes; ++i) {
    if (r->body.find("\"" + NoteUrl(batch, i) + "\"") == std::string::npos) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("faults: a 3-node NATS cluster loses its KV_pages leader; nothing is lost or stopped, it catches up") {
  testing::NatsCluster nats(3);
  Cluster c(nats.urls(), {"--nats-replicas", "3"});
  c.StartIngest();
  c.StartEdge();
  c.StartEdge2();
  c.StartSearch();
  INFO(c.Logs());
  REQUIRE(testing::WaitForHttp(c.ingest_url() + "/readyz", 200, 30000));

  REQUIRE(c.Push(Batch("a", "zebracorn")).status == 200);
  CheckServed(c, "a");
  CHECK(Eventually([&] { return SearchFinds(c, "a", "zebracorn"); }, 30000));

  // Every stream has 3 replicas; find the pages stream's leader.
  std::map<std::string, StreamView> before;
  double pages_a = -1;
  REQUIRE(Eventually([&] {
    before = Streams(nats.node(0));
    pages_a = ServiceMetric(c.edge_url(), "folio_edge_pages");
    return before.count("KV_pages") && !before["KV_pages"].leader.empty() && pages_a >= kNotes &&
           ServiceMetric(c.edge2_url(), "folio_edge_pages") == pages_a;
  }));
  for (const char* s : kStreams) {
    CAPTURE(s);
    CHECK(before[s].replicas == 3);
  }
  int victim = 0;
  for (int i = 0; i < nats.size(); ++i) {
    if (nats.node(i).server_name() == before["KV_pages"].leader) victim = i;
  }
  MESSAGE("killing " << nats.node(victim).server_name() << ", leader of KV_pages");
  nats.node(victim).Kill();

  // The second push is accepted, reaches both edges and search.
  REQUIRE(c.Push(Batch("b", "quokkafish")).status == 200);
  CheckServed(c, "b");
  CHECK(Eventually([&] { return SearchFinds(c, "b", "quokkafish"); }, 60000));
  // Nothing lost: the first push is still served; search holds both.
  CheckServed(c, "a");
  CHECK(Eventually([&] { return SearchFinds(c, "a", "zebracorn"); }, 30000));
  CHECK(Eventually([&] { return ServiceMetric(c.search_url(), "folio_search_notes") == 2 * kNotes; }, 30000));
  CHECK(Eventually([&] { return ServiceMetric(c.ingest_url(), "folio_ingest_outbox_pending{site=\"default\"}") == 0; }, 30000));

  // Both edges hold every page of both pushes.
  int survivor = (victim + 1) % nats.size();
  double pages = -1;
  CHECK(Eventually([&] {
    pages = ServiceMetric(c.edge_url(), "folio_edge_pages");
    return pages >= pages_a + kNotes && ServiceMetric(c.edge2_url(), "folio_edge_pages") == pages;
  }, 30000));
  // Each edge applied everything: no lag; the bus is up and counted its
  // reconnect if it was on the killed node.
  for (const std::string& edge : {c.edge_url(), c.edge2_url()}) {
    CAPTURE(edge);
    CHECK(Eventually([&] { return ServiceMetric(edge, "folio_edge_bus_lag") == 0; }, 30000));
    CHECK(ServiceMetric(edge, "folio_bus_connected") == 1);
    CHECK(ServiceMetric(edge, "folio_edge_applied_revision") > 0);
  }
  for (const std::string& svc : {c.ingest_url(), c.search_url()}) {
    CHECK(ServiceMetric(svc, "folio_bus_connected") == 1);
    CHECK(ServiceMetric(svc, "folio_bus_reconnects_total") >= 0);
  }

  // The killed node comes back and catches up: its streams match the others'.
  nats.node(victim).Start();
  CHECK(nats.WaitHealthy(60000));
  CHECK(Eventually([&] {
    auto back = Streams(nats.node(victim));
    auto other = Streams(nats.node(survivor));
    for (const char* s : kStreams) {
      if (!back.count(s) || !other.count(s)) return false;
      if (back[s].messages != other[s].messages || back[s].last_seq != other[s].last_seq) return false;
    }
    return true;
  }, 60000));

  // The page feed, read from the cluster once it is whole again, as a fresh
  // edge reads it (packs and snapshots, bus/page_pack.h), holds exactly the
  // pages the edges hold: no message lost. Read once, with the cluster
  // settled: a watcher torn down while NATS.c resets its ordered consumer
  // after a lost node is the NATS.c 3.4.1 trap the edge never meets (it
  // keeps its watcher for its lifetime).
  bus::BusOptions o;
  o.url = nats.node(survivor).url();
  auto b = bus::Bus::Connect(o);
  REQUIRE(b.ok());
  auto feed = testing::ReadFeed(b->get(), "default", 30000);
  REQUIRE(feed.ok());
  CHECK(static_cast<double>(feed->records.size()) == pages);
  MESSAGE("edge pages " << pages << ", pages on the feed " << feed->records.size());
}
