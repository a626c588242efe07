// Issue 28's data bugs as a reader meets them, through real nats-server,
// folio-ingest and folio-edge: dates (9), descriptions (10), a folder of
// folders (12), a folder's own note (13), titles from file names (15),
// renames with edits (16).
#include <doctest/doctest.h>

#include <functional>
#include <iterator>
#include <random>
#include <string>

#include "cluster.h"
#include "folio/site/layout.h"
#include "folio/sqlite/db.h"

using namespace folio;
using namespace folio::it;

namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A note of `lines` lines of prose about `topic` (words drawn by a generator
// seeded with the topic, as unrelated notes differ), every `edit_every`th
// line rewritten.
std::string Long(const std::string& topic, int lines, int edit_every = 0) {
  static const char* const kWords[] = {
      "the", "a", "river", "stone", "light", "walk", "morning", "garden", "plan", "idea", "of", "and", "to",
      "write", "north", "build", "quiet", "paper", "code", "music", "city", "field", "rain", "green", "slow",
      "history", "market", "engine", "letter", "bridge", "winter", "table", "voice", "window", "island", "salt"};
  std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(topic)));
  std::string s = "Notes about " + topic + ".\n\n";
  for (int i = 1; i <= lines; ++i) {
    std::string line;
    for (int w = 0; w < 10; ++w) line += std::string(kWords[rng() % std::size(kWords)]) + (w == 9 ? ".\n" : " ");
    s += edit_every && i % edit_every == 0 ? "This line was rewritten while renaming, " + std::to_string(i) + ".\n" : line;
  }
  return s;
}

}  // namespace

TEST_CASE("issue 28 (16): a rename with edits answers 301; a delete beside an unrelated note 410; two renames map") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Old name.md", Long("rivers", 20)},
                           {"Doomed.md", Long("volcanoes", 20)},
                           {"First.md", Long("glaciers", 20)},
                           {"Second.md", Long("deserts", 20)}}))
              .status == 200);
  REQUIRE(c.WaitForPage("/second", 200).status == 200);

  // Renamed with three of twenty lines edited: the old URL moves.
  auto r = c.Push(PushBody({{"New name.md", Long("rivers", 20, 7)}}, {"Old name.md"}));
  INFO(r.body);
  REQUIRE(r.status == 200);
  auto moved = c.WaitForPage("/old-name", 301);
  CHECK(moved.status == 301);
  CHECK(moved.Header("Location") == "/new-name");
  CHECK(c.WaitForPage("/new-name", 200).status == 200);

  // A delete and an unrelated new note in one push: no rename.
  REQUIRE(c.Push(PushBody({{"Fresh.md", Long("orchids", 20)}}, {"Doomed.md"})).status == 200);
  CHECK(c.WaitForPage("/doomed", 410).status == 410);
  CHECK(c.WaitForPage("/fresh", 200).status == 200);

  // Two renames with edits at once, each to its own successor.
  REQUIRE(c.Push(PushBody({{"Deserts 2.md", Long("deserts", 20, 6)}, {"Glaciers 2.md", Long("glaciers", 20, 5)}},
                          {"First.md", "Second.md"}))
              .status == 200);
  CHECK(c.WaitForPage("/first", 301).Header("Location") == "/glaciers-2");
  CHECK(c.WaitForPage("/second", 301).Header("Location") == "/deserts-2");
}

TEST_CASE("issue 28 (15): a note's title is its file name unless title: is set, everywhere") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Old name.md", "Some text without a heading.\n"},
                           {"File title.md", "# A heading that is no title\n\nBody.\n"},
                           {"Linker.md", "See [[Old name]] and [[File title]].\n"},
                           {"Set.md", "---\ntitle: From frontmatter\n---\n# Heading\n"}}))
              .status == 200);
  auto page = c.WaitForPage("/file-title", 200);
  CHECK(Has(page.body, "<title>File title · "));
  CHECK(Has(c.WaitForPage("/set", 200).body, "<title>From frontmatter · "));
  CHECK(Has(c.WaitForPage("/_/tree/", 200, "File title").body, "{\"title\":\"File title\",\"url\":\"/file-title\"}"));

  REQUIRE(c.Push(PushBody({{"New name.md", "Some text without a heading.\n"}}, {"Old name.md"})).status == 200);
  auto tree = c.WaitForPage("/_/tree/", 200, "New name");
  CHECK(Has(tree.body, "{\"title\":\"New name\",\"url\":\"/new-name\"}"));
  CHECK(!Has(tree.body, "Old name"));
  CHECK(Has(c.WaitForPage("/new-name", 200).body, "<title>New name · "));
  CHECK(Has(c.WaitForPage("/rss.xml", 200, "New name").body, "<title>New name</title>"));
  CHECK(Has(c.WaitForPage("/_/recent", 200, "New name").body, ">New name</a>"));
}

TEST_CASE("issue 28 (15): notes stored before the title rule changed get their file-name titles on start") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"File title.md", "# A heading that is no title\n\nBody, see [[Linker]].\n"},
                           {"Linker.md", "Linked from elsewhere.\n"},
                           {"Set.md", "---\ntitle: From frontmatter\n---\n# Heading\n"}}))
              .status == 200);
  REQUIRE(c.WaitForPage("/file-title", 200).status == 200);
  c.StopIngest();
  // A store written by a build that titled notes by their first heading:
  // the old title in the row, and the old build's layout fingerprint.
  {
    auto db = sqlite::Db::Open(c.ingest_data_dir() + "/ingest.db");
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("UPDATE notes SET title = 'A heading that is no title' WHERE path = 'File title.md'").ok());
    REQUIRE((*db)->Exec("UPDATE site_layout SET fingerprint = 'old-layout'").ok());
  }
  c.StartIngest();
  // Its page, the explorer, the home listing and the backlink of the note it links to.
  CHECK(Has(c.WaitForPage("/file-title", 200, "<title>File title · ").body, "<title>File title · "));
  auto tree = c.WaitForPage("/_/tree/", 200, "\"File title\"");
  CHECK(Has(tree.body, "{\"title\":\"File title\",\"url\":\"/file-title\"}"));
  CHECK(!Has(tree.body, "A heading that is no title"));
  auto home = c.WaitForPage("/", 200, ">File title<");
  CHECK(!Has(home.body, ">A heading that is no title<"));
  auto linker = c.WaitForPage("/linker", 200, ">File title<");
  CHECK(Has(linker.body, ">File title<"));
  CHECK(!Has(linker.body, ">A heading that is no title<"));
  CHECK(Has(c.WaitForPage("/set", 200).body, "<title>From frontmatter · "));
  CHECK(Has(c.Logs(), "notes retitled"));
  // The stored row has it too (the next start, at the same layout, reads it).
  c.StopIngest();
  auto db = sqlite::Db::Open(c.ingest_data_dir() + "/ingest.db");
  REQUIRE(db.ok());
  auto q = (*db)->Prepare("SELECT title FROM notes WHERE path = 'File title.md'");
  REQUIRE(q.ok());
  REQUIRE(*q->Step());
  CHECK(q->Text(0) == "File title");
}

TEST_CASE("issue 28 (9, 10): readable dates; a description from the first paragraph, not the title") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Dated.md",
                            "---\nupdated: 2024-04-04T10:30\ncreated: 2024-01-02 08:00:00\n---\n"
                            "# Dated\n\n> [!note] A callout title\n\nThe **first** paragraph, with a [[Nowhere|link]].\n"}}))
              .status == 200);
  auto page = c.WaitForPage("/dated", 200);
  CHECK(Has(page.body, "Updated <time datetime=\"2024-04-04T10:30\">4 April 2024</time>"));
  CHECK(Has(page.body, "Created <time datetime=\"2024-01-02T08:00:00\">2 January 2024</time>"));
  CHECK(Has(page.body, "<meta name=\"description\" content=\"The first paragraph, with a link.\">"));
  CHECK(Has(page.body, "<meta property=\"og:description\" content=\"The first paragraph, with a link.\">"));
}

TEST_CASE("issue 28 (12, 13): a folder of folders lists them; a folder's note is the folder, once") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Areas/Health/Sleep.md", "Sleep well.\n"},
                           {"Projects/Projects.md", "# Projects\n\nAll projects.\n"},
                           {"Projects/Alpha.md", "Alpha.\n"}}))
              .status == 200);
  auto areas = c.WaitForPage("/areas/", 200, "Health");
  CHECK(Has(areas.body, "1 folder"));
  CHECK(!Has(areas.body, "0 notes"));
  CHECK(Has(areas.body, "<a href=\"/areas/health/\">Health/</a>"));
  auto health = c.WaitForPage("/areas/health/", 200);
  CHECK(Has(health.body, "1 note"));

  auto tree = c.WaitForPage("/_/tree/projects/", 200, "Alpha");
  CHECK(tree.body == "{\"folders\":[],\"notes\":[{\"title\":\"Alpha\",\"url\":\"/projects/alpha\"}],\"more\":0,"
                     "\"url\":\"/projects/\"}");
  auto note = c.WaitForPage("/projects/", 200);
  CHECK(!Has(note.body, "<a href=\"/projects/\">Projects</a> <span>/</span> <span aria-current=\"page\">Projects"));
}
