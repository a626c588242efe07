// GET /search on a real Worker (Loop + Server on 127.0.0.1) without NATS:
// validation, the empty page, and the deferred path when the search service
// cannot be reached (the backend has no bus: every search fails
// kUnavailable on the pool and the answer is posted back to the loop).
// The path through a real search responder is tests/integration/edge_search_test.cc.
#include <doctest/doctest.h>

#include <algorithm>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "folio/core/gzip.h"
#include "folio/http/client.h"
#include "folio/site/layout.h"
#include "worker.h"
#include "search_handler.h"

using namespace folio;
using namespace folio::edge;

namespace {

bool Has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

struct EdgeUnderTest {
  metrics::Registry registry;
  ServeCounters counters{&registry.NewCounter("t_requests", "t", {{"code", "200"}}),
                         &registry.NewCounter("t_requests", "t", {{"code", "304"}}),
                         &registry.NewCounter("t_requests", "t", {{"code", "404"}}),
                         &registry.NewCounter("t_requests", "t", {{"code", "other"}}),
                         &registry.NewCounter("t_corrupt", "t")};
  SearchBackend backend;
  Worker worker;
  std::thread thread;

  explicit EdgeUnderTest(SearchOptions o)
      : backend(o, &registry), worker("default", counters, &backend) {
    REQUIRE(worker.server().Listen("127.0.0.1", 0).ok());
    thread = std::thread([this] { worker.loop().Run(); });
  }
  ~EdgeUnderTest() {
    worker.loop().Stop();
    thread.join();
  }
  std::string Url(const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(worker.server().port()) + path;
  }
  http::ClientResponse Get(const std::string& path, const std::string& method = "GET") {
    http::ClientRequest req;
    req.method = method;
    req.url = Url(path);
    auto r = http::Fetch(req);
    REQUIRE(r.ok());
    return *r;
  }
  template <typename F>
  void OnLoop(F fn) {
    std::promise<void> done;
    worker.loop().Post([&] {
      fn();
      done.set_value();
    });
    done.get_future().wait();
  }
};

void CheckHeaders(const http::ClientResponse& r) {
  CHECK(r.Header("Content-Type") == "text/html; charset=utf-8");
  CHECK(r.Header("Cache-Control") == "no-store");
  CHECK(r.Header("Content-Security-Policy") == site::SearchPageCsp());
  CHECK(r.Header("X-Content-Type-Options") == "nosniff");
}

}  // namespace

TEST_CASE("edge search: status mapping and reply application") {
  bus::SearchReply reply;
  reply.took_us = 42;
  for (int i = 0; i < kMaxSearchResults + 5; ++i) reply.hits.push_back({"p.md", "/p", "T", "s", 1.0});
  site::SearchPage page;
  CHECK(ApplySearchReply(reply, &page) == 200);
  CHECK(page.results.size() == static_cast<size_t>(kMaxSearchResults));
  CHECK(page.took_us == 42);
  CHECK(page.results[0].title == "T");
  CHECK(page.results[0].snippet_html == "s");

  bus::SearchReply bad;
  bad.error = "index is rebuilding";
  bad.code = Code::kUnavailable;
  site::SearchPage page2;
  CHECK(ApplySearchReply(bad, &page2) == 503);
  CHECK(page2.error == "index is rebuilding");
  CHECK(page2.results.empty());

  // The edge is a gateway: search's own faults are 502, its refusals pass through.
  site::SearchPage page3;
  bad.code = Code::kInternal;
  CHECK(ApplySearchReply(bad, &page3) == 502);
  bad.code = Code::kInvalidArgument;
  CHECK(ApplySearchReply(bad, &page3) == 400);
}

TEST_CASE("edge search: validation, the empty page, and 503 when search cannot be reached") {
  EdgeUnderTest e(SearchOptions{1, 64, 500});

  auto r = e.Get("/_/search");
  CHECK(r.status == 200);
  CheckHeaders(r);
  CHECK(Has(r.body, "<!doctype html>"));
  CHECK(Has(r.body, "<meta name=\"robots\" content=\"noindex\">"));
  CHECK(Has(r.body, "role=\"search\""));
  CHECK(Has(r.body, "<a class=\"site-name site-body-left-column-site-name\" href=\"/\">default</a>"));  // no 404 page yet: the site id

  r = e.Get("/_/search?q=&fragment=1");
  CHECK(r.status == 200);
  CHECK(r.body.rfind("<section id=\"search-results\"", 0) == 0);

  r = e.Get("/_/search?q=%FF");
  CHECK(r.status == 400);
  CheckHeaders(r);
  CHECK(Has(r.body, "role=\"alert\">The search text is not valid UTF-8.</p>"));
  CHECK(Has(r.body, "value=\"\""));  // the bad text is not echoed

  r = e.Get("/_/search?q=" + std::string(1025, 'a') + "&fragment=1");
  CHECK(r.status == 400);
  CHECK(r.body.rfind("<section", 0) == 0);
  CHECK(Has(r.body, "too long"));
  CHECK(e.Get("/_/search?q=x&mode=fuzzy").status == 400);
  CHECK(e.Get("/_/search?q=x&k=0").status == 400);
  CHECK(e.Get("/_/search?q=x&k=51").status == 400);
  CHECK(e.Get("/_/search?q=%zz").status == 400);

  // Through the pool and back to the loop: no bus, so 503.
  r = e.Get("/_/search?q=hello+%3Cworld%3E&mode=text");
  CHECK(r.status == 503);
  CheckHeaders(r);
  CHECK(Has(r.body, "Search is unavailable right now"));
  CHECK(Has(r.body, "value=\"hello &lt;world&gt;\""));
  CHECK(Has(r.body, "<input type=\"hidden\" name=\"mode\" value=\"text\">"));
  r = e.Get("/_/search?q=hello&fragment=1");
  CHECK(r.status == 503);
  CHECK(r.body.rfind("<section", 0) == 0);
  r = e.Get("/_/search?q=hello", "HEAD");
  CHECK(r.status == 503);
  CHECK(r.body.empty());
  CHECK(e.Get("/_/search?q=hello", "POST").status == 405);
  CHECK(e.backend.in_flight() == 0);

  std::string metrics = e.registry.Serialize();
  CHECK(Has(metrics, "folio_edge_searches_total{outcome=\"unavailable\"} 3"));
  CHECK(Has(metrics, "folio_edge_searches_total{outcome=\"invalid\"} 6"));
  CHECK(Has(metrics, "folio_edge_searches_total{outcome=\"empty_query\"} 2"));
  CHECK(Has(metrics, "folio_edge_search_seconds_count 3"));
}

TEST_CASE("edge search: the JSON answer for the header's box") {
  CHECK(SearchBreadcrumb("Note.md").empty());
  CHECK(SearchBreadcrumb("Features/Note.md") == "Features");
  CHECK(SearchBreadcrumb("Features/Graph/Local graph.md") == "Features \u203a Graph");
  CHECK(SearchBreadcrumb("/A//B/n.md") == "A \u203a B");  // empty segments are skipped

  bus::SearchReply reply;
  reply.took_us = 7;
  reply.hits.push_back({"Features/Graph/Local graph.md", "/features/graph/local graph#depth", "Local \"graph\"",
                        "the <mark>graph</mark> &amp; <script>x</script>", 0.5});
  reply.hits.push_back({"Home.md", "/", "", "", 0.25});
  site::SearchPage page;
  page.query = "grph <b>";
  page.mode = "hybrid";
  REQUIRE(ApplySearchReply(reply, &page) == 200);
  std::string json = SearchJson(page);
  CHECK(json ==
        "{\"query\":\"grph <b>\",\"mode\":\"hybrid\",\"hits\":["
        "{\"title\":\"Local \\\"graph\\\"\",\"url\":\"/features/graph/local%20graph#depth\","
        "\"path\":\"Features/Graph/Local graph.md\",\"breadcrumb\":\"Features \u203a Graph\","
        "\"snippet\":\"the <mark>graph</mark> &amp; &lt;script&gt;x&lt;/script&gt;\",\"score\":0.5},"
        "{\"title\":\"/\",\"url\":\"/\",\"path\":\"Home.md\",\"snippet\":\"\",\"score\":0.25}],"
        "\"took_us\":7}");

  site::SearchPage empty;
  CHECK(SearchJson(empty) == "{\"query\":\"\",\"mode\":\"hybrid\",\"hits\":[],\"took_us\":0}");

  site::SearchPage failed;
  failed.error = "index is rebuilding";
  http::Response err = SearchHttpResponse(503, failed, SearchFormat::kJson, Code::kUnavailable);
  CHECK(err.status == 503);
  CHECK(Has(err.body, "\"code\":\"unavailable\""));
  CHECK(Has(err.body, "\"message\":\"index is rebuilding\""));
}

TEST_CASE("edge search: format=json over HTTP: validation, the empty answer, 503, headers") {
  EdgeUnderTest e(SearchOptions{1, 64, 500});
  auto check_headers = [](const http::ClientResponse& r) {
    CHECK(r.Header("Content-Type") == "application/json");
    CHECK(r.Header("Cache-Control") == "no-store");
    CHECK(r.Header("X-Content-Type-Options") == "nosniff");
    CHECK(r.Header("X-Robots-Tag") == "noindex");
    CHECK(r.Header("Content-Security-Policy").empty());  // not a page
  };
  auto r = e.Get("/_/search?format=json&k=8&q=");
  CHECK(r.status == 200);
  check_headers(r);
  CHECK(r.body == "{\"query\":\"\",\"mode\":\"hybrid\",\"hits\":[],\"took_us\":0}");

  r = e.Get("/_/search?format=json&q=%FF");
  CHECK(r.status == 400);
  check_headers(r);
  CHECK(Has(r.body, "\"code\":\"invalid_argument\""));
  CHECK(Has(r.body, "\"message\":\"The search text is not valid UTF-8.\""));
  const std::vector<std::string> bad = {"q=x&k=51&format=json", "q=x&mode=fuzzy&format=json", "q=%zz&format=json",
                                       "format=json&q=" + std::string(1025, 'a')};
  for (const std::string& q : bad) {
    r = e.Get("/_/search?" + q);
    INFO(q);
    CHECK(r.status == 400);
    check_headers(r);
    CHECK(Has(r.body, "\"code\":\"invalid_argument\""));
  }

  // An unknown format cannot be answered in it: the page says what is wrong.
  r = e.Get("/_/search?q=x&format=xml");
  CHECK(r.status == 400);
  CheckHeaders(r);
  CHECK(Has(r.body, "Unknown answer format"));

  // Through the pool and back to the loop: no bus, so 503, as JSON.
  r = e.Get("/_/search?q=hello&format=json&fragment=1");
  CHECK(r.status == 503);
  check_headers(r);
  CHECK(Has(r.body, "\"code\":\"unavailable\""));
  CHECK(Has(r.body, "Search is unavailable right now"));
  CHECK(e.backend.in_flight() == 0);
}

TEST_CASE("edge search: the site's name comes from its 404 page, then its site record") {
  EdgeUnderTest e(SearchOptions{1, 64, 500});
  bus::PageRecord rec;
  rec.status = 404;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"x\"";
  rec.body_gzip = GzipCompress(site::Assemble404Page("Field <Notes>"));
  auto page = BuildPage(rec, kNotFoundKey);
  REQUIRE(page.ok());
  e.OnLoop([&] { e.worker.sites().SetTitle("default", "From the record"); });
  CHECK(Has(e.Get("/_/search").body, "<a class=\"site-name site-body-left-column-site-name\" href=\"/\">From the record</a>"));
  e.OnLoop([&] { e.worker.sites().Put("default", *page); });
  auto r = e.Get("/_/search?q=x");
  CHECK(Has(r.body, "<a class=\"site-name site-body-left-column-site-name\" href=\"/\">Field &lt;Notes&gt;</a>"));
  CHECK(Has(r.body, "<title>Search: x · Field &lt;Notes&gt;</title>"));
}

TEST_CASE("edge search: the page and its errors speak the site's language, read off its 404 page (issue 29)") {
  EdgeUnderTest e(SearchOptions{1, 0, 500});  // no room: every search is refused as busy
  site::SiteInfo info;
  info.name = "Notizen";
  info.lang = "de";
  bus::PageRecord rec;
  rec.status = 404;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"x\"";
  rec.body_gzip = GzipCompress(site::Assemble404Page(info));
  auto page = BuildPage(rec, kNotFoundKey);
  REQUIRE(page.ok());
  e.OnLoop([&] { e.worker.sites().Put("default", *page); });
  auto empty = e.Get("/_/search");
  CHECK(Has(empty.body, "<html lang=\"de\">"));
  CHECK(Has(empty.body, "<h1>Suche</h1>"));
  CHECK(Has(empty.body, "Gib ins Suchfeld ein, wonach du suchst."));
  auto r = e.Get("/_/search?q=hello");
  CHECK(r.status == 503);
  CHECK(Has(r.body, "Die Suche ist gerade ausgelastet."));
  CHECK(!Has(r.body, "Search is busy"));
}

TEST_CASE("edge search: past max_in_flight a search is refused at once with 503") {
  EdgeUnderTest e(SearchOptions{1, 0, 500});
  auto r = e.Get("/_/search?q=hello");
  CHECK(r.status == 503);
  CHECK(r.Header("Retry-After") == "1");
  CHECK(Has(r.body, "Search is busy right now"));
  CHECK(Has(e.registry.Serialize(), "folio_edge_searches_total{outcome=\"overloaded\"} 1"));
  // Pages are unaffected.
  CHECK(e.Get("/no-such-page").status == 404);
}

// Not search, but the same real Worker: BuildPage trusts a well-formed gzip
// member without inflating it, so a page whose deflate data is corrupt is
// served as it is to gzip readers, and an identity GET, which inflates it,
// answers the usual JSON 500 (counted) instead of a Content-Length it cannot keep.
TEST_CASE("edge pages: a corrupt body is sent as is for gzip, refused with 500 for identity") {
  EdgeUnderTest e(SearchOptions{1, 64, 500});
  bus::PageRecord rec;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"c\"";
  rec.body_gzip = GzipCompress("<p>a body long enough to have a real deflate stream</p>");
  std::fill(rec.body_gzip.begin() + 10, rec.body_gzip.end() - 8, '\xff');
  auto page = BuildPage(rec, "/bad");
  REQUIRE(page.ok());
  e.OnLoop([&] { e.worker.sites().Put("default", *page); });
  http::ClientRequest req;
  req.url = e.Url("/bad");
  req.headers = {{"Accept-Encoding", "gzip"}};
  auto gz = http::Fetch(req);
  REQUIRE(gz.ok());
  CHECK(gz->status == 200);
  CHECK(gz->Header("Content-Encoding") == "gzip");
  CHECK(gz->body == rec.body_gzip);
  auto id = e.Get("/bad");
  CHECK(id.status == 500);
  CHECK(id.Header("Content-Type") == "application/json");
  CHECK(Has(id.body, "\"code\":\"data_loss\""));
  CHECK(e.counters.corrupt_body->Value() == 1);
  CHECK(e.Get("/bad", "HEAD").status == 200);  // nothing to inflate
}
