// The reader-facing search through the real thing: nats-server -js, a real
// folio-edge process, and a bus::Responder on "search.query" in this test
// process that answers with canned hits (standing in for folio-search).
// Checks the search page and fragment the edge assembles from the reply
// (escaping, <mark> snippets, site by Host), the query it forwards, bad
// input (400), the search service failing or missing (503), timing out (504),
// the in-flight bound (503), the one retry of an unanswered request (issue
// 23), and that published pages carry the search box.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include "folio/bus/bus.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/search_schema.h"
#include "folio/bus/site_schema.h"
#include "folio/core/gzip.h"
#include "folio/http/client.h"
#include "folio/site/layout.h"
#include "folio/site/search_page.h"
#include "folio/testing/testing.h"

using namespace folio;
using namespace std::chrono_literals;

namespace {

bool Has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

// One folio-edge on a free port against `nats`, with extra flags.
class Edge {
 public:
  Edge(testing::NatsServer& nats, std::vector<std::string> extra = {}) : port_(testing::FreePort()) {
    std::vector<std::string> argv{testing::BinPath("folio-edge"), "--listen", "127.0.0.1:" + std::to_string(port_),
                                  "--nats", nats.url(), "--threads", "2"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    proc_ = std::make_unique<testing::Process>(argv, std::vector<std::string>{}, dir_.path() + "/edge.log");
    // Ready = the pages bucket is replayed, so the NATS connection is up.
    if (!testing::WaitForHttp(Url("/readyz"), 200, 15000)) FAIL("edge not ready:\n" << Log());
  }
  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  http::ClientResponse Get(const std::string& path, std::vector<std::pair<std::string, std::string>> headers = {},
                           const std::string& method = "GET", int64_t timeout_ms = 10'000) {
    http::ClientRequest req;
    req.method = method;
    req.url = Url(path);
    req.headers = std::move(headers);
    req.timeout_ms = timeout_ms;
    auto r = http::Fetch(req);
    return r.ok() ? *r : http::ClientResponse{};
  }
  std::string Log() const {
    std::ifstream in(dir_.path() + "/edge.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  testing::TempDir dir_;
  int port_;
  std::unique_ptr<testing::Process> proc_;
};

// The stand-in for folio-search: canned answers by query text, and a record
// of what the edge sent.
class FakeSearch {
 public:
  explicit FakeSearch(bus::Bus* bus) {
    auto r = bus::Responder::Start(bus, bus::kSearchQuerySubject, "search",
                                   [this](std::string_view, std::string_view data) { return Answer(data); });
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    responder_ = std::move(*r);
  }
  bus::SearchQuery last() {
    std::lock_guard<std::mutex> l(mu_);
    return last_;
  }
  int calls() const { return calls_.load(); }
  // Waits until no handler has run for 300 ms (a slow one finished, and so
  // did the edge's retry of it, queued behind it and started the moment it
  // ended: a single idle instant is not enough). At most 10 s.
  void WaitIdle() {
    int idle_polls = 0;
    for (int i = 0; i < 1000 && idle_polls < 30; ++i) {
      idle_polls = busy_.load() ? 0 : idle_polls + 1;
      std::this_thread::sleep_for(10ms);
    }
  }

 private:
  std::string Answer(std::string_view data) {
    busy_ = true;
    ++calls_;
    bus::SearchQuery q;
    bus::SearchReply reply;
    if (Status s = bus::DecodeSearchQuery(data, &q); !s.ok()) {
      reply.error = "bad query: " + s.message();
      reply.code = Code::kInvalidArgument;
    } else {
      {
        std::lock_guard<std::mutex> l(mu_);
        last_ = q;
      }
      if (q.q == "slow") std::this_thread::sleep_for(1200ms);
      // The first one is swallowed (answered after the edge gave up on it).
      if (q.q == "slow-once" && !slept_once_.exchange(true)) std::this_thread::sleep_for(1300ms);
      if (q.q == "broken") {
        reply.error = "The index is being rebuilt <soon>";
        reply.code = Code::kUnavailable;
      } else if (q.q != "nothing") {
        reply.hits = {{"Notes/Alpha & <Beta>.md", "/notes/alpha & <beta>", "Alpha & <Beta>",
                       "the <mark>alpha</mark> &amp; &lt;beta&gt; note", 0.9},
                      {"b.md", "/b", "Second", "second <mark>alpha</mark>", 0.5}};
        reply.took_us = 1234;
      }
    }
    busy_ = false;
    return bus::EncodeSearchReply(reply);
  }

  std::mutex mu_;
  bus::SearchQuery last_;  // GUARDED_BY(mu_)
  std::atomic<int> calls_{0};
  std::atomic<bool> busy_{false};
  std::atomic<bool> slept_once_{false};
  std::unique_ptr<bus::Responder> responder_;
};

std::unique_ptr<bus::Bus> Connect(testing::NatsServer& nats) {
  bus::BusOptions o;
  o.url = nats.url();
  o.name = "edge-search-test";
  auto b = bus::Bus::Connect(o);
  REQUIRE_MESSAGE(b.ok(), b.status().message());
  REQUIRE((*b)->EnsureSchema().ok());
  return std::move(*b);
}

void PutPage(bus::Bus* b, const std::string& site, const std::string& url, uint16_t status, const std::string& html) {
  bus::PageRecord rec;
  rec.status = status;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"" + std::to_string(std::hash<std::string>{}(html)) + "\"";
  rec.body_gzip = GzipCompress(html);
  REQUIRE(b->KvPutAsync(bus::kPagesBucket, bus::PageKey(site, url), bus::EncodePageRecord(rec)).ok());
  REQUIRE(b->WaitForAcks(5000).ok());
}

void CheckSearchHeaders(const http::ClientResponse& r) {
  CHECK(r.Header("Content-Type") == "text/html; charset=utf-8");
  CHECK(r.Header("Cache-Control") == "no-store");
  CHECK(r.Header("Content-Security-Policy") == site::SearchPageCsp());
}

}  // namespace

TEST_CASE("edge search: results from a real NATS responder, escaped, as a page and as a fragment") {
  testing::NatsServer nats;
  auto b = Connect(nats);
  FakeSearch search(b.get());
  Edge edge(nats);
  INFO(edge.Log());

  auto r = edge.Get("/_/search?q=alpha");
  REQUIRE(r.status == 200);
  CheckSearchHeaders(r);
  CHECK(r.body.rfind("<!doctype html>", 0) == 0);
  CHECK(Has(r.body, "<meta name=\"robots\" content=\"noindex\">"));
  CHECK(Has(r.body, "value=\"alpha\""));
  CHECK(Has(r.body, "<li><a href=\"/notes/alpha%20%26%20%3Cbeta%3E\">Alpha &amp; &lt;Beta&gt;</a>"
                    "<p class=\"snippet\">the <mark>alpha</mark> &amp; &lt;beta&gt; note</p></li>"));
  CHECK(Has(r.body, "<li><a href=\"/b\">Second</a><p class=\"snippet\">second <mark>alpha</mark></p></li>"));
  CHECK(Has(r.body, "2 results for <q>alpha</q> (1.2 ms)"));
  CHECK(!Has(r.body, "<Beta>"));
  CHECK(Has(r.body, "<script>"));
  bus::SearchQuery q = search.last();
  CHECK(q.site == "default");
  CHECK(q.q == "alpha");
  CHECK(q.k == 20);
  CHECK(q.mode == bus::SearchMode::kHybrid);

  r = edge.Get("/_/search?q=+alpha+%C3%A9&mode=text&k=5&fragment=1");
  REQUIRE(r.status == 200);
  CheckSearchHeaders(r);
  CHECK(r.body.rfind("<section id=\"search-results\"", 0) == 0);
  CHECK(!Has(r.body, "<!doctype"));
  CHECK(!Has(r.body, "<script"));
  CHECK(Has(r.body, "<mark>alpha</mark>"));
  q = search.last();
  CHECK(q.q == "alpha é");
  CHECK(q.k == 5);
  CHECK(q.mode == bus::SearchMode::kText);

  r = edge.Get("/_/search?q=nothing");
  CHECK(r.status == 200);
  CHECK(Has(r.body, "No results for <q>nothing</q>."));

  // format=json, as the header's search box on every page asks (issue 27).
  r = edge.Get("/_/search?q=alpha&k=8&format=json");
  REQUIRE(r.status == 200);
  CHECK(r.Header("Content-Type") == "application/json");
  CHECK(r.Header("Cache-Control") == "no-store");
  CHECK(r.body ==
        "{\"query\":\"alpha\",\"mode\":\"hybrid\",\"hits\":["
        "{\"title\":\"Alpha & <Beta>\",\"url\":\"/notes/alpha%20%26%20%3Cbeta%3E\",\"path\":\"Notes/Alpha & <Beta>.md\","
        "\"breadcrumb\":\"Notes\",\"snippet\":\"the <mark>alpha</mark> &amp; &lt;beta&gt; note\",\"score\":0.9},"
        "{\"title\":\"Second\",\"url\":\"/b\",\"path\":\"b.md\",\"snippet\":\"second <mark>alpha</mark>\",\"score\":0.5}],"
        "\"took_us\":1234}");
  CHECK(search.last().k == 8);
  r = edge.Get("/_/search?q=nothing&format=json");
  CHECK(r.status == 200);
  CHECK(Has(r.body, "\"hits\":[]"));
  r = edge.Get("/_/search?q=broken&format=json");
  CHECK(r.status == 503);
  CHECK(r.Header("Content-Type") == "application/json");
  CHECK(Has(r.body, "\"code\":\"unavailable\""));
  CHECK(Has(r.body, "The index is being rebuilt <soon>"));

  r = edge.Get("/_/search?q=broken");
  CHECK(r.status == 503);
  CHECK(Has(r.body, "role=\"alert\">The index is being rebuilt &lt;soon&gt;</p>"));

  r = edge.Get("/_/search?q=alpha", {}, "HEAD");
  CHECK(r.status == 200);
  CHECK(r.body.empty());
  CHECK(r.Header("Cache-Control") == "no-store");

  // No query: the page and its box, without asking search.
  int calls = search.calls();
  r = edge.Get("/_/search");
  CHECK(r.status == 200);
  CHECK(Has(r.body, "role=\"search\""));
  CHECK(search.calls() == calls);

  {
    INFO("bad input is 400 with the page naming the problem, and search is not asked");
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"/_/search?q=%FF%FE", "not valid UTF-8"},
        {"/_/search?q=" + std::string(1025, 'x'), "too long"},
        {"/_/search?q=alpha&mode=semantic", "Unknown search mode"},
        {"/_/search?q=alpha&k=0", "k must be"},
        {"/_/search?q=alpha&k=51", "k must be"},
        {"/_/search?q=%E0%A4", "not valid UTF-8"},
        {"/_/search?q=50%", "malformed"},
    };
    for (const auto& [path, message] : cases) {
      CAPTURE(path);
      auto bad = edge.Get(path);
      CHECK(bad.status == 400);
      CHECK(bad.Header("Content-Type") == "text/html; charset=utf-8");
      CHECK(Has(bad.body, message));
      CHECK(Has(bad.body, "role=\"search\""));
    }
    auto frag = edge.Get("/_/search?q=%FF&fragment=1");
    CHECK(frag.status == 400);
    CHECK(frag.body.rfind("<section", 0) == 0);
    CHECK(search.calls() == calls);
  }

  {
    INFO("the Host picks the site searched and named; published pages carry the search box");
    bus::SiteRecord rec{"docs", {"docs.example"}, "Docs Site", {}};
    REQUIRE(b->KvPutAsync(bus::kPagesBucket, bus::SiteKey("docs"), bus::EncodeSiteRecord(rec)).ok());
    site::NotePage note;
    note.site.name = "Docs <Site>";
    note.url = "/note";
    note.title = "A note";
    note.body_html = "<p>Body</p>";
    note.related = {{"Related & one", "/related one", ""}};
    // The 404 page first: once /note is served, the name is known too.
    PutPage(b.get(), "docs", "/_folio/404", 404, site::Assemble404Page("Docs <Site>"));
    PutPage(b.get(), "docs", "/note", 200, site::AssembleNotePage(note));

    http::ClientResponse page;
    for (int i = 0; i < 200; ++i) {
      page = edge.Get("/note", {{"Host", "docs.example"}});
      if (page.status == 200) break;
      std::this_thread::sleep_for(25ms);
    }
    REQUIRE(page.status == 200);
    CHECK(Has(page.body, "<form class=\"search-box\" role=\"search\" action=\"/_/search\" method=\"get\">"));
    CHECK(Has(page.body, "<input type=\"search\" name=\"q\""));
    CHECK(Has(page.body, "<nav class=\"related\" aria-label=\"Related notes\">"));
    CHECK(Has(page.body, "<a href=\"/related%20one\">Related &amp; one</a>"));

    auto s = edge.Get("/_/search?q=alpha", {{"Host", "docs.example:8081"}});
    CHECK(s.status == 200);
    CHECK(search.last().site == "docs");
    CHECK(Has(s.body, "<a class=\"site-name site-body-left-column-site-name\" href=\"/\">Docs &lt;Site&gt;</a>"));
  }

  {
    INFO("issue 29: the search page speaks the site's language, which the edge reads off its 404 page");
    bus::SiteRecord rec{"russkiy", {"ru.example"}, "Russkiy", {}};
    REQUIRE(b->KvPutAsync(bus::kPagesBucket, bus::SiteKey("russkiy"), bus::EncodeSiteRecord(rec)).ok());
    site::SiteInfo info;
    info.name = "Заметки";
    info.lang = "ru";
    PutPage(b.get(), "russkiy", "/_folio/404", 404, site::Assemble404Page(info));
    http::ClientResponse s;
    for (int i = 0; i < 200; ++i) {
      s = edge.Get("/_/search?q=alpha", {{"Host", "ru.example"}});
      if (Has(s.body, "<html lang=\"ru\">")) break;
      std::this_thread::sleep_for(25ms);
    }
    CHECK(s.status == 200);
    CHECK(Has(s.body, "<html lang=\"ru\">"));
    CHECK(Has(s.body, "<h1>Поиск</h1>"));
    CHECK(Has(s.body, "2 результата по запросу <q>alpha</q>"));
    CHECK(Has(s.body, "placeholder=\"Поиск по заметкам\""));
    CHECK(!Has(s.body, "results for"));
    auto empty = edge.Get("/_/search", {{"Host", "ru.example"}});
    CHECK(Has(empty.body, "Введите в поле поиска то, что ищете."));
    auto none = edge.Get("/_/search?q=nothing&fragment=1", {{"Host", "ru.example"}});
    CHECK(Has(none.body, "Ничего не найдено по запросу <q>nothing</q>."));
  }
}

TEST_CASE("edge search: timeouts, a reader who leaves, the in-flight bound, and no search service") {
  testing::NatsServer nats;
  auto b = Connect(nats);
  auto search = std::make_unique<FakeSearch>(b.get());
  Edge edge(nats, {"--search-timeout-ms", "500", "--search-max-in-flight", "1"});
  INFO(edge.Log());

  // The search service answers too late: 504 (an upstream timeout, as
  // everywhere in folio) after the timeout, not after it.
  auto t0 = std::chrono::steady_clock::now();
  auto r = edge.Get("/_/search?q=slow");
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK(r.status == 504);
  CheckSearchHeaders(r);
  CHECK(Has(r.body, "Search is unavailable right now"));
  CHECK(took >= 400ms);
  CHECK(took < 1100ms);
  search->WaitIdle();

  // One search in flight fills the bound: the next is refused at once.
  auto slow = std::async(std::launch::async, [&] { return edge.Get("/_/search?q=slow"); });
  std::this_thread::sleep_for(150ms);
  r = edge.Get("/_/search?q=alpha");
  CHECK(r.status == 503);
  CHECK(r.Header("Retry-After") == "1");
  CHECK(Has(r.body, "Search is busy right now"));
  CHECK(slow.get().status == 504);
  search->WaitIdle();
  CHECK(edge.Get("/_/search?q=alpha").status == 200);  // the slot came back

  // A reader who gives up before the answer: the edge answers nobody and
  // goes on serving.
  r = edge.Get("/_/search?q=slow", {}, "GET", 100);
  CHECK(r.status == 0);
  std::this_thread::sleep_for(600ms);
  search->WaitIdle();
  CHECK(edge.Get("/_/search?q=alpha").status == 200);

  // No search service at all: 503 at once (NATS says no responders).
  search.reset();
  t0 = std::chrono::steady_clock::now();
  r = edge.Get("/_/search?q=alpha");
  CHECK(r.status == 503);
  CHECK(Has(r.body, "Search is unavailable right now"));
  CHECK(std::chrono::steady_clock::now() - t0 < 450ms);
  r = edge.Get("/_/search?q=alpha&fragment=1");
  CHECK(r.status == 503);
  CHECK(r.body.rfind("<section", 0) == 0);

  auto metrics = edge.Get("/metrics").body;
  CHECK(Has(metrics, "folio_edge_searches_total{outcome=\"timeout\"} 3"));
  CHECK(Has(metrics, "folio_edge_searches_total{outcome=\"overloaded\"} 1"));
  CHECK(Has(metrics, "folio_edge_searches_total{outcome=\"unavailable\"} 2"));
  CHECK(Has(metrics, "folio_edge_searches_total{outcome=\"ok\"} 2"));
  CHECK(Has(metrics, "folio_edge_search_seconds_count 7"));
}

TEST_CASE("edge search: an unanswered request is sent once more within the deadline, never twice (issue 23)") {
  testing::NatsServer nats;
  auto b = Connect(nats);
  FakeSearch search(b.get());
  Edge edge(nats, {"--search-timeout-ms", "2000"});
  INFO(edge.Log());

  // The first request goes unanswered for 1.3 s (a replica that died with
  // it, as far as the edge can tell); after 1 s (half the deadline) the edge
  // sends it again and the reader gets the answer.
  auto t0 = std::chrono::steady_clock::now();
  auto r = edge.Get("/_/search?q=slow-once");
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK(r.status == 200);
  CHECK(Has(r.body, "Second"));
  CHECK(took >= 1000ms);
  CHECK(took < 1900ms);
  search.WaitIdle();
  CHECK(search.calls() == 2);

  // Neither request answered in time: 504 at the deadline, after exactly two.
  t0 = std::chrono::steady_clock::now();
  r = edge.Get("/_/search?q=slow");
  took = std::chrono::steady_clock::now() - t0;
  CHECK(r.status == 504);
  CHECK(took >= 1900ms);
  CHECK(took < 2600ms);
  std::this_thread::sleep_for(1000ms);
  search.WaitIdle();
  CHECK(search.calls() == 4);

  auto metrics = edge.Get("/metrics").body;
  CHECK(Has(metrics, "folio_edge_search_retries_total 2"));
  CHECK(Has(metrics, "folio_edge_searches_total{outcome=\"ok\"} 1"));
  CHECK(Has(metrics, "folio_edge_searches_total{outcome=\"timeout\"} 1"));
}
