// Related notes end to end: lists published on the stream "related" (as
// search does) are baked into pages by ingest and served by the edge;
// unchanged lists re-render nothing; renames and deletions reach the lists;
// the durable consumer catches up after ingest or NATS was down.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include "cluster.h"
#include "folio/bus/bus.h"
#include "folio/bus/related_schema.h"

using namespace folio;
using namespace folio::it;

namespace {

constexpr const char* kSite = "default";  // the cluster's --site

bus::RelatedList List(std::string path, std::vector<std::string> related, double score = 0.9) {
  bus::RelatedList l{std::move(path), {}};
  for (auto& r : related) l.related.push_back({std::move(r), score -= 0.1});
  return l;
}

// Publishes raw data on `subject` (JetStream-acknowledged), as search would.
void PublishRaw(Cluster& c, const std::string& subject, const std::string& data) {
  bus::BusOptions o;
  o.url = c.nats().url();
  o.name = "related-test";
  auto b = bus::Bus::Connect(o);
  REQUIRE(b.ok());
  REQUIRE((*b)->PublishAsync(subject, data).ok());
  Status acked = (*b)->WaitForAcks(5000);
  INFO(acked.message());
  REQUIRE(acked.ok());
}

void Publish(Cluster& c, std::vector<bus::RelatedList> lists, const std::string& site = kSite) {
  PublishRaw(c, bus::RelatedSubject(site), bus::EncodeRelatedUpdate({site, std::move(lists)}));
}

// The value of one series of ingest's /metrics ("name{labels}"), or -1.
double Metric(Cluster& c, const std::string& series) {
  auto r = http::Get(c.ingest_url() + "/metrics");
  if (!r.ok()) return -1;
  std::string want = series + " ";
  for (size_t at = 0; (at = r->body.find(want, at)) != std::string::npos; at += want.size()) {
    if (at == 0 || r->body[at - 1] == '\n') return std::strtod(r->body.c_str() + at + want.size(), nullptr);
  }
  return -1;
}

// Polls until the series reaches at least `min`; returns its last value.
double WaitForMetric(Cluster& c, const std::string& series, double min, int timeout_ms = 10000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  double v = Metric(c, series);
  while (v < min && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    v = Metric(c, series);
  }
  return v;
}

const std::string kApplied = "folio_ingest_related_updates_total{result=\"applied\"}";
const std::string kRerendered = std::string("folio_ingest_related_rerendered_total{site=\"") + kSite + "\"}";

// The page's related-notes section, "" if it has none.
std::string RelatedSection(const std::string& html) {
  size_t at = html.find("class=\"related\"");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</nav>", at) - at);
}

// Polls the edge until the page's related section satisfies `ok`.
std::string WaitForRelated(Cluster& c, const std::string& path, const std::function<bool(const std::string&)>& ok,
                           int timeout_ms = 10000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string section;
  do {
    auto r = c.EdgeGet(path);
    section = RelatedSection(r.body);
    if (r.status == 200 && ok(section)) return section;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  } while (std::chrono::steady_clock::now() < deadline);
  return section;
}

bool Has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

std::string ETag(Cluster& c, const std::string& path) { return c.EdgeGet(path).Header("ETag"); }

}  // namespace

TEST_CASE("related lists reach the pages; only pages whose list changed re-render") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Alpha.md", "# Alpha\n"}, {"Bravo.md", "# Bravo\n"}, {"Charlie.md", "# Charlie\n"},
                           {"Delta.md", "# Delta\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/delta", 200, "Delta").status == 200);
  INFO(c.Logs());
  CHECK(RelatedSection(c.EdgeGet("/alpha").body).empty());

  Publish(c, {List("Alpha.md", {"Bravo.md", "Charlie.md"}), List("Delta.md", {"Alpha.md"})});
  std::string alpha = WaitForRelated(c, "/alpha", [](const std::string& s) { return Has(s, "Charlie"); });
  CHECK(Has(alpha, "href=\"/bravo\""));
  CHECK(Has(alpha, ">Bravo<"));
  CHECK(Has(alpha, "href=\"/charlie\""));
  CHECK(alpha.find("Bravo") < alpha.find("Charlie"));  // best first
  CHECK(Has(WaitForRelated(c, "/delta", [](const std::string& s) { return Has(s, "Alpha"); }), "href=\"/alpha\""));
  CHECK(RelatedSection(c.EdgeGet("/bravo").body).empty());

  double applied = WaitForMetric(c, kApplied, 1);
  REQUIRE(applied >= 1);
  const double rerendered = Metric(c, kRerendered);
  CHECK(rerendered == 2);
  const std::string etag_alpha = ETag(c, "/alpha"), etag_bravo = ETag(c, "/bravo"), etag_delta = ETag(c, "/delta");

  // The same notes again, with other scores: applied, nothing re-rendered.
  Publish(c, {List("Alpha.md", {"Bravo.md", "Charlie.md"}, 0.5), List("Delta.md", {"Alpha.md"}, 0.4)});
  CHECK(WaitForMetric(c, kApplied, applied + 1) >= applied + 1);
  CHECK(Metric(c, kRerendered) == rerendered);
  CHECK(ETag(c, "/alpha") == etag_alpha);
  CHECK(ETag(c, "/delta") == etag_delta);

  // A new order: that page only.
  Publish(c, {List("Alpha.md", {"Charlie.md", "Bravo.md"}), List("Delta.md", {"Alpha.md"})});
  alpha = WaitForRelated(c, "/alpha", [](const std::string& s) { return s.find("Charlie") < s.find("Bravo"); });
  CHECK(alpha.find("Charlie") < alpha.find("Bravo"));
  CHECK(WaitForMetric(c, kRerendered, rerendered + 1) == rerendered + 1);
  CHECK(ETag(c, "/alpha") != etag_alpha);
  CHECK(ETag(c, "/delta") == etag_delta);
  CHECK(ETag(c, "/bravo") == etag_bravo);

  // A related note's new title reaches the pages that list it.
  REQUIRE(c.Push(PushBody({{"Charlie.md", "---\ntitle: Charlie Renamed\n---\n"}})).status == 200);
  alpha = WaitForRelated(c, "/alpha", [](const std::string& s) { return Has(s, "Charlie Renamed"); });
  CHECK(Has(alpha, "Charlie Renamed"));
  CHECK(ETag(c, "/delta") == etag_delta);

  // A deleted note leaves the lists.
  REQUIRE(c.Push(PushBody({}, {"Bravo.md"})).status == 200);
  alpha = WaitForRelated(c, "/alpha", [](const std::string& s) { return !Has(s, "Bravo"); });
  CHECK(!Has(alpha, "Bravo"));
  CHECK(Has(alpha, "Charlie Renamed"));
  CHECK(c.WaitForPage("/bravo", 410).status == 410);  // Gone
}

TEST_CASE("related updates sent while ingest is down are applied when it returns") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Alpha.md", "# Alpha\n"}, {"Bravo.md", "# Bravo\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/bravo", 200).status == 200);
  INFO(c.Logs());

  c.StopIngest();  // SIGTERM: the consumer thread stops with the rest
  CHECK(Has(c.Logs(), "folio-ingest stopped"));
  PublishRaw(c, bus::RelatedSubject(kSite), "{not json");                    // dropped, not stuck
  Publish(c, {List("Alpha.md", {"Bravo.md"})}, "nosuch");                    // a site not served here
  Publish(c, {List("Alpha.md", {"Bravo.md"}), List("Bravo.md", {"Alpha.md"})});
  c.StartIngest();

  CHECK(Has(WaitForRelated(c, "/alpha", [](const std::string& s) { return Has(s, "Bravo"); }, 15000), "Bravo"));
  CHECK(Has(WaitForRelated(c, "/bravo", [](const std::string& s) { return Has(s, "Alpha"); }), "href=\"/alpha\""));
  CHECK(WaitForMetric(c, "folio_ingest_related_updates_total{result=\"malformed\"}", 1) == 1);
  CHECK(WaitForMetric(c, "folio_ingest_related_updates_total{result=\"unknown_site\"}", 1) == 1);
  CHECK(Metric(c, kApplied) == 1);

  // Consumed once: another restart applies nothing again.
  c.StopIngest();
  c.StartIngest();
  REQUIRE(testing::WaitForHttp(c.ingest_url() + "/readyz", 200, 10000));  // connected to NATS
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));           // several fetches
  CHECK(Metric(c, kApplied) == 0);
  CHECK(Metric(c, kRerendered) == 0);
}

TEST_CASE("the related consumer survives a NATS restart") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Alpha.md", "# Alpha\n"}, {"Bravo.md", "# Bravo\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/bravo", 200).status == 200);
  INFO(c.Logs());
  c.nats().Stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // fetches fail meanwhile
  c.nats().Start();
  Publish(c, {List("Alpha.md", {"Bravo.md"})});
  CHECK(Has(WaitForRelated(c, "/alpha", [](const std::string& s) { return Has(s, "Bravo"); }, 20000), "Bravo"));
}
