// Analytics (issue 29) against real nats-server, folio-ingest and folio-edge:
//  - the edge's own counter: a page fetched N times by a reader shows up in
//    the edge's /metrics (robots, HEAD, previews and prefetches do not;
//    a 304 revalidation does), with bounded series;
//  - /_/stats answers anonymous readers exactly as a URL that does not exist;
//  - a site's analytics setting puts the provider's script on its pages and
//    exactly its sources in their policies, the edge's search page included.
//    The setting is configured through ConfigureAnalytics, the one place that
//    knows how ingest stores it.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "folio/http/client.h"
#include "folio/site/analytics.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/site/search_page.h"

using namespace folio;
using namespace folio::it;

namespace {

// The value of the sample `series` (name and labels exactly as exposed) in
// the edge's /metrics; 0 if absent.
double Sample(Cluster& c, const std::string& series) {
  auto r = http::Get(c.edge_url() + "/metrics");
  if (!r.ok() || r->status != 200) return -1;
  size_t at = r->body.find("\n" + series + " ");
  if (at == std::string::npos) return 0;
  return std::strtod(r->body.c_str() + at + series.size() + 2, nullptr);
}

// Sets the flag site's analytics as an owner does, and waits until the edge
// serves pages rendered with it. The setting is stored by ingest
// (`folio-ingest site set --analytics P --analytics-id ID --analytics-url URL`,
// the private-site ingest helper's CLI) and copied into site::SiteInfo by the
// coordinator's wiring; point this function at it if it changes.
bool ConfigureAnalytics(Cluster& c, const std::string& provider, const std::string& id, const std::string& url) {
  std::string out, err;
  std::vector<std::string> args = {"site", "set", "default", "--analytics", provider, "--analytics-id", id};
  if (!url.empty()) args.insert(args.end(), {"--analytics-url", url});
  int rc = c.RunIngest(args, &out, &err);  // the running ingest applies it within a second
  if (rc != 0) {
    MESSAGE("folio-ingest site set failed: ", err);
    return false;
  }
  return c.WaitForPage("/guide", 200, "data-domain=\"" + id + "\"").status == 200;
}

}  // namespace

TEST_CASE("analytics: a page read N times counts N views at the edge; robots, HEAD and previews do not") {
  Cluster c;
  auto push = c.Push(PushBody({{"Guide.md", "# Guide\n\nText.\n"}, {"Other.md", "# Other\n\nMore.\n"}}));
  INFO(push.body, c.Logs());
  REQUIRE(push.status == 200);
  REQUIRE(c.WaitForPage("/other", 200).status == 200);  // waits without touching /guide
  const std::string total = "folio_edge_page_views_total{site=\"default\"}";
  const double before = Sample(c, total);
  REQUIRE(before >= 0);
  constexpr int kViews = 7;
  std::string etag;
  for (int i = 0; i < kViews; ++i) {
    auto r = c.EdgeGet("/guide", {{"User-Agent", "Mozilla/5.0 Firefox/140"}, {"Sec-Fetch-Dest", "document"}});
    REQUIRE(r.status == 200);
    etag = r.Header("ETag");
  }
  // A revisit with the cached copy: 304, and a view.
  CHECK(c.EdgeGet("/guide", {{"If-None-Match", etag}}).status == 304);
  // Not views: a robot, HEAD, the site script's preview fetch, a prefetch,
  // a 404, the stylesheet.
  CHECK(c.EdgeGet("/guide", {{"User-Agent", "Mozilla/5.0 (compatible; Googlebot/2.1)"}}).status == 200);
  CHECK(c.EdgeGet("/guide", {}, "HEAD").status == 200);
  CHECK(c.EdgeGet("/guide", {{"Sec-Fetch-Dest", "empty"}, {"Accept", "text/html"}}).status == 200);
  CHECK(c.EdgeGet("/guide", {{"Sec-Purpose", "prefetch"}}).status == 200);
  CHECK(c.EdgeGet("/no/such/page").status == 404);
  CHECK(c.EdgeGet(site::StyleSheetUrl()).status == 200);

  CHECK(Sample(c, total) == before + kViews + 1);
  CHECK(Sample(c, "folio_edge_page_views_top{site=\"default\",url=\"/guide\"}") == kViews + 1);
  CHECK(Sample(c, "folio_edge_page_views_top{site=\"default\",url=\"/no/such/page\"}") == 0);
}

TEST_CASE("analytics: /_/stats answers an anonymous reader as a page that does not exist") {
  Cluster c;
  auto push = c.Push(PushBody({{"Guide.md", "# Guide\n\nText.\n"}}));
  INFO(push.body, c.Logs());
  REQUIRE(push.status == 200);
  REQUIRE(c.WaitForPage("/guide", 200).status == 200);
  auto missing = c.EdgeGet("/no/such/page");
  for (const auto& headers : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {}, {{"Cookie", "folio_session=forged"}}, {{"Authorization", "Bearer x"}}}) {
    auto stats = c.EdgeGet("/_/stats", headers);
    CHECK(stats.status == 404);
    CHECK(stats.body == missing.body);
    CHECK(stats.body.find("Page views") == std::string::npos);
    CHECK(stats.Header("Content-Security-Policy") == missing.Header("Content-Security-Policy"));
  }
}

// /_/stats is the owners' page: a reader added with --owner who signs in at
// the edge sees the counts; a reader who is not an owner, and a stranger,
// get the 404 page (issue 29).
TEST_CASE("analytics: /_/stats shows the views to a signed-in owner only") {
  Cluster c;
  auto push = c.Push(PushBody({{"Guide.md", "# Guide\n\nText.\n"}}));
  INFO(push.body, c.Logs());
  REQUIRE(push.status == 200);
  REQUIRE(c.WaitForPage("/guide", 200).status == 200);
  std::string out, err;
  REQUIRE(c.RunIngest({"site", "reader", "add", "default", "ann", "--owner"}, &out, &err, "owner password 1") == 0);
  REQUIRE(c.RunIngest({"site", "reader", "add", "default", "bob"}, &out, &err, "reader password 2") == 0);
  for (int i = 0; i < 3; ++i) CHECK(c.EdgeGet("/guide", {{"Sec-Fetch-Dest", "document"}}).status == 200);
  auto sign_in = [&](const std::string& form) {
    http::ClientResponse r;
    for (int i = 0; i < 100; ++i) {  // until the edge has the readers (the site record)
      http::ClientRequest req;
      req.method = "POST";
      req.url = c.edge_url() + "/_/signin";
      req.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
      req.body = form + "&next=%2F";
      auto got = http::Fetch(req);
      if (got.ok()) r = *got;
      if (r.status == 303) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::string sc = r.Header("set-cookie");
    return sc.substr(0, sc.find(';'));
  };
  const std::string owner = sign_in("name=ann&password=owner+password+1");
  REQUIRE(owner.rfind("folio_session=", 0) == 0);
  const std::string reader = sign_in("name=bob&password=reader+password+2");
  REQUIRE(reader.rfind("folio_session=", 0) == 0);
  auto stats = c.EdgeGet("/_/stats", {{"Cookie", owner}});
  CHECK(stats.status == 200);
  CHECK(stats.body.find("/guide") != std::string::npos);
  CHECK(stats.Header("Cache-Control").find("no-store") != std::string::npos);
  const std::string missing = c.EdgeGet("/no/such/page").body;
  for (const std::string& cookie : {reader, std::string("folio_session=forged.x"), std::string()}) {
    std::vector<std::pair<std::string, std::string>> h;
    if (!cookie.empty()) h.emplace_back("Cookie", cookie);
    auto r = c.EdgeGet("/_/stats", h);
    CHECK(r.status == 404);
    CHECK(r.body == missing);  // as a page that does not exist
  }
}

// The owner's settings through `folio-ingest site set` against a running
// ingest: the analytics provider on every page with exactly its sources,
// then the site's language and summary-only feeds (issue 29).
TEST_CASE("analytics: a site's provider is on every page with exactly its sources; language and feed settings too") {
  Cluster c;
  auto push = c.Push(PushBody({{"Guide.md", "# Guide\n\nText.\n"}}));
  INFO(push.body, c.Logs());
  REQUIRE(push.status == 200);
  REQUIRE(c.WaitForPage("/guide", 200).status == 200);
  REQUIRE(ConfigureAnalytics(c, "plausible", "notes.example.com", ""));
  site::SiteInfo info;
  info.analytics = *site::CheckAnalytics("plausible", "notes.example.com", "");
  const std::string tag =
      "<script defer data-domain=\"notes.example.com\" src=\"https://plausible.io/js/script.js\"></script>";
  for (const std::string path : {"/guide", "/", "/_/recent", "/no/such/page"}) {
    INFO(path);
    auto r = c.EdgeGet(path);
    CHECK(r.body.find(tag) != std::string::npos);
    CHECK(r.Header("Content-Security-Policy") == site::PageCsp(info));
  }
  auto search = c.EdgeGet("/_/search");
  CHECK(search.body.find(tag) != std::string::npos);
  CHECK(search.Header("Content-Security-Policy") == site::SearchPageCsp(info));

  // The site's language and summary-only feeds, set the same way.
  CHECK(c.WaitForPage("/rss.xml", 200, "content:encoded").status == 200);
  std::string out, err;
  REQUIRE(c.RunIngest({"site", "set", "default", "--lang", "ru", "--feed", "summary"}, &out, &err) == 0);
  auto ru = c.WaitForPage("/guide", 200, "<html lang=\"ru\"");
  CHECK(ru.body.find("<html lang=\"ru\"") != std::string::npos);
  CHECK(ru.body.find("Поиск по заметкам") != std::string::npos);
  CHECK(ru.body.find("Search notes") == std::string::npos);
  CHECK(ru.body.find(tag) != std::string::npos);  // the other settings stay
  CHECK(c.WaitForPage("/no/such/page", 404, "<html lang=\"ru\"").status == 404);
  CHECK(c.WaitForPage("/_/search", 200, "Поиск").status == 200);  // the edge's own page follows the site
  auto rss = c.EdgeGet("/rss.xml");
  for (int i = 0; i < 100 && rss.body.find("content:encoded>") != std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    rss = c.EdgeGet("/rss.xml");
  }
  CHECK(rss.body.find("content:encoded>") == std::string::npos);
  CHECK(rss.body.find("<description>") != std::string::npos);
  CHECK(c.RunIngest({"site", "set", "default", "--lang", "x y"}, &out, &err) == 1);  // refused, says which
  CHECK(err.find("lang") != std::string::npos);
}
