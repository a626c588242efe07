// Obsidian fidelity and the reader's site: frontmatter (drafts, aliases,
// permalinks, tags), embeds and cycles, generated pages (folders, tags,
// recent, RSS, sitemap, robots), and exact incremental render counts.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "cluster.h"
#include "json_util.h"
#include "test_util.h"

using namespace folio;
using namespace folio::it;

TEST_CASE("fidelity: frontmatter, embeds and generated pages of the fixture vault") {
  Cluster c;
  std::string out;
  int rc = c.RunCli({"push", testing::SourcePath("tests/fixtures/fidelity"), "--server", c.ingest_url(), "--token",
                     kToken}, &out);
  INFO(out);
  INFO(c.Logs());
  REQUIRE(rc == 0);

  // index.md is the home page; the embedded section of Guide is inside it.
  auto home = c.WaitForPage("/", 200, "Fidelity home");
  REQUIRE(home.status == 200);
  CHECK(home.body.find("Run the installer") != std::string::npos);  // ![[Guide#Install]]
  CHECK(home.body.find("Intro with") == std::string::npos);         // only that section
  CHECK(home.body.find("href=\"/docs/guide\"") != std::string::npos);
  // A draft is not published and links to it are dead.
  CHECK(c.EdgeGet("/docs/secret").status == 404);
  CHECK(home.body.find("link-dead") != std::string::npos);
  CHECK(out.find("Secret") != std::string::npos);  // reported as dangling to the author
  CHECK(out.find("no such heading") == std::string::npos);  // every anchor in the fixture exists

  auto guide = c.WaitForPage("/docs/guide", 200);
  CHECK(guide.body.find("<body class=\"wide\"") != std::string::npos);           // cssclasses
  CHECK(guide.body.find("property=\"og:title\" content=\"The Guide\"") != std::string::npos);
  CHECK(guide.body.find("Created <time datetime=\"2026-01-02\">2 January 2026</time>") != std::string::npos);
  CHECK(guide.body.find("hidden comment") == std::string::npos);                  // %%comment%%
  CHECK(guide.body.find("<mark>highlighted</mark>") != std::string::npos);
  CHECK(guide.body.find("<math") != std::string::npos);                          // server-side math
  CHECK(guide.body.find("data-callout=\"warning\"") != std::string::npos);
  CHECK(guide.body.find("href=\"#install\"") != std::string::npos);               // [[#Install]]
  CHECK(guide.body.find("<nav class=\"outline outline-view-outer\" id=\"outline\"") != std::string::npos);  // the table of contents
  CHECK(guide.body.find("class=\"breadcrumbs\"") != std::string::npos);
  CHECK(guide.body.find("href=\"/docs/\"") != std::string::npos);
  CHECK(guide.body.find("href=\"/_/tags/docs/guide\"") != std::string::npos);

  // Aliases answer 301 to the note.
  auto alias = c.EdgeGet("/old-name");
  CHECK(alias.status == 301);
  CHECK(alias.Header("Location") == "/docs/guide");
  // A permalink overrides the URL; block references land on the block.
  auto moved = c.WaitForPage("/elsewhere/moved-here", 200);
  CHECK(moved.body.find("href=\"/docs/guide#block-install-step\"") != std::string::npos);
  CHECK(c.EdgeGet("/moved").status == 404);
  // Embed cycles are shown as such instead of recursing.
  auto cycle = c.WaitForPage("/docs/cycle-a", 200);
  CHECK(cycle.body.find("Embed cycle") != std::string::npos);

  // Generated pages.
  auto folder = c.WaitForPage("/docs/", 200);
  CHECK(folder.body.find("href=\"/docs/guide\"") != std::string::npos);
  CHECK(folder.body.find("href=\"/docs/secret\"") == std::string::npos);
  auto tag = c.WaitForPage("/_/tags/docs", 200);
  CHECK(tag.body.find("href=\"/docs/guide\"") != std::string::npos);
  CHECK(tag.body.find("href=\"/_/tags/docs/guide\"") != std::string::npos);  // nested tag listed under its prefix
  CHECK(c.WaitForPage("/_/tags/inline-tag", 200).status == 200);
  CHECK(c.WaitForPage("/_/tags", 200).body.find("#docs") != std::string::npos);
  CHECK(c.WaitForPage("/_/recent", 200).body.find("href=\"/docs/guide\"") != std::string::npos);
  auto rss = c.WaitForPage("/rss.xml", 200);
  CHECK(rss.Header("Content-Type").find("application/rss+xml") == 0);
  CHECK(rss.body.find("<title>The Guide</title>") != std::string::npos);
  auto sitemap = c.WaitForPage("/sitemap.xml", 200);
  CHECK(sitemap.body.find("/docs/guide</loc>") != std::string::npos);
  CHECK(sitemap.body.find("secret") == std::string::npos);
  CHECK(c.WaitForPage("/robots.txt", 200).body.find("Sitemap:") != std::string::npos);

  // Mermaid loads its script only on pages with a diagram; description feeds
  // meta and OG tags; publish: false hides a note; bad YAML is a warning
  // naming the note and line, and the note still renders.
  auto extra = c.Push(PushBody({{"Diagram.md", "---\ndescription: A flow chart.\n---\n# Diagram\n\n```mermaid\ngraph TD; A-->B\n```\n"},
                                {"Hidden.md", "---\npublish: false\n---\n# Hidden\n"},
                                {"Broken.md", "---\ntitle: [unclosed\n---\n# Broken\n\nStill here.\n"}}));
  REQUIRE(extra.status == 200);
  // Once, in Broken.md's report (it used to come twice: bare and as "Broken.md: ...").
  size_t fm_warning = extra.body.find("\"frontmatter line");
  CHECK(fm_warning != std::string::npos);
  CHECK(extra.body.find("frontmatter line", fm_warning + 2) == std::string::npos);
  CHECK(extra.body.find("Broken.md: frontmatter") == std::string::npos);
  CHECK(extra.body.find("\"published\":false") != std::string::npos);
  auto diagram = c.WaitForPage("/diagram", 200);
  CHECK(diagram.body.find("<pre class=\"mermaid\">") != std::string::npos);
  CHECK(diagram.body.find("mermaid.initialize") != std::string::npos);
  CHECK(diagram.body.find("name=\"description\" content=\"A flow chart.\"") != std::string::npos);
  CHECK(diagram.body.find("property=\"og:description\" content=\"A flow chart.\"") != std::string::npos);
  CHECK(guide.body.find("mermaid.initialize") == std::string::npos);
  CHECK(c.WaitForPage("/broken", 200, "Still here").status == 200);
  CHECK(c.EdgeGet("/hidden").status == 404);

  // Other spellings of a URL answer 301 to the canonical one.
  auto upper = c.EdgeGet("/Docs/Guide");
  CHECK(upper.status == 301);
  CHECK(upper.Header("Location") == "/docs/guide");
  CHECK(c.EdgeGet("/docs/guide.md").Header("Location") == "/docs/guide");
  CHECK(c.EdgeGet("/docs").Header("Location") == "/docs/");
}

TEST_CASE("listings: /recent is one page by default; --recent-pages paginates it") {
  std::vector<std::pair<std::string, std::string>> notes;
  for (int i = 0; i < 120; ++i) notes.push_back({"n" + std::to_string(i) + ".md", "---\ntitle: Note " + std::to_string(i) + "\n---\n"});
  {
    Cluster one;
    REQUIRE(one.Push(PushBody(notes)).status == 200);
    auto p1 = one.WaitForPage("/_/recent", 200, "120 notes");
    size_t items = 0;
    for (size_t at = p1.body.find(">Note "); at != std::string::npos; at = p1.body.find(">Note ", at + 1)) ++items;
    CHECK(items == 50);  // the newest 50 only
    CHECK(p1.body.find("?page=2") == std::string::npos);
    CHECK(one.EdgeGet("/_/recent?page=2").status == 404);
  }
  Cluster c({"--recent-pages", "3"});
  REQUIRE(c.Push(PushBody(notes)).status == 200);
  auto p2 = c.WaitForPage("/_/recent?page=2", 200, "Page 2 of 3");
  CHECK(p2.status == 200);
  CHECK(p2.body.find("?page=3") != std::string::npos);
  // The pages of one push reach the edge one after another: wait for page 3 too.
  CHECK(c.WaitForPage("/_/recent?page=3", 200, "Page 3 of 3").status == 200);
  CHECK(c.EdgeGet("/_/recent?page=4").status == 404);
  CHECK(c.EdgeGet("/_/recent?page=abc").body.find("Page 1 of 3") != std::string::npos);
}

TEST_CASE("incremental: each kind of change re-renders exactly the affected pages") {
  Cluster c;
  auto push = [&](const std::vector<std::pair<std::string, std::string>>& notes,
                  const std::vector<std::string>& deletes = {}) {
    auto r = c.Push(PushBody(notes, deletes));
    REQUIRE(r.status == 200);
    return r.body;
  };
  std::string r = push({{"A.md", "# A\n\nLinks [[B]] and [[Later]].\n"},
                        {"B.md", "# B\n\nBee.\n"},
                        {"C.md", "# C\n\n![[B]]\n"},
                        {"D.md", "# D\n\nAlone.\n"}});
  CHECK(JsonInt(r, "rendered") == 4);

  // Content change, same title and links: B itself + C (embeds B). Not A, not D.
  r = push({{"B.md", "# B\n\nBee, revised.\n"}});
  CHECK(JsonInt(r, "rendered") == 2);
  CHECK(c.WaitForPage("/c", 200, "Bee, revised").status == 200);

  // An anchor that matches nothing still links to the note, with a warning.
  r = push({{"F.md", "# F\n\n[[B#Nowhere]] and [[B#^nope]] and [[#Self]]\n\n## Self\n"}});
  CHECK(r.find("[[B#Nowhere]]: 'B.md' has no such heading or block") != std::string::npos);
  CHECK(r.find("[[B#^nope]]") != std::string::npos);
  CHECK(r.find("[[#Self]]") == std::string::npos);
  CHECK(c.WaitForPage("/f", 200, "href=\"/b#nowhere\"").status == 200);
  push({}, {"F.md"});

  // A change to an unrelated note renders only it.
  r = push({{"D.md", "# D\n\nAlone, revised.\n"}});
  CHECK(JsonInt(r, "rendered") == 1);

  // A note added that a dangling link now resolves to: Later + A.
  r = push({{"Later.md", "# Later\n"}});
  CHECK(JsonInt(r, "rendered") == 2);

  // An alias added that resolves a dangling link: the aliased note + the linker.
  push({{"E.md", "# E\n\nSee [[Nickname]].\n"}});
  r = push({{"D.md", "---\naliases: [Nickname]\n---\n# D\n\nAlone, revised.\n"}});
  CHECK(JsonInt(r, "rendered") == 2);  // D (changed) + E (its link now lands on D)
  CHECK(c.WaitForPage("/e", 200, "href=\"/d\"").status == 200);

  // A new link changes the target's backlinks: A + D.
  r = push({{"A.md", "# A\n\nLinks [[B]] and [[Later]] and [[D]].\n"}});
  CHECK(JsonInt(r, "rendered") == 2);

  // A title change re-renders pages listing it as a backlink: A + B, D, Later.
  r = push({{"A.md", "---\ntitle: A renamed\n---\nLinks [[B]] and [[Later]] and [[D]].\n"}});
  CHECK(JsonInt(r, "rendered") == 4);

  // Deleting a note: linkers (E links D) and the notes it linked (backlinks): E + (none: D links nobody).
  r = push({}, {"D.md"});
  CHECK(JsonInt(r, "deleted") == 1);
  CHECK(JsonInt(r, "rendered") == 2);  // A (its link to D is dead now) + E
  CHECK(c.WaitForPage("/d", 410).status == 410);  // Gone: it was there and was removed

  // Listings: a new tag on an existing note (same title, same day): the tag
  // index, the new tag's page, /recent (B moves to the top) and both feeds
  // (/rss.xml, /feed.json: they carry B's body). Home, sitemap and folder
  // pages keep their content, so they are not touched.
  r = push({{"B.md", "# B\n\nBee, revised. #fresh\n"}});
  CHECK(JsonInt(r, "rendered") == 2);   // B + C (embeds B)
  CHECK(JsonInt(r, "listings") == 5);
  CHECK(c.WaitForPage("/_/tags/fresh", 200, "href=\"/b\"").status == 200);
  // Removing it again (B is already the newest): /_/tags changes, /_/tags/fresh
  // goes, and the feeds carry B's new body.
  r = push({{"B.md", "# B\n\nBee, revised.\n"}});
  CHECK(JsonInt(r, "listings") == 4);
  CHECK(c.WaitForPage("/_/tags/fresh", 404).status == 404);

  // Unchanged content renders nothing and touches no listing.
  r = push({{"B.md", "# B\n\nBee, revised.\n"}});
  CHECK(JsonInt(r, "rendered") == 0);
  CHECK(JsonInt(r, "listings") == 0);
}

TEST_CASE("attachments: served from /assets, embedded by notes, replaced and removed incrementally") {
  Cluster c;
  auto body = [](const std::string& att_json, const std::string& notes_json) {
    return "{\"attachments\":[" + att_json + "],\"notes\":[" + notes_json + "]}";
  };
  // "PNG!" and "PNG2" as base64.
  auto r = c.Push(body(R"({"path":"Media/pic.png","data":"UE5HIQ=="})",
                       R"({"path":"A.md","content":"# A\n\n![[pic.png|300]]\n"},{"path":"B.md","content":"# B\n"})"));
  INFO(r.body);
  REQUIRE(r.status == 200);
  auto a = c.WaitForPage("/a", 200, "<img src=\"/assets/");
  size_t at = a.body.find("<img src=\"/assets/");
  REQUIRE(at != std::string::npos);
  at += 10;
  std::string url = a.body.substr(at, a.body.find('"', at) - at);
  CHECK(url.find("/pic.png") != std::string::npos);
  CHECK(a.body.find("width=\"300\"") != std::string::npos);
  auto asset = c.EdgeGet(url);
  CHECK(asset.status == 200);
  CHECK(asset.body == "PNG!");
  CHECK(asset.Header("Content-Type") == "image/png");
  CHECK(asset.Header("Cache-Control").find("immutable") != std::string::npos);
  auto manifest = c.Manifest();
  CHECK(manifest.body.find("\"path\":\"Media/pic.png\"") != std::string::npos);

  // New bytes: a new URL, A re-rendered (B not), the old URL gone.
  r = c.Push(body(R"({"path":"Media/pic.png","data":"UE5HMg=="})", ""));
  CHECK(JsonInt(r.body, "rendered") == 1);
  auto a2 = c.WaitForPage("/a", 200, "", 10000);
  for (int i = 0; i < 200 && a2.body.find(url) != std::string::npos; ++i) a2 = c.EdgeGet("/a");
  CHECK(a2.body.find(url) == std::string::npos);
  CHECK(c.WaitForPage(url, 404).status == 404);

  // Removed: the embed becomes dead and is reported.
  r = c.Push("{\"delete\":[\"Media/pic.png\"]}");
  CHECK(JsonInt(r.body, "rendered") == 1);
  CHECK(c.WaitForPage("/a", 200, "link-dead").body.find("link-dead") != std::string::npos);
}

// Issue 13, bugs 2 and 5 through ingest: links to attachments by wikilink
// and by relative markdown path resolve (and follow the file's new bytes);
// an embedded note's footnotes keep their own ids.
TEST_CASE("attachments linked by [[name.pdf]] and [x](path) resolve; embedded footnotes keep their ids") {
  Cluster c;
  auto body = [](const std::string& att_json, const std::string& notes_json) {
    return "{\"attachments\":[" + att_json + "],\"notes\":[" + notes_json + "]}";
  };
  auto r = c.Push(body(R"({"path":"Files/spec sheet.pdf","data":"UERGIQ=="},{"path":"Images/red dot.png","data":"UE5HIQ=="})",
                       R"({"path":"A.md","content":"# A\n\n[[spec sheet.pdf]] [sheet](Files/spec%20sheet.pdf) ![dot](Images/red%20dot.png)\n"},)"
                       R"({"path":"Host.md","content":"# Host\n\nHost claim[^1].\n\n![[Inner]]\n\n[^1]: host source\n"},)"
                       R"({"path":"Inner.md","content":"Inner claim[^1].\n\n[^1]: inner source\n"},)"
                       R"({"path":"Cover.md","content":"---\nimage: red dot.png\n---\n# Cover\n\nfour words of text\n"})"));
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.body.find("dangling") == std::string::npos);
  auto a = c.WaitForPage("/a", 200, "spec%20sheet.pdf");
  size_t at = a.body.find("<a href=\"/assets/");
  REQUIRE(at != std::string::npos);
  at += 9;
  std::string pdf = a.body.substr(at, a.body.find('"', at) - at);
  CHECK(pdf.find("/spec%20sheet.pdf") != std::string::npos);
  CHECK(a.body.find("<a href=\"" + pdf + "\" class=\"internal-link\">sheet</a>") != std::string::npos);
  CHECK(a.body.find("<img src=\"/assets/") != std::string::npos);
  CHECK(a.body.find("Images/red") == std::string::npos);
  CHECK(c.EdgeGet(pdf).body == "PDF!");

  // New bytes: the link follows them.
  r = c.Push(body(R"({"path":"Files/spec sheet.pdf","data":"UERGMg=="})", ""));
  CHECK(JsonInt(r.body, "rendered") == 1);
  auto a2 = c.WaitForPage("/a", 200, "", 10000);
  for (int i = 0; i < 200 && a2.body.find(pdf) != std::string::npos; ++i) a2 = c.EdgeGet("/a");
  CHECK(a2.body.find(pdf) == std::string::npos);

  // The frontmatter image is the attachment's URL; the page shows its reading time.
  auto cover = c.WaitForPage("/cover", 200);
  CHECK(cover.body.find("<meta property=\"og:image\" content=\"/assets/") != std::string::npos);
  CHECK(cover.body.find("/red%20dot.png\">") != std::string::npos);
  CHECK(cover.body.find("5 words · 1 min read") != std::string::npos);  // "Cover" + "four words of text"

  auto host = c.WaitForPage("/host", 200, "inner source");
  CHECK(host.body.find("<li id=\"fn-1\">host source") != std::string::npos);
  CHECK(host.body.find("<li id=\"fn-e1-1\">inner source") != std::string::npos);
  CHECK(host.body.find("href=\"#fn-e1-1\"") != std::string::npos);
}

// Issue 13, bugs 9 and 13: non-ASCII names get lower-case URLs like ASCII
// ones, other spellings answer 301; breadcrumbs end with the note itself.
TEST_CASE("non-ASCII URLs are lower-cased, other spellings redirect; breadcrumbs end with the note") {
  Cluster c;
  auto r = c.Push(PushBody({{"Документы/Гайд.md", "# Гайд\n\nТекст #тег.\n"}, {"Ελληνικά.md", "# Α\n"}}));
  INFO(r.body);
  REQUIRE(r.status == 200);
  auto page = c.WaitForPage("/%D0%B4%D0%BE%D0%BA%D1%83%D0%BC%D0%B5%D0%BD%D1%82%D1%8B/%D0%B3%D0%B0%D0%B9%D0%B4", 200);
  REQUIRE(page.status == 200);  // /документы/гайд
  auto upper = c.EdgeGet("/%D0%94%D0%BE%D0%BA%D1%83%D0%BC%D0%B5%D0%BD%D1%82%D1%8B/%D0%93%D0%B0%D0%B9%D0%B4");
  CHECK(upper.status == 301);  // /Документы/Гайд
  CHECK(upper.Header("Location") == "/%D0%B4%D0%BE%D0%BA%D1%83%D0%BC%D0%B5%D0%BD%D1%82%D1%8B/%D0%B3%D0%B0%D0%B9%D0%B4");
  CHECK(c.WaitForPage("/%CE%B5%CE%BB%CE%BB%CE%B7%CE%BD%CE%B9%CE%BA%CE%AC", 200).status == 200);  // /ελληνικά
  CHECK(c.EdgeGet("/%CE%95%CE%BB%CE%BB%CE%B7%CE%BD%CE%B9%CE%BA%CE%AC").status == 301);
  // Folder / note, no dangling separator.
  size_t nav = page.body.find("<nav class=\"breadcrumbs\"");
  REQUIRE(nav != std::string::npos);
  std::string crumbs = page.body.substr(nav, page.body.find("</nav>", nav) - nav);
  CHECK(crumbs.find(">Документы</a> <span>/</span> <span aria-current=\"page\">Гайд</span>") != std::string::npos);
  auto tags = c.WaitForPage("/_/tags", 200, "1 tag");
  CHECK(tags.body.find("1 tag<") != std::string::npos);
}

// Feeds and OpenGraph need absolute URLs: ingest says so at start when
// --base-url is unset, and og:url and the canonical link are absolute when set.
TEST_CASE("ingest warns at start without --base-url; with it, note pages carry absolute og:url and canonical") {
  {
    Cluster c;
    CHECK(c.Logs().find("no --base-url") != std::string::npos);
  }
  Cluster c({"--base-url", "https://notes.example"});
  CHECK(c.Logs().find("no --base-url") == std::string::npos);
  REQUIRE(c.Push(PushBody({{"A note.md", "# A\n"}})).status == 200);
  auto page = c.WaitForPage("/a-note", 200);
  CHECK(page.body.find("<meta property=\"og:url\" content=\"https://notes.example/a-note\">") != std::string::npos);
  CHECK(page.body.find("<link rel=\"canonical\" href=\"https://notes.example/a-note\">") != std::string::npos);
}

// Issue 13, bug 14: a note's own name wins over folio's generated pages,
// which live under "/_/"; their old URLs redirect where no note has them.
TEST_CASE("a note named Tags keeps /tags; generated pages are under /_/ and old URLs redirect") {
  Cluster c;
  auto r = c.Push(PushBody({{"Tags.md", "# My tags note\n\nAbout #topic.\n"}, {"Other.md", "# Other\n\n#topic\n"}}));
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.body.find("/tags-") == std::string::npos);  // no fallback URL, no warning
  auto note = c.WaitForPage("/tags", 200, "My tags note");
  CHECK(note.status == 200);
  CHECK(note.body.find("href=\"/_/tags/topic\"") != std::string::npos);
  CHECK(c.WaitForPage("/_/tags", 200, "#topic").status == 200);
  CHECK(c.WaitForPage("/_/tags/topic", 200, "href=\"/other\"").status == 200);
  CHECK(c.WaitForPage("/_/recent", 200, "href=\"/tags\"").status == 200);
  // Old generated URLs: 301 to the new ones (query kept) where no note has them.
  auto old_tag = c.EdgeGet("/tags/topic");
  CHECK(old_tag.status == 301);
  CHECK(old_tag.Header("Location") == "/_/tags/topic");
  auto old_recent = c.EdgeGet("/recent?page=2");
  CHECK(old_recent.status == 301);
  CHECK(old_recent.Header("Location") == "/_/recent?page=2");
  CHECK(c.EdgeGet("/search?q=x").Header("Location") == "/_/search?q=x");
  CHECK(c.EdgeGet("/_/nothing").status == 404);
  // The header links to the generated pages, not to the note.
  CHECK(note.body.find("<a href=\"/_/recent\">Recent</a> <a href=\"/_/tags\">Tags</a>") != std::string::npos);
}

// Issue 13, authors: renames keep links alive. A note deleted and added
// again in one push (same bytes, same permalink, or the old name kept as an
// alias) leaves a 301 at its old URL; a deleted note's URL answers 410.
TEST_CASE("renames answer 301 to the new URL; deleted notes answer 410 Gone; a note back at a gone URL is served") {
  Cluster c;
  auto push = [&](const std::vector<std::pair<std::string, std::string>>& notes,
                  const std::vector<std::string>& deletes = {}) {
    auto r = c.Push(PushBody(notes, deletes));
    INFO(r.body);
    REQUIRE(r.status == 200);
  };
  push({{"Old name.md", "# Same bytes\n"}, {"Draft.md", "# Draft v1\n"}, {"Plan.md", "# Plan\n"}, {"Bye.md", "# Bye\n"}});
  REQUIRE(c.WaitForPage("/bye", 200).status == 200);
  // Same content under a new name (a rename in Obsidian, then a push).
  push({{"Folder/New name.md", "# Same bytes\n"}}, {"Old name.md"});
  CHECK(c.WaitForPage("/folder/new-name", 200).status == 200);
  auto moved = c.WaitForPage("/old-name", 301);
  CHECK(moved.status == 301);
  CHECK(moved.Header("Location") == "/folder/new-name");
  // Renamed and edited, with the old name kept as an alias.
  push({{"Draft final.md", "---\naliases: [Draft]\n---\n# Draft v2\n"}}, {"Draft.md"});
  CHECK(c.WaitForPage("/draft", 301).Header("Location") == "/draft-final");
  // Deleted for good: 410, on the site's own page, never cached long.
  push({}, {"Bye.md"});
  auto gone = c.WaitForPage("/bye", 410);
  CHECK(gone.status == 410);
  CHECK(gone.Header("Cache-Control") == "public, max-age=300");
  // Edited and renamed with nothing in common: the old URL is gone.
  push({{"Strategy.md", "# Strategy\n"}}, {"Plan.md"});
  CHECK(c.WaitForPage("/plan", 410).status == 410);
  // A note published again at a gone URL is served there.
  push({{"Bye.md", "# Back\n"}});
  CHECK(c.WaitForPage("/bye", 200, "Back").status == 200);
}

// Issue 12: what a push costs the database does not grow with the vault.
// One new note in a 600-note vault and in a 2,400-note vault (same folder
// sizes, /recent full in both) writes the same number of SQLite rows.
TEST_CASE("scale: the SQL rows a one-note push writes are the same at 600 and 2,400 notes") {
  Cluster c;
  auto metric = [&](const std::string& series) {
    auto r = http::Get(c.ingest_url() + "/metrics");
    REQUIRE(r.ok());
    return Metric(r->body, series);
  };
  auto rows_written = [&] { return metric("folio_ingest_sql_rows_written_total{site=\"default\"}"); };
  // The heap is handed back after a push of 1,000 pages or more, not after
  // smaller ones (it is posted after the reply: poll for it).
  auto heap_releases = [&] { return metric("folio_ingest_heap_releases_total"); };
  auto add_notes = [&](int from, int to) {
    std::vector<std::pair<std::string, std::string>> notes;
    for (int i = from; i < to; ++i) {
      notes.push_back({"F" + std::to_string(i / 50) + "/n" + std::to_string(i) + ".md",
                       "# Note " + std::to_string(i) + "\n\nSee [[n" + std::to_string(i / 2) + "]].\n"});
    }
    REQUIRE(c.Push(PushBody(notes)).status == 200);
  };
  auto one_note = [&](const std::string& name) {
    double before = rows_written();
    REQUIRE(c.Push(PushBody({{"F3/" + name + ".md", "# " + name + "\n\nSee [[n7]].\n"}})).status == 200);
    return rows_written() - before;
  };
  add_notes(0, 600);
  double small = one_note("extra-a");
  CHECK(heap_releases() == 0);  // 600 notes and their listings: under 1,000 pages
  add_notes(600, 2400);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (heap_releases() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(heap_releases() == 1);  // 1,800 notes rendered
#if !defined(__SANITIZE_ADDRESS__)  // the sanitizer's allocator is not glibc's: nothing to read
  // What the heap holds for 2,400 notes after the hand-back: their model, not
  // their pages (issue 15: ~2 KB a note).
  double heap = metric("folio_ingest_heap_bytes");
  MESSAGE("heap in use at 2,400 notes: " << heap << " bytes");
  CHECK(heap > 1e6);
  CHECK(heap < 64e6);
#endif
  double large = one_note("extra-b");
  MESSAGE("rows written by a one-note push: " << small << " at 600 notes, " << large << " at 2,400");
  CHECK(small > 0);
  CHECK(large == small);
  CHECK(heap_releases() == 1);
}
