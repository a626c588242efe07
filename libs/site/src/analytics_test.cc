// Third-party analytics (issue 29): the setting's parser, the tags each
// provider puts on every HTML page, and the exact policy each page then has,
// for that site only.
#include <doctest/doctest.h>

#include <string>

#include "folio/site/analytics.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/site/search_page.h"

using namespace folio;
using namespace folio::site;

namespace {

SiteAnalytics Checked(std::string_view p, std::string_view id, std::string_view url) {
  Result<SiteAnalytics> a = CheckAnalytics(p, id, url);
  INFO(p, " ", id, " ", url, ": ", a.ok() ? "" : a.status().message());
  REQUIRE(a.ok());
  return *a;
}

std::string Refused(std::string_view p, std::string_view id, std::string_view url) {
  Result<SiteAnalytics> a = CheckAnalytics(p, id, url);
  INFO(p, " ", id, " ", url);
  REQUIRE(!a.ok());
  CHECK(a.status().code() == Code::kInvalidArgument);
  return a.status().message();
}

// The policy of a plain page with `script`, `img` and `connect` added where
// PageCsp() has its own sources.
std::string Expected(std::string_view script, std::string_view img, std::string_view connect) {
  std::string p = PageCsp();
  auto add = [&p](std::string_view directive_end, std::string_view extra) {
    size_t at = p.find(directive_end);
    REQUIRE(at != std::string::npos);
    p.insert(at + directive_end.size(), extra);
  };
  size_t style = p.find("; style-src");
  p.insert(style, script);
  add("img-src 'self' https: http: data:", img);
  add("connect-src 'self'", connect);
  return p;
}

SiteInfo With(const SiteAnalytics& a) {
  SiteInfo s;
  s.name = "Notes";
  s.analytics = a;
  return s;
}

std::string NotePageOf(const SiteInfo& s) {
  NotePage p;
  p.site = s;
  p.url = "/a";
  p.title = "A";
  p.body_html = "<p>x</p>";
  return AssembleNotePage(p);
}

}  // namespace

TEST_CASE("analytics: the parser accepts each provider's id and refuses what would break a page or its policy") {
  CHECK(Checked("", "", "").provider == AnalyticsProvider::kNone);
  CHECK(Checked("none", "", "").provider == AnalyticsProvider::kNone);
  CHECK(Checked("plausible", "notes.example.com", "").id == "notes.example.com");
  CHECK(Checked("plausible", "notes.example.com", "https://stats.example.com/js/script.js").script_url ==
        "https://stats.example.com/js/script.js");
  CHECK(Checked("umami", "94db1cb1-74f4-4a40-ad6c-962362670409", "https://cloud.umami.is/script.js").provider ==
        AnalyticsProvider::kUmami);
  CHECK(Checked("goatcounter", "mynotes", "").id == "mynotes");
  CHECK(Checked("goatcounter", "https://gc.example.com/count", "").id == "https://gc.example.com/count");
  CHECK(Checked("google", "G-ABC123XYZ9", "").id == "G-ABC123XYZ9");
  CHECK(Checked("custom", "", "https://cdn.example.com/a.js").provider == AnalyticsProvider::kCustom);

  CHECK(Refused("matomo", "1", "").find("not a provider") != std::string::npos);
  CHECK(Refused("none", "x", "").find("need a provider") != std::string::npos);
  CHECK(Refused("plausible", "", "").find("needs --analytics-id") != std::string::npos);
  CHECK(Refused("plausible", "a.com\"><script>", "").find("--analytics-id") != std::string::npos);
  CHECK(Refused("plausible", "a.com,b.com", "").find("Plausible site domain") != std::string::npos);
  CHECK(Refused("plausible", "a.com", "http://stats.example.com/s.js").find("https://") != std::string::npos);
  CHECK(Refused("plausible", "a.com", "https://x.com/s.js; script-src *").find("character") != std::string::npos);
  CHECK(Refused("plausible", "a.com", "https://x.com/s.js?v=1").find("query") != std::string::npos);
  CHECK(Refused("plausible", "a.com", "https://x.com/a b.js").find("character") != std::string::npos);
  CHECK(Refused("plausible", "a.com", "https://x.com/").find("script path") != std::string::npos);
  CHECK(Refused("plausible", "a.com", "https:///s.js").find("no host") != std::string::npos);
  CHECK(Refused("umami", "94db1cb1-74f4-4a40-ad6c-962362670409", "").find("needs --analytics-url") != std::string::npos);
  CHECK(Refused("umami", "not-a-uuid", "https://u.example.com/s.js").find("UUID") != std::string::npos);
  CHECK(Refused("goatcounter", "My_Code", "").find("GoatCounter") != std::string::npos);
  CHECK(Refused("goatcounter", "https://gc.example.com/x", "").find("/count") != std::string::npos);
  CHECK(Refused("google", "UA-1234-1", "").find("measurement id") != std::string::npos);
  CHECK(Refused("google", "G-abc", "").find("measurement id") != std::string::npos);
  CHECK(Refused("google", "G-ABC123", "https://x.com/g.js").find("not used") != std::string::npos);
  CHECK(Refused("custom", "", "").find("needs --analytics-url") != std::string::npos);
  CHECK(Refused("custom", "x", "https://x.com/a.js").find("empty") != std::string::npos);
}

TEST_CASE("analytics: each provider's tags and exact policy on a note page") {
  struct Case {
    SiteAnalytics a;
    std::string tags, script, img, connect;
  };
  const std::string gtag_config =
      "window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}gtag(\"js\",new Date());"
      "gtag(\"config\",\"G-ABC123XYZ9\");";
  const Case cases[] = {
      {Checked("plausible", "notes.example.com", ""),
       "<script defer data-domain=\"notes.example.com\" src=\"https://plausible.io/js/script.js\"></script>",
       " https://plausible.io/js/script.js", "", " https://plausible.io"},
      {Checked("plausible", "notes.example.com", "https://stats.example.com:8443/js/script.js"),
       "<script defer data-domain=\"notes.example.com\" src=\"https://stats.example.com:8443/js/script.js\"></script>",
       " https://stats.example.com:8443/js/script.js", "", " https://stats.example.com:8443"},
      {Checked("umami", "94db1cb1-74f4-4a40-ad6c-962362670409", "https://cloud.umami.is/script.js"),
       "<script defer data-website-id=\"94db1cb1-74f4-4a40-ad6c-962362670409\" "
       "src=\"https://cloud.umami.is/script.js\"></script>",
       " https://cloud.umami.is/script.js", "", " https://cloud.umami.is"},
      {Checked("goatcounter", "mynotes", ""),
       "<script async data-goatcounter=\"https://mynotes.goatcounter.com/count\" "
       "src=\"https://gc.zgo.at/count.js\"></script>",
       " https://gc.zgo.at/count.js", " https://mynotes.goatcounter.com", " https://mynotes.goatcounter.com"},
      {Checked("google", "G-ABC123XYZ9", ""),
       "<script async src=\"https://www.googletagmanager.com/gtag/js?id=G-ABC123XYZ9\"></script><script>" +
           gtag_config + "</script>",
       " https://www.googletagmanager.com " + ScriptHashSource(gtag_config),
       " https://*.google-analytics.com https://*.googletagmanager.com",
       " https://*.google-analytics.com https://*.analytics.google.com https://*.googletagmanager.com"},
      {Checked("custom", "", "https://cdn.example.com/t/a.js"),
       "<script defer src=\"https://cdn.example.com/t/a.js\"></script>", " https://cdn.example.com/t/a.js", "",
       " https://cdn.example.com"},
  };
  for (const Case& k : cases) {
    INFO(AnalyticsProviderName(k.a.provider), " ", k.a.id);
    SiteInfo s = With(k.a);
    std::string page = NotePageOf(s);
    // In <head>, after the site script.
    size_t tags = page.find(k.tags);
    REQUIRE(tags != std::string::npos);
    CHECK(tags < page.find("</head>"));
    CHECK(page.find(SiteScriptUrl()) < tags);
    const std::string csp = Expected(k.script, k.img, k.connect);
    NotePage np;
    np.site = s;
    CHECK(NotePageCsp(np) == csp);
    CHECK(PageCsp(s) == csp);
    CHECK(csp.find("unsafe-inline") == std::string::npos);
    // Every HTML page of the site carries them: listings, the 404 and 410 pages, the graph page.
    CHECK(AssembleListingPage(ListingPage{s, "/", "Home", "", {}, {}, {}, 0, 1, 1}).find(k.tags) != std::string::npos);
    CHECK(Assemble404Page(s).find(k.tags) != std::string::npos);
    CHECK(AssembleGonePage(s).find(k.tags) != std::string::npos);
    CHECK(AssembleGraphPage(s).find(k.tags) != std::string::npos);
    // The 404 page hands the setting to the edge; the gone page does not need to.
    CHECK(AnalyticsFromPage(Assemble404Page(s)) == k.a);
    CHECK(AnalyticsFromPage(AssembleGonePage(s)).provider == AnalyticsProvider::kNone);
  }
}

TEST_CASE("analytics: a site without it has the plain policy and no third-party script") {
  SiteInfo s = With({});
  CHECK(PageCsp(s) == PageCsp());
  std::string page = NotePageOf(s);
  CHECK(page.find("plausible") == std::string::npos);
  CHECK(page.find("folio-analytics") == std::string::npos);
  CHECK(Assemble404Page(s).find("folio-analytics") == std::string::npos);
  CHECK(AnalyticsFromPage(Assemble404Page(s)).provider == AnalyticsProvider::kNone);
  CHECK(SearchPageCsp(s) == SearchPageCsp());
}

TEST_CASE("analytics: a diagram page keeps mermaid's sources and adds the site's") {
  NotePage p;
  p.site = With(Checked("plausible", "a.example.com", ""));
  p.site.mermaid_url = std::string(kMermaidUrl);
  p.has_mermaid = true;
  std::string csp = NotePageCsp(p);
  CHECK(csp.find(std::string(kMermaidUrl) + " https://plausible.io/js/script.js; style-src 'self' 'unsafe-inline'") !=
        std::string::npos);
  CHECK(csp.find("connect-src 'self' https://plausible.io;") != std::string::npos);
}

TEST_CASE("analytics: the search page carries the tags and its policy the sources") {
  SearchPage p;
  p.site = With(Checked("goatcounter", "mynotes", ""));
  std::string html = AssembleSearchPage(p);
  CHECK(html.find("data-goatcounter=\"https://mynotes.goatcounter.com/count\"") != std::string::npos);
  std::string csp = SearchPageCsp(p.site);
  std::string plain = SearchPageCsp();
  CHECK(csp.find("https://gc.zgo.at/count.js; style-src") != std::string::npos);
  CHECK(csp.find("img-src 'self' data: https://mynotes.goatcounter.com;") != std::string::npos);
  CHECK(csp.find("connect-src 'self' https://mynotes.goatcounter.com;") != std::string::npos);
  CHECK(plain.find("goatcounter") == std::string::npos);
}

TEST_CASE("analytics: a forged marker is checked again, not trusted") {
  CHECK(AnalyticsFromPage("<meta name=\"folio-analytics\" content=\"custom||http://evil.example/x.js\">").provider ==
        AnalyticsProvider::kNone);
  CHECK(AnalyticsFromPage("<meta name=\"folio-analytics\" content=\"plausible|a.com\">").provider ==
        AnalyticsProvider::kNone);
  CHECK(AnalyticsFromPage("<meta name=\"folio-analytics\" content=\"plausible|a.com|\">").id == "a.com");
}
