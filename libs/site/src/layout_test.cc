// The reader page's DOM contract (docs/themes.md): Obsidian Publish's class
// names on the chrome every HTML page shares, the swap regions client-side
// navigation replaces, publish.css on every page, and the stylesheet written
// in Obsidian's variables.
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/site/search_page.h"

namespace folio::site {
namespace {

bool Has(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

size_t Count(std::string_view s, std::string_view what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string_view::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

NotePage LongNote() {
  NotePage p;
  p.site.name = "Docs";
  p.site.publish_css_url = "/publish.css";
  p.url = "/guides/intro";
  p.title = "Intro";
  p.body_html = "<h1>Intro</h1><h2 id=\"one\">One</h2><p>x</p><h2 id=\"two\">Two</h2><p>y</p>";
  p.toc = {{2, "One", "one"}, {2, "Two", "two"}};
  p.breadcrumbs = {{"Guides", "/guides/", ""}};
  p.backlinks = {{"Home", "/", ""}};
  p.backlinks_total = 1;
  p.cssclasses = {"wide"};
  return p;
}

// Every HTML page: header, then the three columns, in this order, with the swap regions.
void CheckChrome(const std::string& html) {
  CAPTURE(html.substr(0, 200));
  size_t container = html.find("<div class=\"published-container has-navigation");
  size_t header = html.find("<header class=\"site-header\">");
  size_t body = html.find("<div class=\"site-body\">");
  size_t left = html.find("<nav class=\"site-body-left-column explorer\" id=\"explorer\" aria-label=\"Explorer\">");
  size_t center = html.find("<main class=\"site-body-center-column\" data-folio-swap=\"main\">"
                            "<div class=\"publish-renderer\"><div class=\"markdown-preview-view markdown-rendered");
  size_t sizer = html.find("<div class=\"markdown-preview-sizer markdown-preview-section\">");
  size_t right = html.find("<aside class=\"site-body-right-column\" data-folio-swap=\"aside\">");
  size_t footer = html.find("<footer class=\"site-footer\">");
  REQUIRE(header != std::string::npos);
  // Obsidian Publish's wrapper holds header and columns, not the footer.
  REQUIRE(container != std::string::npos);
  CHECK(container < header);
  CHECK(Has(html, "</aside></div></div>\n<footer"));
  CHECK(html.find("is-readable-line-width\">", container) < header);
  CHECK(header < body);
  CHECK(body < left);
  CHECK(left < center);
  CHECK(center < sizer);
  CHECK(sizer < right);
  CHECK(right < footer);
  CHECK(Has(html, "</div></div></div></main>"));
  // The explorer as Publish's trees; the site name and search box with Publish's classes.
  CHECK(html.find("<div class=\"site-body-left-column-inner\"><div class=\"nav-view-outer\">", left) < center);
  CHECK(html.find("<ul class=\"tree nav-view\" data-tree=\"/_/tree/\">", left) < center);
  CHECK(Has(html, "<label class=\"search-bar\">"));
  CHECK(Count(html, "data-folio-swap=") == 2);
  // The header's controls, in the contract's order.
  size_t explorer_button = html.find("<button class=\"site-explorer-toggle\" type=\"button\" aria-controls=\"explorer\"");
  size_t name = html.find("<a class=\"site-name site-body-left-column-site-name\" href=\"/\">");
  size_t nav = html.find("<nav class=\"site-nav\">");
  size_t search = html.find("<form class=\"search-box\"");
  size_t outline_button = html.find("<button class=\"site-outline-toggle\" type=\"button\" aria-controls=\"outline\"");
  CHECK(header < explorer_button);
  CHECK(explorer_button < name);
  CHECK(name < nav);
  CHECK(nav < search);
  CHECK(search < outline_button);
  CHECK(outline_button < html.find("</header>"));
  // The theme snippet is body's first child (before the first paint).
  CHECK(html.find("<script>(function(){var t,d=document.documentElement;") > html.find("<body"));
  CHECK(html.find("<script>(function(){var t,d=document.documentElement;") < header);
}

TEST_CASE("layout: a note page follows the DOM contract: explorer | note | outline, backlinks, graph") {
  NotePage p = LongNote();
  std::string html = AssembleNotePage(p);
  CheckChrome(html);
  CHECK(Has(html, "<body class=\"wide\">"));  // cssclasses; the theme class comes from the snippet
  // ... and on .markdown-preview-view, as Obsidian puts them (themes write ".wide.markdown-preview-view").
  CHECK(Has(html, "<div class=\"markdown-preview-view markdown-rendered wide\">"));
  CHECK(Has(html, "<div class=\"published-container has-navigation has-outline has-graph is-readable-line-width\">"));
  // The note opens with its own H1: that is its title, not Publish's .page-header (a theme hiding
  // .page-header must not hide it); a note without one gets a generated h1.page-header.
  CHECK(!Has(html, "page-header"));
  size_t main = html.find("data-folio-swap=\"main\"");
  size_t aside = html.find("data-folio-swap=\"aside\"");
  // The centre: breadcrumbs and the article (title, body); no inline table of contents.
  CHECK(html.find("<nav class=\"breadcrumbs\"") > main);
  CHECK(html.find("<article>") > main);
  CHECK(html.find("</article>") < aside);
  CHECK(!Has(html, "<details class=\"toc\""));
  // The right column: outline first (sticky in CSS), then backlinks and the local graph.
  size_t outline = html.find("<nav class=\"outline outline-view-outer\" id=\"outline\" aria-labelledby=\"outline-title\">");
  size_t backlinks = html.find("<section class=\"backlinks\">");
  size_t graph = html.find("<section class=\"local-graph\"");
  CHECK(aside < outline);
  CHECK(outline < backlinks);
  CHECK(backlinks < graph);
  CHECK(graph < html.find("</aside>"));
  CHECK(Has(html, "<ul class=\"outline-view\"><li class=\"toc-h2 tree-item\"><a class=\"tree-item-self\" href=\"#one\">"
                  "<span class=\"tree-item-inner\">One</span></a></li><li class=\"toc-h2 tree-item\">"
                  "<a class=\"tree-item-self\" href=\"#two\"><span class=\"tree-item-inner\">Two</span></a></li></ul>"));
  // The header's outline button is shown only with an outline.
  CHECK(Has(html, "aria-label=\"Outline\" title=\"Outline\"><span"));
  p.toc.resize(1);
  std::string short_note = AssembleNotePage(p);
  CHECK(!Has(short_note, "class=\"outline"));
  CHECK(Has(short_note, "<div class=\"published-container has-navigation has-graph is-readable-line-width\">"));
  p.body_html = "<p>No heading</p>";
  CHECK(Has(AssembleNotePage(p), "<article><h1 class=\"page-header\">Intro</h1>"));
  CHECK(Has(short_note, "aria-label=\"Outline\" title=\"Outline\" hidden><span"));
}

TEST_CASE("layout: listing, folder, 404, 410, graph and search pages share the chrome") {
  ListingPage folder;
  folder.site.name = "Docs";
  folder.url = "/docs/sub/";
  folder.title = "Sub";
  folder.breadcrumbs = {{"Docs", "/docs/", ""}};
  folder.items = {{"Deep", "/docs/sub/deep", ""}};
  std::string f = AssembleListingPage(folder);
  CheckChrome(f);
  // A folder page: breadcrumbs from the root, and the explorer's branch open down to it, marked.
  CHECK(Has(f, "<nav class=\"breadcrumbs\" aria-label=\"Breadcrumbs\"><a href=\"/docs/\">Docs</a> <span>/</span> "
               "<span aria-current=\"page\">Sub</span></nav>"));
  CHECK(Has(f, "<li class=\"tree-folder tree-item\"><details open data-tree=\"/_/tree/docs/\">"
               "<summary class=\"tree-item-self mod-collapsible\" data-path=\"Docs\"><a class=\"tree-item-inner\" "
               "href=\"/docs/\">Docs</a></summary><ul class=\"tree tree-item-children\"><li class=\"tree-folder tree-item\">"
               "<details open data-tree=\"/_/tree/docs/sub/\"><summary class=\"tree-item-self mod-collapsible mod-active\" "
               "data-path=\"Docs/Sub\"><a class=\"tree-item-inner\" href=\"/docs/sub/\" aria-current=\"page\">Sub</a>"
               "</summary><ul class=\"tree tree-item-children\"></ul>"));
  // Listing pages have neither outline nor local graph.
  CHECK(Has(f, "<div class=\"published-container has-navigation is-readable-line-width\">"));
  ListingPage tags;
  tags.url = "/_/tags/x";
  tags.title = "#x";
  std::string t = AssembleListingPage(tags);
  CheckChrome(t);
  CHECK(!Has(t, "aria-current=\"page\""));
  CHECK(!Has(t, "class=\"breadcrumbs\""));
  SiteInfo site;
  site.name = "Docs";
  CheckChrome(AssembleHomePage("Docs", {}, 0));
  CheckChrome(Assemble404Page(site));
  CheckChrome(AssembleGonePage(site));
  CheckChrome(AssembleGraphPage(site));
  SearchPage sp;
  sp.site = site;
  CheckChrome(AssembleSearchPage(sp));
}

TEST_CASE("layout: publish.css is linked on every page, the 404 and 410 pages included") {
  SiteInfo site;
  site.name = "Docs";
  site.publish_css_url = "/publish.css";
  const std::string link = "<link rel=\"stylesheet\" href=\"/publish.css\">";
  ListingPage listing;
  listing.site = site;
  listing.url = "/_/recent";
  listing.title = "Recent";
  SearchPage sp;
  sp.site = site;
  for (const std::string& html : {Assemble404Page(site), AssembleGonePage(site), AssembleListingPage(listing),
                                  AssembleGraphPage(site), AssembleSearchPage(sp), AssembleNotePage(LongNote())}) {
    CHECK(Has(html, link));
    CHECK(html.find(StyleSheetUrl()) < html.find(link));  // after folio's, so the author's rules win
  }
  CHECK(!Has(Assemble404Page("Docs"), "publish.css"));
}

TEST_CASE("style: written in Obsidian's variables, with Obsidian's default callout colours") {
  const std::string& css = StyleSheet();
  for (std::string_view v : {"--background-primary:", "--background-secondary:", "--background-modifier-border:",
                             "--text-normal:", "--text-muted:", "--text-faint:", "--text-accent:",
                             "--interactive-accent:", "--link-color:", "--font-text-size:", "--font-text:",
                             "--font-monospace:", "--line-height-normal:", "--file-line-width:", "--h1-size:",
                             "--code-background:", "--text-highlight-bg:", "--tag-background:", "--table-border-color:",
                             "--checklist-done-decoration:line-through", "--checklist-done-color:var(--text-muted)"}) {
    CAPTURE(v);
    CHECK(Has(css, v));
  }
  CHECK(Has(css, "--accent-h:254;--accent-s:80%;--accent-l:68%"));
  // Light values: blue 8,109,221; cyan 0,191,188; green 8,185,78; orange 236,117,0; red 233,49,71; purple 120,82,238.
  CHECK(Has(css, "--color-blue-rgb:8,109,221"));
  CHECK(Has(css, "--color-cyan-rgb:0,191,188"));
  CHECK(Has(css, "--color-green-rgb:8,185,78"));
  CHECK(Has(css, "--color-orange-rgb:236,117,0"));
  CHECK(Has(css, "--color-red-rgb:233,49,71"));
  CHECK(Has(css, "--color-purple-rgb:120,82,238"));
  CHECK(Has(css, "--callout-quote:158,158,158"));
  CHECK(Has(css, "--callout-info:var(--color-blue-rgb);--callout-todo:var(--color-blue-rgb)"));
  CHECK(Has(css, "--callout-tip:var(--color-cyan-rgb);--callout-important:var(--color-cyan-rgb)"));
  CHECK(Has(css, ".callout-tip,.callout[data-callout=tip],.callout[data-callout=hint]{--callout-color:var(--callout-tip)}"));
  CHECK(Has(css, "background-color:rgba(var(--callout-color),.1)"));
  // One-class theme selectors, as Obsidian's: a publish.css rule of the same form, later, wins.
  CHECK(Has(css, "\nbody,.theme-light{"));
  CHECK(Has(css, "\n.theme-dark{"));
  CHECK(!Has(css, "body.theme-dark{"));
  // Ordered task lists keep their numbers; done tasks are struck through and muted.
  CHECK(Has(css, "ol>li.task-list-item{list-style:decimal}"));
  CHECK(Has(css, "text-decoration:var(--checklist-done-decoration);color:var(--checklist-done-color)"));
  // Three columns at >= 1200 px, two below, one on phones.
  CHECK(Has(css, "grid-template-areas:\"left center right\""));
  CHECK(Has(css, "@media (max-width:1199.98px){"));
  CHECK(Has(css, ".site-body{grid-template-columns:var(--explorer-width) minmax(0,1fr);grid-template-areas:\"left center\" \"left right\"}"));
  CHECK(Has(css, "@media (max-width:799.98px){"));
}

TEST_CASE("csp: the theme snippet's hash is in every page's policy") {
  CHECK(Has(PageCsp(), ScriptHashSource("(function(){var t,d=document.documentElement;try{t=localStorage.getItem("
                                        "\"folio-theme\")}catch(e){}if(t===\"light\"||t===\"dark\")d.dataset.theme=t;"
                                        "else t=matchMedia(\"(prefers-color-scheme: dark)\").matches?\"dark\":\"light\";"
                                        "document.body.classList.add(\"theme-\"+t);d.classList.add(\"js\")})();")));
}

}  // namespace
}  // namespace folio::site
