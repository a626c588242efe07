#include "folio/site/search_page.h"

#include <doctest/doctest.h>

#include "folio/core/hash.h"
#include "folio/site/layout.h"

using namespace folio;
using namespace folio::site;

namespace {

bool Has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

constexpr std::string_view kForm =
    "<form class=\"search-box\" role=\"search\" action=\"/_/search\" method=\"get\">";

SearchPage Sample() {
  SearchPage p;
  p.site.name = "Docs";
  p.query = "alpha";
  p.results = {{"A <b>note</b> & more", "/folder/a note", "the <mark>alpha</mark> &amp; omega", 0.9,
                "Folder/A note.md"},
               {"Second", "/second", "", 0.5, "Second.md"}};
  p.took_us = 1500;
  return p;
}

}  // namespace

TEST_CASE("layout: every page has the search box, a plain GET form with a label") {
  NotePage note;
  note.site.name = "Docs";
  note.title = "T";
  ListingPage listing;
  listing.site.name = "Docs";
  listing.title = "Recent";
  for (const std::string& html : {AssembleNotePage(note), AssembleListingPage(listing),
                                  AssembleHomePage("Docs", {}, 0), Assemble404Page("Docs")}) {
    CHECK(Has(html, kForm));
    CHECK(Has(html, "<input type=\"search\" name=\"q\""));
    CHECK(Has(html, "<span class=\"visually-hidden\">Search notes</span>"));
    CHECK(Has(html, "<button type=\"submit\">Search</button></form>"));
    CHECK(html.find("</form>") < html.find("</header>"));
    CHECK(Has(html, "value=\"\""));
    CHECK(!Has(html, "noindex"));
    CHECK(!Has(html, "onsubmit"));  // the box needs no script: a plain form
  }
  CHECK(Has(StyleSheet(), ".search-box"));
  CHECK(Has(StyleSheet(), ".visually-hidden"));
  // The site script's results panel under the box is styled by classes, not
  // by style attributes (the pages' CSP has style-src 'self').
  for (const char* cls : {".search-panel{", ".search-option a{", ".search-hit-snippet mark{", ".search-all"}) {
    CHECK(Has(StyleSheet(), cls));
  }
}

TEST_CASE("layout: related notes are listed after the content, escaped; nothing when empty") {
  NotePage p;
  p.site.name = "Docs";
  p.title = "Hub";
  p.body_html = "<p>body</p>";
  CHECK(!Has(AssembleNotePage(p), "Related notes"));
  p.related = {{"B <i>x</i> & y", "/b note", ""}, {"C", "/c", ""}};
  p.backlinks = {{"Other", "/other", ""}};
  std::string html = AssembleNotePage(p);
  CHECK(Has(html, "<nav class=\"related\" aria-label=\"Related notes\"><h2>Related notes</h2><ul class=\"\">"
                  "<li><a href=\"/b%20note\">B &lt;i&gt;x&lt;/i&gt; &amp; y</a></li>"
                  "<li><a href=\"/c\">C</a></li></ul></nav>"));
  CHECK(html.find("</article>") < html.find("class=\"related\""));
  CHECK(html.find("class=\"backlinks\"") < html.find("class=\"related\""));
  CHECK(Has(StyleSheet(), ".related"));
}

TEST_CASE("search page: chrome, noindex, prefilled box, results with escaped titles and marked snippets") {
  SearchPage p = Sample();
  p.query = "a \"b\" <c>";
  std::string html = AssembleSearchPage(p);
  CHECK(html.rfind("<!doctype html>", 0) == 0);
  CHECK(Has(html, "<meta name=\"robots\" content=\"noindex\">"));
  CHECK(Has(html, "<title>Search: a &quot;b&quot; &lt;c&gt; · Docs</title>"));
  CHECK(Has(html, kForm));
  CHECK(Has(html, "name=\"q\" placeholder=\"Search notes\" autocomplete=\"off\" enterkeyhint=\"search\" "
                  "value=\"a &quot;b&quot; &lt;c&gt;\">"));
  CHECK(Has(html, "<a class=\"site-name site-body-left-column-site-name\" href=\"/\">Docs</a>"));
  CHECK(Has(html, StyleSheetUrl()));
  CHECK(Has(html, "<li><a href=\"/folder/a%20note\">A &lt;b&gt;note&lt;/b&gt; &amp; more</a>"
                  "<p class=\"snippet\">the <mark>alpha</mark> &amp; omega</p></li>"));
  CHECK(Has(html, "<li><a href=\"/second\">Second</a></li>"));
  CHECK(Has(html, "2 results for <q>a &quot;b&quot; &lt;c&gt;</q> (1.5 ms)"));
  CHECK(!Has(html, "<b>"));
  CHECK(!Has(html, "name=\"mode\""));  // hybrid is the default: no hidden field
  CHECK(Has(html, "<script>"));
  CHECK(html.find(AssembleSearchResultsFragment(p)) != std::string::npos);
}

TEST_CASE("search page: a hit in a section links to the heading's anchor") {
  SearchPage p = Sample();
  p.results.resize(1);
  p.results[0].url = "/guides/links and urls#other-spellings";
  std::string html = AssembleSearchPage(p);
  CHECK(Has(html, "<a href=\"/guides/links%20and%20urls#other-spellings\">"));
  CHECK(!Has(html, "%23"));
}

TEST_CASE("search page: no results, empty query, error, and a non-default mode kept by the form") {
  SearchPage p = Sample();
  p.results.clear();
  p.query = "zeta <x>";
  std::string html = AssembleSearchPage(p);
  CHECK(Has(html, "<p class=\"search-empty\">No results for <q>zeta &lt;x&gt;</q>.</p>"));
  CHECK(!Has(html, "search-hits"));

  p.query = "";
  html = AssembleSearchPage(p);
  CHECK(Has(html, "<title>Search · Docs</title>"));
  CHECK(!Has(html, "No results"));
  CHECK(Has(html, "Type what you are looking for"));

  p = Sample();
  p.error = "Search is unavailable <right> now";
  p.mode = "text";
  html = AssembleSearchPage(p);
  CHECK(Has(html, "<p class=\"search-error\" role=\"alert\">Search is unavailable &lt;right&gt; now</p>"));
  CHECK(!Has(html, "search-hits"));  // an error replaces results
  CHECK(Has(html, "<input type=\"hidden\" name=\"mode\" value=\"text\">"));
}

TEST_CASE("search page: snippets keep <mark> and nothing else that is markup") {
  SearchPage p = Sample();
  p.results = {{"T", "/t", "<mark>ok</mark> <script>alert(1)</script> <img src=x onerror=y> <mark", 1, "t.md"}};
  std::string frag = AssembleSearchResultsFragment(p);
  CHECK(Has(frag, "<mark>ok</mark> &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=y&gt; &lt;mark"));
  CHECK(!Has(frag, "<script"));
  CHECK(!Has(frag, "<img"));
  // The same rule for the edge's JSON answer (the header's search box).
  CHECK(SafeSnippetHtml(p.results[0].snippet_html) ==
        "<mark>ok</mark> &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=y&gt; &lt;mark");
  CHECK(SafeSnippetHtml("a </mark><mark>b") == "a </mark><mark>b");
}

TEST_CASE("search page: a hit's href encodes the path and keeps a heading as the fragment") {
  CHECK(SearchResultHref("") == "/");
  CHECK(SearchResultHref("/") == "/");
  CHECK(SearchResultHref("/folder/a note") == "/folder/a%20note");
  CHECK(SearchResultHref("/a b#the heading") == "/a%20b#the%20heading");
  CHECK(SearchResultHref("/x\"y") == "/x%22y");
}

TEST_CASE("search page: the fragment is only the results element") {
  SearchPage p = Sample();
  std::string frag = AssembleSearchResultsFragment(p);
  CHECK(frag.rfind("<section id=\"search-results\" class=\"search-results\" aria-live=\"polite\" "
                   "data-title=\"Search: alpha · Docs\">", 0) == 0);
  CHECK(frag.size() >= 10);
  CHECK(frag.substr(frag.size() - 10) == "</section>");
  CHECK(!Has(frag, "<!doctype"));
  CHECK(!Has(frag, "<script"));
  CHECK(Has(frag, "<mark>alpha</mark>"));
}

TEST_CASE("search page: the CSP allows exactly the page's inline script") {
  std::string html = AssembleSearchPage(Sample());
  // The site script in <head>, the theme snippet as body's first child, then the page's own.
  size_t open = html.rfind("<script>");
  size_t close = html.rfind("</script>");
  REQUIRE(open != std::string::npos);
  REQUIRE(close != std::string::npos);
  CHECK(html.find("<script", open + 1) == std::string::npos);  // the last one
  // In the body: the theme snippet first, then only the page's own.
  size_t theme = html.find("<script>", html.find("</head>"));
  CHECK(html.find("<script", theme + 1) == open);
  std::string script = html.substr(open + 8, close - open - 8);
  Sha256Digest d = Sha256(script);
  std::string b64 = Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
  for (char& c : b64) c = c == '-' ? '+' : c == '_' ? '/' : c;
  b64 += "=";
  const std::string& csp = SearchPageCsp();
  CHECK(Has(csp, "script-src 'self' 'sha256-"));  // the site script and the theme snippet
  CHECK(Has(csp, " 'sha256-" + b64 + "';"));
  CHECK(Has(csp, "default-src 'none'"));
  CHECK(Has(csp, "style-src 'self'"));
  CHECK(Has(csp, "connect-src 'self'"));
  CHECK(!Has(csp, "unsafe-inline"));
  CHECK(Has(script, "fragment"));
  CHECK(Has(script, "replaceState"));
  CHECK(Has(script, "150"));
}

TEST_CASE("search page: the site name is read back from a published page's header") {
  NotePage p;
  p.site.name = "A & <B> \"C\" 'd'";
  p.title = "x";
  CHECK(SiteNameFromPage(AssembleNotePage(p)) == p.site.name);
  CHECK(SiteNameFromPage(Assemble404Page("Docs")) == "Docs");
  CHECK(SiteNameFromPage("<html><body>other layout</body></html>").empty());
  // A 404 page published by a build before layout 8 (no Publish class on the link) still names the site.
  CHECK(SiteNameFromPage("<a class=\"site-name\" href=\"/\">Old &amp; co</a>") == "Old & co");
  CHECK(SiteNameFromPage("<a class=\"site-name\" href=\"/\">unterminated").empty());
}
