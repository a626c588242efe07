// The data the site script reads: the explorer's JSON per folder, the link
// graph's chunks, publish.css's redirect, and the page markup around them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "folio/core/time.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "folio/site/vault.h"

namespace folio::site {
namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

NoteMeta Note(std::string path, std::string title, std::vector<std::string> targets = {}) {
  NoteMeta m;
  m.path = std::move(path);
  m.title = std::move(title);
  m.targets = std::move(targets);
  m.updated_ms = 1000;
  m.sha256 = m.path;
  return m;
}

Vault Sample() {
  Vault v;
  (void)v.Apply({Note("Docs/Note 10.md", "Note 10"), Note("Docs/Note 2.md", "Note 2", {"Start"}),
                 Note("Docs/Sub/Deep.md", "Deep", {"Note 10", "Start", "Missing"}), Note("Start.md", "Start"),
                 Note("zeta/a.md", "A", {"Deep"}), Note("Alpha/b.md", "B")},
                {});
  return v;
}

// The body of the generated page at `url` ("" when it is not built).
std::string Body(const std::map<std::string, GeneratedPage>& pages, const std::string& url) {
  auto it = pages.find(url);
  return it == pages.end() ? "" : it->second.Render();
}

}  // namespace

TEST_CASE("explorer: natural order, folders first, note counts, one JSON per folder") {
  CHECK(NaturalLess("Note 2", "Note 10"));
  CHECK(!NaturalLess("Note 10", "Note 2"));
  CHECK(NaturalLess("alpha", "Beta"));  // case-insensitive
  CHECK(NaturalLess("a 007", "a 8"));  // leading zeros do not count
  CHECK(NaturalLess("a", "a1"));
  CHECK(!NaturalLess("x", "x"));

  Vault v = Sample();
  auto pages = BuildListings(v, SiteInfo{});
  std::string root = Body(pages, "/_/tree/");
  CHECK(pages.at("/_/tree/").content_type == "application/json");
  // Folders first (Alpha, Docs, zeta: natural, case-insensitive), then notes.
  CHECK(root ==
        "{\"folders\":[{\"name\":\"Alpha\",\"path\":\"Alpha\",\"tree\":\"/_/tree/alpha/\",\"url\":\"/alpha/\",\"notes\":1},"
        "{\"name\":\"Docs\",\"path\":\"Docs\",\"tree\":\"/_/tree/docs/\",\"url\":\"/docs/\",\"notes\":3},"
        "{\"name\":\"zeta\",\"path\":\"zeta\",\"tree\":\"/_/tree/zeta/\",\"url\":\"/zeta/\",\"notes\":1}],"
        "\"notes\":[{\"title\":\"Start\",\"url\":\"/start\"}],\"more\":0,\"url\":\"/\"}");
  std::string docs = Body(pages, "/_/tree/docs/");
  CHECK(docs ==
        "{\"folders\":[{\"name\":\"Sub\",\"path\":\"Docs/Sub\",\"tree\":\"/_/tree/docs/sub/\",\"url\":\"/docs/sub/\",\"notes\":1}],"
        "\"notes\":[{\"title\":\"Note 2\",\"url\":\"/docs/note-2\"},{\"title\":\"Note 10\",\"url\":\"/docs/note-10\"}],"
        "\"more\":0,\"url\":\"/docs/\"}");
  CHECK(Has(Body(pages, "/_/tree/docs/sub/"), "\"title\":\"Deep\""));

  // A folder's list is capped; "more" says how many its page lists besides.
  ListingOptions small;
  small.list_limit = 1;
  CHECK(Has(BuildListings(v, SiteInfo{}, small).at("/_/tree/docs/").Render(), "\"more\":1,"));
}

TEST_CASE("explorer: a new note rewrites its folder's JSON and those above, not its siblings' pages") {
  Vault v = Sample();
  auto before = BuildListings(v, SiteInfo{});
  NoteMeta n = Note("Docs/Sub/New.md", "New");
  ListedAs was = ListedNow(v, n.path);
  Impact impact = v.Apply({n}, {});
  CHECK(impact.render == std::set<std::string>{"Docs/Sub/New.md"});  // no sibling page re-renders
  ListingFilter f;
  MarkDirty(n.path, was, ListedNow(v, n.path), &f);
  auto part = BuildListings(v, SiteInfo{}, {}, &f);
  for (const char* url : {"/_/tree/", "/_/tree/docs/", "/_/tree/docs/sub/"}) {
    REQUIRE_MESSAGE(part.count(url), url);
    CHECK_MESSAGE(part.at(url).fingerprint != before.at(url).fingerprint, url);  // counts or entries changed
  }
  CHECK(part.count("/_/tree/zeta/") == 0);
  CHECK(part.count("/_/tree/alpha/") == 0);
  CHECK(Has(part.at("/_/tree/docs/sub/").Render(), "\"title\":\"New\""));
  CHECK(f.Covers("/_/tree/docs/sub/", 200));
  CHECK(!f.Covers("/_/tree/zeta/", 200));
}

TEST_CASE("explorer: the folder's order is kept through retitles and removals; the cap takes its first notes") {
  // The JSON reads the index's natural order instead of sorting the folder:
  // after notes change title, leave and come back, it must equal the order
  // of a vault built afresh with the notes as they now are.
  Vault v;
  std::vector<NoteMeta> notes;
  for (int i = 0; i < 30; ++i) notes.push_back(Note("F/n" + std::to_string(i) + ".md", "Note " + std::to_string(i)));
  (void)v.Apply(notes, {});
  (void)v.Apply({Note("F/n3.md", "note 25"), Note("F/n20.md", "Alpha 100"), Note("F/n21.md", "Alpha 9")},
                {"F/n7.md", "F/n11.md"});
  (void)v.Apply({Note("F/n7.md", "Note 7")}, {"F/n21.md"});
  Vault fresh;
  std::vector<NoteMeta> now;
  for (int i = 0; i < 30; ++i) {
    if (const NoteMeta* m = v.Find("F/n" + std::to_string(i) + ".md")) now.push_back(Note(m->path, m->title));
  }
  (void)fresh.Apply(now, {});
  ListingOptions capped;
  capped.list_limit = 5;
  for (const ListingOptions& opt : {ListingOptions{}, capped}) {
    std::string got = BuildListings(v, SiteInfo{}, opt).at("/_/tree/f/").Render();
    CHECK(got == BuildListings(fresh, SiteInfo{}, opt).at("/_/tree/f/").Render());
  }
  std::string top5 = BuildListings(v, SiteInfo{}, capped).at("/_/tree/f/").Render();
  CHECK(Has(top5, "{\"title\":\"Alpha 100\",\"url\":\"/f/n20\"},{\"title\":\"Note 0\""));
  CHECK(Has(top5, "\"more\":23,"));  // 28 notes, 5 shown
  CHECK(!Has(top5, "\"Alpha 9\""));   // gone
}

TEST_CASE("vault: a text-only edit keeps its links and moves in /recent only; a renamed target still relinks it") {
  // Apply skips the link and listing bookkeeping a text-only edit cannot
  // change (issue 26); these are the cases where skipping would go wrong.
  Vault v = Sample();
  NoteMeta edit = Note("Docs/Note 2.md", "Note 2", {"Start"});
  edit.updated_ms = 5000;  // newer than every other note
  (void)v.Apply({edit}, {});
  CHECK(v.Find("Docs/Note 2.md")->out == std::vector<std::string>{"Start.md"});
  CHECK(v.Backlinks("Start.md") == std::vector<std::string>{"Docs/Note 2.md", "Docs/Sub/Deep.md"});
  std::string recent = Body(BuildListings(v, SiteInfo{}), "/_/recent");
  CHECK(recent.find("Note 2") < recent.find("Note 10"));  // newest first
  CHECK(recent.find("Note 2") < recent.find("Start"));
  // The same edit again, while its target is renamed in the same change: the
  // link (by name) now dangles, then resolves to the new note of that name.
  edit.updated_ms = 6000;
  (void)v.Apply({edit, Note("Other/Start.md", "Start 2")}, {"Start.md"});
  CHECK(v.Find("Docs/Note 2.md")->out == std::vector<std::string>{"Other/Start.md"});
  CHECK(v.Backlinks("Other/Start.md") == std::vector<std::string>{"Docs/Note 2.md", "Docs/Sub/Deep.md"});
  // A title change is not text-only: the listings show the new title.
  NoteMeta retitled = Note("Docs/Note 2.md", "Second note", {"Start"});
  retitled.updated_ms = 6000;
  (void)v.Apply({retitled}, {});
  std::string docs = Body(BuildListings(v, SiteInfo{}), "/_/tree/docs/");
  CHECK(Has(docs, "\"Second note\""));
  CHECK(!Has(docs, "\"Note 2\""));
}

TEST_CASE("graph: chunks hold each note's URL, title and resolved links; the index names them") {
  Vault v = Sample();
  auto pages = BuildListings(v, SiteInfo{});
  CHECK(Body(pages, "/_/graph.json") == "{\"notes\":6,\"chunks\":[\"/_/graph/0.json\"]}");
  std::string chunk = Body(pages, "/_/graph/0.json");
  CHECK(Has(chunk, "[\"/docs/sub/deep\",\"Deep\",[\"/docs/note-10\",\"/start\"]]"));  // "Missing" is no edge
  CHECK(Has(chunk, "[\"/start\",\"Start\",[]]"));
  CHECK(Has(chunk, "[\"/zeta/a\",\"A\",[\"/docs/sub/deep\"]]"));
  CHECK(pages.count("/_/graph"));
  CHECK(Has(Body(pages, "/_/graph"), "class=\"global-graph\" data-graph=\"/_/graph.json\""));
  CHECK(Has(Body(pages, "/_/graph"), "<noscript>"));

  // The chunk count grows by powers of two with the vault.
  CHECK(ListingIndex::GraphChunksFor(1000) == 1);
  CHECK(ListingIndex::GraphChunksFor(1001) == 2);
  CHECK(ListingIndex::GraphChunksFor(10'000) == 16);
}

TEST_CASE("graph: only a change of title, URL, links or presence marks the note's chunk") {
  Vault v = Sample();
  auto all = BuildListings(v, SiteInfo{});
  // The same links and title, new text: no chunk to build.
  NoteMeta same = Note("Docs/Note 2.md", "Note 2", {"Start"});
  same.sha256 = "changed";
  same.updated_ms = 2000;
  ListedAs was = ListedNow(v, same.path);
  (void)v.Apply({same}, {});
  ListingFilter f;
  MarkDirty(same.path, was, ListedNow(v, same.path), &f);
  CHECK(f.graph_paths.empty());
  // A new link: the chunk is rebuilt and differs.
  NoteMeta linked = Note("Docs/Note 2.md", "Note 2", {"Start", "Deep"});
  was = ListedNow(v, linked.path);
  (void)v.Apply({linked}, {});
  ListingFilter g;
  MarkDirty(linked.path, was, ListedNow(v, linked.path), &g);
  CHECK(g.graph_paths == std::set<std::string, std::less<>>{"Docs/Note 2.md"});
  auto part = BuildListings(v, SiteInfo{}, {}, &g);
  REQUIRE(part.count("/_/graph/0.json"));
  CHECK(part.at("/_/graph/0.json").fingerprint != all.at("/_/graph/0.json").fingerprint);
  CHECK(Has(part.at("/_/graph/0.json").Render(), "[\"/docs/note-2\",\"Note 2\",[\"/docs/sub/deep\",\"/start\"]]"));
  CHECK(part.count("/_/graph") == 0);  // the page itself does not change
}

TEST_CASE("publish.css: a root publish.css is linked after folio's stylesheet through a redirect") {
  Vault v = Sample();
  CHECK(BuildListings(v, SiteInfo{}).count("/publish.css") == 0);
  std::vector<std::string> unused;
  (void)v.ApplyAttachments({{"publish.css", "abcdef0123456789abcdef", ""}}, {}, &unused);
  auto pages = BuildListings(v, SiteInfo{});
  REQUIRE(pages.count("/publish.css"));
  CHECK(pages.at("/publish.css").status == 301);
  CHECK(pages.at("/publish.css").location == v.FindAttachment("publish.css")->url);
  CHECK(Vault::IsReservedUrl("/publish.css"));

  NotePage p;
  p.url = "/a";
  p.title = "A";
  p.site.publish_css_url = "/publish.css";
  std::string html = AssembleNotePage(p);
  size_t folio_css = html.find(StyleSheetUrl()), author_css = html.find("href=\"/publish.css\"");
  REQUIRE(folio_css != std::string::npos);
  REQUIRE(author_css != std::string::npos);
  CHECK(folio_css < author_css);  // the author's rules win
  p.site.publish_css_url.clear();
  CHECK(!Has(AssembleNotePage(p), "publish.css"));
}

TEST_CASE("layout: a note page carries its explorer branch, the local graph's place and the site script") {
  NotePage p;
  p.url = "/docs/sub/deep";
  p.title = "Deep <1>";
  p.breadcrumbs = {{"Docs", "/docs/", ""}, {"Sub", "/docs/sub/", ""}};
  std::string html = AssembleNotePage(p);
  // Obsidian Publish's tree classes (.nav-view-outer > .nav-view > .tree-item > .tree-item-self >
  // .tree-item-inner, .tree-item-children) on folio's details/summary, data-path = the vault path.
  CHECK(Has(html, "<nav class=\"site-body-left-column explorer\" id=\"explorer\" aria-label=\"Explorer\">"
                  "<div class=\"site-body-left-column-inner\"><div class=\"nav-view-outer\">"
                  "<details class=\"explorer-box\" open>"
                  "<summary>Explorer</summary><ul class=\"tree nav-view\" data-tree=\"/_/tree/\">"
                  "<li class=\"tree-folder tree-item\"><details open data-tree=\"/_/tree/docs/\">"
                  "<summary class=\"tree-item-self mod-collapsible\" data-path=\"Docs\"><a class=\"tree-item-inner\" "
                  "href=\"/docs/\">Docs</a></summary><ul class=\"tree tree-item-children\">"
                  "<li class=\"tree-folder tree-item\"><details open data-tree=\"/_/tree/docs/sub/\">"
                  "<summary class=\"tree-item-self mod-collapsible\" data-path=\"Docs/Sub\"><a class=\"tree-item-inner\" "
                  "href=\"/docs/sub/\">Sub</a></summary><ul class=\"tree tree-item-children\">"
                  "<li class=\"tree-note tree-item\"><a class=\"tree-item-self mod-active\" data-path=\"Docs/Sub/Deep &lt;1&gt;.md\" "
                  "href=\"/docs/sub/deep\" aria-current=\"page\"><span class=\"tree-item-inner\">Deep &lt;1&gt;</span></a></li>"
                  "</ul></details></li></ul></details></li></ul></details></div></div></nav>"));
  CHECK(Has(html, "<section class=\"local-graph\" data-graph=\"/_/graph.json\" data-url=\"/docs/sub/deep\" hidden>"));
  CHECK(Has(html, "<script src=\"" + SiteScriptUrl() + "\" defer></script>"));
  CHECK(Has(html, "<a href=\"/_/graph\">Graph</a>"));
  CHECK(SiteScriptUrl().rfind("/_/folio.", 0) == 0);  // not /assets/: those are uploads, never script
  CHECK(Has(SiteScript(), "use strict"));
  // The theme is applied before the first paint by the one inline snippet the
  // policy allows: body's first child, before the header.
  size_t body = html.find("<body");
  CHECK(html.find("localStorage.getItem(\"folio-theme\")") > body);
  CHECK(html.find("localStorage.getItem(\"folio-theme\")") < html.find("<header"));
  CHECK(Has(html, "><script>(function(){var t,d=document.documentElement;"));
  CHECK(Has(PageCsp(), "script-src 'self' 'sha256-"));
  // Light and dark: Obsidian's classes on body, the system's without script.
  CHECK(Has(StyleSheet(), "\n.theme-dark{"));
  CHECK(Has(StyleSheet(), "@media (prefers-color-scheme:dark){body:not(.theme-light):not(.theme-dark){"));
}

TEST_CASE("dates: frontmatter updated orders /recent; RSS dates are RFC 822 from date or first seen") {
  Vault v;
  NoteMeta old_note = Note("Old.md", "Old"), new_note = Note("New.md", "New");
  old_note.updated_ms = 5'000'000'000'000;  // pushed later...
  old_note.modified_ms = 1'700'000'000'000;  // ...but its frontmatter says it was updated long ago
  new_note.updated_ms = 1'000'000'000'000;
  new_note.modified_ms = 1'800'000'000'000;
  new_note.date_ms = 1'790'000'000'000;
  (void)v.Apply({old_note, new_note}, {});
  auto pages = BuildListings(v, SiteInfo{});
  std::string recent = Body(pages, "/_/recent");
  CHECK(recent.find(">New<") < recent.find(">Old<"));
  CHECK(Has(recent, "<time>2027-01-15</time>"));  // the frontmatter's updated day, not the push's
  std::string rss = Body(pages, "/rss.xml");
  CHECK(Has(rss, "<pubDate>" + HttpDate(1'790'000'000) + "</pubDate>"));  // New: its frontmatter date
  // Old has no date: when ingest first saw it, which a later change keeps.
  CHECK(v.Find("Old.md")->created_ms == 5'000'000'000'000);
  NoteMeta changed = Note("Old.md", "Old");
  changed.updated_ms = 6'000'000'000'000;
  (void)v.Apply({changed}, {});
  CHECK(v.Find("Old.md")->created_ms == 5'000'000'000'000);
  CHECK(Has(Body(BuildListings(v, SiteInfo{}), "/rss.xml"), "<pubDate>" + HttpDate(5'000'000'000) + "</pubDate>"));
  std::string sitemap = Body(pages, "/sitemap.xml");
  CHECK(Has(sitemap, "<lastmod>2023-11-14</lastmod>"));  // Old's frontmatter updated
}

}  // namespace folio::site
