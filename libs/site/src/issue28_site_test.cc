// Issue 28's rendering bugs that live in libs/site: dates shown as a reader
// reads them (9), a folder holding only folders (12), a folder's own note
// in its folder (13).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "folio/site/dates.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "folio/site/summary.h"
#include "folio/site/vault.h"

namespace folio::site {
namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

NoteMeta Note(std::string path, std::string title) {
  NoteMeta m;
  m.path = std::move(path);
  m.title = std::move(title);
  m.updated_ms = 1000;
  m.sha256 = m.path;
  return m;
}

std::string Body(const std::map<std::string, GeneratedPage>& pages, const std::string& url) {
  auto it = pages.find(url);
  return it == pages.end() ? "" : it->second.Render();
}

}  // namespace

TEST_CASE("issue 28 (9): the date forms Obsidian users write show as a reader reads them") {
  struct Case {
    const char* in;
    const char* machine;
  };
  for (const Case& c : {Case{"2024-04-04", "2024-04-04"}, Case{"2024-04-04T10:30", "2024-04-04T10:30"},
                        Case{"2024-04-04 10:30", "2024-04-04T10:30"}, Case{"2024-04-04T10:30:15", "2024-04-04T10:30:15"},
                        Case{"2024-04-04T10:30:15.250Z", "2024-04-04T10:30:15.250Z"},
                        Case{"2024-04-04T10:30+02:00", "2024-04-04T10:30+02:00"},
                        Case{"2024-04-04 10:30:00 +0200", "2024-04-04T10:30:00 +0200"}}) {
    CAPTURE(c.in);
    auto d = ShowDate(c.in, "en");
    if (std::string_view(c.in) == "2024-04-04 10:30:00 +0200") {  // a space before the zone: not ISO
      CHECK(!d);
      continue;
    }
    REQUIRE(d);
    CHECK(d->machine == c.machine);
    CHECK(d->readable == "4 April 2024");
  }
  CHECK(ShowDate("2024-02-29", "")->readable == "29 February 2024");
  CHECK(!ShowDate("2023-02-29", "en"));
  CHECK(!ShowDate("2024-13-01", "en"));
  CHECK(!ShowDate("2024-04-04T25:00", "en"));
  CHECK(!ShowDate("last week", "en"));
  CHECK(ShowDate("2024-04-04T10:30", "de")->readable == "4. April 2024");  // per language (issue 29)
  CHECK(ShowDate("2024-04-04", "en-GB")->readable == "4 April 2024");

  NotePage p;
  p.url = "/n";
  p.title = "N";
  p.created = "2024-01-02";
  p.updated = "2024-04-04T10:30";
  std::string html = AssembleNotePage(p);
  CHECK(Has(html, "Created <time datetime=\"2024-01-02\">2 January 2024</time>"));
  CHECK(Has(html, "Updated <time datetime=\"2024-04-04T10:30\">4 April 2024</time>"));
  CHECK(!Has(html, ">2024-04-04T10:30<"));
  p.updated = "someday <b>";
  CHECK(Has(AssembleNotePage(p), "Updated <time>someday &lt;b&gt;</time>"));
}

TEST_CASE("issue 28 (12): a folder holding only a folder lists it, counts it, and has breadcrumbs") {
  Vault v;
  (void)v.Apply({Note("Areas/Health/Sleep.md", "Sleep"), Note("Areas/Health/Run.md", "Run"),
                 Note("Mixed/One.md", "One"), Note("Mixed/Two.md", "Two"), Note("Mixed/Sub/A.md", "A"),
                 Note("Mixed/Other/B.md", "B")},
                {});
  auto pages = BuildListings(v, SiteInfo{});
  REQUIRE(pages.count("/areas/"));
  const ListingPage& areas = pages.at("/areas/").listing;
  CHECK(areas.intro == "1 folder");
  REQUIRE(areas.sections.size() == 1);
  CHECK(areas.sections[0].url == "/areas/health/");
  CHECK(areas.breadcrumbs.empty());  // a top-level folder: nothing above it
  const ListingPage& health = pages.at("/areas/health/").listing;
  CHECK(health.intro == "2 notes");
  REQUIRE(health.breadcrumbs.size() == 1);
  CHECK(health.breadcrumbs[0].title == "Areas");
  CHECK(health.breadcrumbs[0].url == "/areas/");
  CHECK(pages.at("/mixed/").listing.intro == "2 notes, 2 folders");
  CHECK(Has(Body(pages, "/areas/"), "<a href=\"/areas/health/\">Health/</a>"));
}

TEST_CASE("issue 28 (13): a folder's own note is the folder, not a note inside it") {
  Vault v;
  (void)v.Apply({Note("Projects/Projects.md", "Projects"), Note("Projects/Alpha.md", "Alpha"),
                 Note("Guides/index.md", "Guides home"), Note("Guides/Setup.md", "Setup"),
                 Note("Plain/Note.md", "Note")},
                {});
  REQUIRE(v.Find("Projects/Projects.md")->url == "/projects/");
  REQUIRE(v.Find("Guides/index.md")->url == "/guides/");
  auto pages = BuildListings(v, SiteInfo{});
  CHECK(Body(pages, "/_/tree/projects/") ==
        "{\"folders\":[],\"notes\":[{\"title\":\"Alpha\",\"url\":\"/projects/alpha\"}],\"more\":0,"
        "\"url\":\"/projects/\"}");
  CHECK(Body(pages, "/_/tree/guides/") ==
        "{\"folders\":[],\"notes\":[{\"title\":\"Setup\",\"url\":\"/guides/setup\"}],\"more\":0,\"url\":\"/guides/\"}");
  CHECK(pages.count("/projects/") == 0);  // the URL is the note's page
  // The root lists the folder once, as a folder, linking to the note's URL.
  CHECK(Has(Body(pages, "/_/tree/"), "{\"name\":\"Projects\",\"path\":\"Projects\",\"tree\":\"/_/tree/projects/\",\"url\":\"/projects/\""));
  CHECK(!Has(Body(pages, "/_/tree/"), "\"title\":\"Projects\""));
  // With a limit, "more" does not count the folder's note.
  ListingOptions small;
  small.list_limit = 1;
  (void)v.Apply({Note("Projects/Beta.md", "Beta")}, {});
  CHECK(Has(Body(BuildListings(v, SiteInfo{}, small), "/_/tree/projects/"),
            "\"notes\":[{\"title\":\"Alpha\",\"url\":\"/projects/alpha\"}],\"more\":1,"));
}

TEST_CASE("issue 28 (10): a note's description is its first paragraph, never its title") {
  CHECK(NoteDescription("# Kitchen sink\n\nThe first **real** paragraph,\nover two lines.\n\nSecond.\n") ==
        "The first real paragraph, over two lines.");
  // Headings (ATX, setext), callout titles, code, math, tables, embeds, tags, comments and rules are skipped.
  CHECK(NoteDescription("Setext title\n===\n\n> [!note] Callout title\n\n```js\nlet x = 1;\n```\n\n"
                        "$$\nx^2\n$$\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![[Diagram.png]]\n\n#tag #other\n\n"
                        "%%\nhidden\n%%\n\n---\n\n<div>raw</div>\n\n    indented code\n\nAt last: text.\n") ==
        "At last: text.");
  // Inline markup goes; links keep their text, wikilinks their alias or name.
  CHECK(NoteDescription("See [[Other note]], [[Folder/Deep.md#Part|the deep one]], [a link](https://x.y) and "
                        "![img](p.png)![[embed]] `code`, ==mark==, ~~gone~~, _em_ snake_case[^1]. ^block-id\n") ==
        "See Other note, the deep one, a link and code, mark, gone, em snake_case.");
  // A callout's body and list items count as text.
  CHECK(NoteDescription("> [!tip] Title\n> The tip's *text*.\n") == "The tip's text.");
  CHECK(NoteDescription("- [x] first task\n- second\n") == "first task second");
  CHECK(NoteDescription("# Only a heading\n\n```\ncode\n```\n").empty());
  // A line of 200,000 unclosed '[[' (the deep-note attack's kind) is read only
  // as far as a description can reach: bounded output, no quadratic scan.
  std::string brackets;
  for (int i = 0; i < 100000; ++i) brackets += "[[";
  const std::string cut = NoteDescription(brackets + "x\n");
  CHECK(cut.size() <= 160 + std::string("…").size());
  CHECK(cut.starts_with("[[[["));
  // Bounded: cut at a word boundary with an ellipsis; text without spaces at a character.
  std::string long_text;
  for (int i = 0; i < 60; ++i) long_text += "word" + std::to_string(i) + " ";
  std::string d = NoteDescription(long_text);
  CHECK(d.size() <= kDescriptionMax + 3);
  CHECK(d.ends_with("…"));
  CHECK(long_text.find(d.substr(0, d.size() - 3) + " ") == 0);  // whole words only
  std::string cjk;
  for (int i = 0; i < 100; ++i) cjk += "\u6f22";  // 3 bytes each, no spaces
  std::string c = NoteDescription(cjk);
  CHECK(c.size() == 159 + 3);  // 53 whole characters, then the ellipsis
}

}  // namespace folio::site
