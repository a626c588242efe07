#include <doctest/doctest.h>

#include "folio/site/layout.h"
#include "folio/site/vault.h"

using namespace folio::site;

namespace {
NoteMeta Meta(std::string path, std::vector<std::string> targets, std::string title = "") {
  NoteMeta m;
  m.path = std::move(path);
  m.targets = std::move(targets);
  m.title = title.empty() ? m.path : title;
  return m;
}
std::set<std::string> S(std::initializer_list<std::string> l) { return l; }
}  // namespace

TEST_CASE("vault: first import renders every note and computes backlinks") {
  Vault v;
  auto imp = v.Apply({Meta("a.md", {"b"}), Meta("b.md", {}), Meta("Dir/c.md", {"a", "missing"})}, {});
  CHECK(imp.render == S({"a.md", "b.md", "Dir/c.md"}));
  CHECK(imp.home_changed);
  CHECK(v.Find("Dir/c.md")->url == "/dir/c");
  CHECK(v.Backlinks("a.md") == std::vector<std::string>{"Dir/c.md"});
  CHECK(v.Backlinks("b.md") == std::vector<std::string>{"a.md"});
}

TEST_CASE("vault: ForEachBacklink visits a hub's sources and a leaf's, in path order") {
  Vault v;
  std::vector<NoteMeta> notes{Meta("hub.md", {}), Meta("leaf.md", {})};
  std::vector<std::string> hub_sources;
  for (int i = 0; i < 200; ++i) {
    std::string path = "n/" + std::to_string(1000 + i) + ".md";
    notes.push_back(Meta(path, i == 7 ? std::vector<std::string>{"hub", "leaf"} : std::vector<std::string>{"hub"}));
    hub_sources.push_back(path);
  }
  v.Apply(std::move(notes), {});
  std::vector<std::string> seen;  // the hub: every note but itself and the leaf (the side-by-side walk)
  v.ForEachBacklink("hub.md", [&](const NoteMeta& n) { seen.push_back(n.path); });
  CHECK(seen == hub_sources);
  seen.clear();  // the leaf: one source (looked up)
  v.ForEachBacklink("leaf.md", [&](const NoteMeta& n) { seen.push_back(n.path); });
  CHECK(seen == std::vector<std::string>{"n/1007.md"});
  seen.clear();
  v.ForEachBacklink("n/1000.md", [&](const NoteMeta& n) { seen.push_back(n.path); });
  CHECK(seen.empty());
}

TEST_CASE("vault: a content change with the same links renders only that note") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"b"}), Meta("b.md", {}), Meta("c.md", {})}, {});
  auto imp = v.Apply({Meta("a.md", {"b"})}, {});
  CHECK(imp.render == S({"a.md"}));
  CHECK(!imp.home_changed);
}

TEST_CASE("vault: a new link re-renders the target (its backlinks changed)") {
  Vault v;
  (void)v.Apply({Meta("a.md", {}), Meta("b.md", {}), Meta("c.md", {})}, {});
  auto imp = v.Apply({Meta("a.md", {"c"})}, {});
  CHECK(imp.render == S({"a.md", "c.md"}));
}

TEST_CASE("vault: adding a note that dangling links now resolve to re-renders the linkers") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"New"}), Meta("b.md", {})}, {});
  CHECK(v.Find("a.md")->out.empty());
  auto imp = v.Apply({Meta("New.md", {})}, {});
  CHECK(imp.render == S({"New.md", "a.md"}));
  CHECK(v.Backlinks("New.md") == std::vector<std::string>{"a.md"});
}

TEST_CASE("vault: deleting a note re-renders linkers and its link targets") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"b"}), Meta("b.md", {"c"}), Meta("c.md", {}), Meta("d.md", {})}, {});
  auto imp = v.Apply({}, {"b.md"});
  CHECK(imp.render == S({"a.md", "c.md"}));
  CHECK(imp.deleted_urls == std::vector<std::string>{"/b"});
  CHECK(v.Find("b.md") == nullptr);
  CHECK(v.Backlinks("c.md").empty());
}

TEST_CASE("vault: a title change re-renders the pages showing it as a backlink") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"b"}, "A"), Meta("b.md", {}), Meta("c.md", {})}, {});
  auto imp = v.Apply({Meta("a.md", {"b"}, "A renamed")}, {});
  CHECK(imp.render == S({"a.md", "b.md"}));
  CHECK(imp.home_changed);
}

TEST_CASE("vault: URL collisions and reserved URLs get a stable fallback and a warning") {
  Vault v;
  auto imp = v.Apply({Meta("A b.md", {}), Meta("a-b.md", {}), Meta("metrics.md", {})}, {});
  std::set<std::string> urls;
  for (const auto& [p, n] : v.notes()) urls.insert(n.url);
  CHECK(urls.size() == 3);
  CHECK(urls.count("/a-b") == 1);
  CHECK(urls.count("/metrics") == 0);
  size_t warned = 0;
  for (const auto& [p, w] : imp.url_warnings) warned += w.size();
  CHECK(warned == 2);
}

TEST_CASE("vault: reload from stored metadata gives the same graph") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"b"}), Meta("b.md", {"a"})}, {});
  Vault w;
  for (const auto& [p, n] : v.notes()) w.Load(n);
  w.Rebuild();
  CHECK(w.Backlinks("a.md") == v.Backlinks("a.md"));
  CHECK(w.Backlinks("b.md") == v.Backlinks("b.md"));
}

TEST_CASE("layout: complete page with escaped title, stylesheet link, backlinks") {
  NotePage p;
  p.site.name = "Docs";
  p.title = "A <b> note";
  p.body_html = "<p>hi</p>";
  p.backlinks = {{"Other", "/other note", ""}};
  std::string html = AssembleNotePage(p);
  CHECK(html.rfind("<!doctype html>", 0) == 0);
  CHECK(html.find("<title>A &lt;b&gt; note · Docs</title>") != std::string::npos);
  CHECK(html.find(StyleSheetUrl()) != std::string::npos);
  CHECK(html.find("<style") == std::string::npos);
  CHECK(html.find("href=\"/other%20note\"") != std::string::npos);
  CHECK(StyleSheet().find("prefers-color-scheme:dark") != std::string::npos);
}

TEST_CASE("layout: a bounded backlinks list says how many more exist") {
  NotePage p;
  p.site.name = "S";
  p.title = "Hub";
  p.backlinks = {{"A", "/a", ""}};
  p.backlinks_total = 1200;
  CHECK(AssembleNotePage(p).find("and 1199 more") != std::string::npos);
}

#include "folio/site/listings.h"

namespace {
NoteMeta Full(std::string path, std::vector<std::string> targets, std::vector<std::string> embeds = {},
              std::vector<std::string> tags = {}, int64_t updated = 1) {
  NoteMeta m = Meta(std::move(path), std::move(targets));
  m.embeds = std::move(embeds);
  for (const auto& e : m.embeds) m.targets.push_back(e);
  m.tags = std::move(tags);
  m.updated_ms = updated;
  return m;
}
}  // namespace

TEST_CASE("vault: notes embedding a changed note re-render, transitively") {
  Vault v;
  (void)v.Apply({Full("a.md", {}, {"b"}), Full("b.md", {}, {"c"}), Full("c.md", {}), Full("d.md", {"c"})}, {});
  auto imp = v.Apply({Full("c.md", {}, {}, {}, 2)}, {});
  // c itself, b embeds c, a embeds b; d only links to c (no re-render).
  CHECK(imp.render == S({"a.md", "b.md", "c.md"}));
}

TEST_CASE("vault: the link maps follow notes through reload, delete and re-add (they hold the stored paths)") {
  Vault v;
  // Loaded as stored, then reloaded with other links: the old links go.
  v.Load(Full("a.md", {"c"}, {"b"}));
  v.Load(Full("b.md", {}));
  v.Load(Full("c.md", {}));
  v.Load(Full("a.md", {}, {"b"}));
  v.Rebuild();
  CHECK(v.Backlinks("c.md").empty());
  CHECK(v.Backlinks("b.md") == std::vector<std::string>{"a.md"});
  // a (embeds b) deleted: b's change renders b alone; nothing links to b.
  (void)v.Apply({}, {"a.md"});
  CHECK(v.Apply({Full("b.md", {}, {}, {}, 2)}, {}).render == S({"b.md"}));
  CHECK(v.Backlinks("b.md").empty());
  // Re-added under a new path that links to and embeds b, with a temporary
  // path string: the maps must not refer to the caller's copy.
  {
    std::string path = std::string("x/") + "again.md";
    (void)v.Apply({Full(path, {"c"}, {"b"})}, {});
  }
  CHECK(v.Backlinks("b.md") == std::vector<std::string>{"x/again.md"});
  CHECK(v.Backlinks("c.md") == std::vector<std::string>{"x/again.md"});
  CHECK(v.Apply({Full("b.md", {}, {}, {}, 3)}, {}).render == S({"b.md", "x/again.md"}));
  // Renaming c re-resolves the note that linked to it (linkers_ found it).
  auto imp = v.Apply({Full("C2.md", {})}, {"c.md"});
  CHECK(imp.render.count("x/again.md") == 1);
  CHECK(v.Backlinks("b.md") == std::vector<std::string>{"x/again.md"});
}

TEST_CASE("vault: unpublished notes have no page and links to them are dead") {
  Vault v;
  NoteMeta draft = Meta("draft.md", {});
  draft.published = false;
  auto imp = v.Apply({Meta("a.md", {"draft"}), draft}, {});
  CHECK(imp.render == S({"a.md"}));
  CHECK(v.Find("a.md")->out.empty());
  CHECK(v.Find("draft.md")->url.empty());
  // Publishing it later: it renders, and a's link now resolves.
  NoteMeta pub = Meta("draft.md", {});
  imp = v.Apply({pub}, {});
  CHECK(imp.render == S({"a.md", "draft.md"}));
  // Unpublishing again removes its page.
  draft = Meta("draft.md", {});
  draft.published = false;
  imp = v.Apply({draft}, {});
  CHECK(imp.deleted_urls == std::vector<std::string>{"/draft"});
  CHECK(imp.render == S({"a.md"}));
}

TEST_CASE("vault: a new permalink moves the note and leaves a redirect") {
  Vault v;
  (void)v.Apply({Meta("a.md", {})}, {});
  NoteMeta m = Meta("a.md", {});
  m.permalink = "/custom/place";
  auto imp = v.Apply({m}, {});
  CHECK(v.Find("a.md")->url == "/custom/place");
  CHECK(imp.moved == std::map<std::string, std::string>{{"/a", "/custom/place"}});
}

TEST_CASE("listings: every kind exists and fingerprints change only where content does") {
  Vault v;
  (void)v.Apply({Full("Docs/a.md", {}, {}, {"topic/sub"}, 10), Full("Docs/Deep/b.md", {}, {}, {"topic"}, 20),
                 Full("c.md", {}, {}, {}, 30)},
                {});
  SiteInfo info;
  info.name = "S";
  auto l1 = BuildListings(v, info);
  for (const char* url : {"/", "/docs/", "/docs/deep/", "/_/tags", "/_/tags/topic", "/_/tags/topic/sub", "/_/recent",
                          "/rss.xml", "/sitemap.xml", "/robots.txt"}) {
    CAPTURE(url);
    CHECK(l1.count(url) == 1);
  }
  CHECK(l1.at("/_/tags/topic").listing.items.size() == 2);  // nested tag counts toward its parent
  // The tag index counts what it lists (it said "0 tags" above a full list).
  CHECK(l1.at("/_/tags").listing.items.size() == 2);
  CHECK(l1.at("/_/tags").listing.intro == "2 tags");
  CHECK(l1.at("/_/tags").Render().find("2 tags") != std::string::npos);
  CHECK(l1.at("/docs/").listing.sections.size() == 1);    // Deep/
  CHECK(l1.at("/_/recent").listing.items.front().url == "/c");
  CHECK(l1.at("/rss.xml").Render().find("<rss") != std::string::npos);
  CHECK(l1.at("/sitemap.xml").Render().find("<loc>/docs/a</loc>") != std::string::npos);

  // c changes but is already the newest (same day): no listing changes at
  // all (the feeds show no time ingest saw a change: only the note's own dates).
  (void)v.Apply({Full("c.md", {}, {}, {}, 40)}, {});
  auto l2 = BuildListings(v, info);
  for (const auto& [url, g] : l2) {
    CAPTURE(url);
    CHECK(g.fingerprint == l1.at(url).fingerprint);
  }
  // Docs/a changes: it moves to the top of /recent; tag and folder pages keep their content.
  (void)v.Apply({Full("Docs/a.md", {}, {}, {"topic/sub"}, 50)}, {});
  auto l3 = BuildListings(v, info);
  CHECK(l3.at("/_/recent").fingerprint != l2.at("/_/recent").fingerprint);
  // The feeds (by published date, showing no time ingest saw a change) keep
  // theirs: a's content (sha256) and its own dates are as they were.
  CHECK(l3.at("/rss.xml").fingerprint == l2.at("/rss.xml").fingerprint);
  CHECK(l3.at("/_/tags/topic").fingerprint == l2.at("/_/tags/topic").fingerprint);
  CHECK(l3.at("/docs/").fingerprint == l2.at("/docs/").fingerprint);
}

TEST_CASE("listings: recent pagination and alias redirects") {
  Vault v;
  std::vector<NoteMeta> many;
  for (int i = 0; i < 120; ++i) many.push_back(Full("n" + std::to_string(i) + ".md", {}, {}, {}, i + 1));
  NoteMeta aliased = Full("target.md", {});
  aliased.aliases = {"Old Name"};
  many.push_back(aliased);
  (void)v.Apply(std::move(many), {});
  auto l = BuildListings(v, SiteInfo{});
  CHECK(l.count("/_/recent?page=2") == 1);
  CHECK(l.count("/_/recent?page=3") == 1);
  CHECK(l.count("/_/recent?page=4") == 0);
  CHECK(l.at("/_/recent?page=3").listing.items.size() == 21);
  CHECK(l.at("/_/recent?page=2").Render().find("Page 2 of 3") != std::string::npos);
  REQUIRE(l.count("/old-name") == 1);
  CHECK(l.at("/old-name").status == 301);
  CHECK(l.at("/old-name").location == "/target");
}

TEST_CASE("vault: attachment changes re-render the notes that use them") {
  Vault v;
  std::vector<std::string> unused;
  CHECK(v.ApplyAttachments({{"Media/pic.png", "aaaa1111bbbb2222cccc", ""}}, {}, &unused).empty());
  (void)v.Apply({Full("a.md", {}, {"pic.png"}), Full("b.md", {}), Full("c.md", {}, {"a"})}, {});
  CHECK(v.AttachmentUrl("pic.png", "a.md") == std::optional<std::string>("/assets/aaaa1111bbbb2222/pic.png"));
  // New bytes: a (embeds it) and c (embeds a) re-render; the old URL is unused.
  auto render = v.ApplyAttachments({{"Media/pic.png", "ffff1111bbbb2222cccc", ""}}, {}, &unused);
  CHECK(render == S({"a.md", "c.md"}));
  CHECK(unused == std::vector<std::string>{"/assets/aaaa1111bbbb2222/pic.png"});
  // Same bytes again: nothing.
  CHECK(v.ApplyAttachments({{"Media/pic.png", "ffff1111bbbb2222cccc", ""}}, {}, &unused).empty());
  // Deleted: the embedders re-render (their embed is dead now).
  render = v.ApplyAttachments({}, {"Media/pic.png"}, &unused);
  CHECK(render == S({"a.md", "c.md"}));
  CHECK(!v.AttachmentUrl("pic.png", "a.md"));
}

TEST_CASE("vault: a note named like its folder is the folder's page") {
  Vault v;
  (void)v.Apply({Meta("Docs/Docs.md", {}), Meta("Docs/other.md", {}), Meta("docs.md", {})}, {});
  CHECK(v.Find("Docs/Docs.md")->url == "/docs/");
  CHECK(v.Find("docs.md")->url == "/docs");
  CHECK(v.UrlOwner("/docs/")->path == "Docs/Docs.md");
  auto l = BuildListings(v, SiteInfo{});
  CHECK(l.count("/docs/") == 0);  // no generated folder page: the note is it
}

TEST_CASE("listings: a filtered build gives the same pages as a full build for what it covers") {
  Vault v;
  (void)v.Apply({Full("Docs/a.md", {}, {}, {"topic/sub"}, 10), Full("Docs/Deep/b.md", {}, {}, {"topic", "x"}, 20),
                 Full("c.md", {}, {}, {"x"}, 30)},
                {});
  SiteInfo info;
  auto full = BuildListings(v, info);
  ListingFilter f;
  f.folders = {"Docs"};
  f.tags = {"topic"};
  f.recent = true;
  f.tags_index = true;
  auto part = BuildListings(v, info, {}, &f);
  for (const auto& [url, g] : part) {
    CAPTURE(url);
    REQUIRE(full.count(url) == 1);
    CHECK(g.fingerprint == full.at(url).fingerprint);
    CHECK(f.Covers(url, g.status));
  }
  CHECK(part.count("/docs/") == 1);
  CHECK(part.count("/docs/deep/") == 0);
  CHECK(part.count("/_/tags/topic") == 1);
  CHECK(part.count("/_/tags/x") == 0);
  CHECK(part.count("/_/tags") == 1);
  CHECK(part.count("/_/recent") == 1);
  CHECK(part.count("/sitemap.xml") == 0);
  CHECK(!f.Covers("/_/tags/x", 200));
  CHECK(f.Covers("/_/recent?page=3", 200));
}

TEST_CASE("layout: reading time and word count, canonical link, og:url and og:image of an attachment") {
  NotePage p;
  p.site.name = "S";
  p.url = "/docs/a note";
  p.title = "A";
  p.words = 401;
  p.image = "/assets/ab12/cover image.png";
  std::string rel = AssembleNotePage(p);
  CHECK(rel.find("<span class=\"reading\">401 words · 3 min read</span>") != std::string::npos);
  // Without --base-url: the canonical link is the path; og:url needs an absolute URL, so none.
  CHECK(rel.find("<link rel=\"canonical\" href=\"/docs/a%20note\">") != std::string::npos);
  CHECK(rel.find("og:url") == std::string::npos);
  CHECK(rel.find("<meta property=\"og:image\" content=\"/assets/ab12/cover%20image.png\">") != std::string::npos);
  p.site.base_url = "https://notes.example";
  std::string abs = AssembleNotePage(p);
  CHECK(abs.find("<meta property=\"og:url\" content=\"https://notes.example/docs/a%20note\">") != std::string::npos);
  CHECK(abs.find("<link rel=\"canonical\" href=\"https://notes.example/docs/a%20note\">") != std::string::npos);
  CHECK(abs.find("<meta property=\"og:image\" content=\"https://notes.example/assets/ab12/cover%20image.png\">") !=
        std::string::npos);
  p.words = 1;
  CHECK(AssembleNotePage(p).find("1 word · 1 min read") != std::string::npos);
  p.words = 0;
  CHECK(AssembleNotePage(p).find("min read") == std::string::npos);
}
