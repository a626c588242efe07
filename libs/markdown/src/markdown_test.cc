// Slugs, frontmatter and link resolution. Rendering: render_test.cc; the
// sanitiser and the XSS corpus: sanitize_test.cc.
#include <doctest/doctest.h>

#include <random>

#include "folio/core/text.h"
#include "folio/markdown/frontmatter.h"
#include "folio/markdown/links.h"
#include "folio/markdown/slug.h"

using namespace folio::markdown;

TEST_CASE("slug: ASCII, spaces, punctuation") {
  CHECK(UrlForNotePath("Folder/Note name.md") == "/folder/note-name");
  CHECK(UrlForNotePath("C++ & you.md") == "/c-you");
  CHECK(SlugifySegment("Hello,   World!") == "hello-world");
  CHECK(SlugifySegment("snake_case_name") == "snake-case-name");
  CHECK(SlugifySegment("--a--b--") == "a-b");
  CHECK(SlugifySegment("v1.2 release") == "v1.2-release");
  CHECK(SlugifySegment("end.") == "end");
  CHECK(SlugifySegment(".hidden") == "hidden");
  CHECK(SlugifySegment("a . b") == "a-b");
  CHECK(SlugifySegment("!!!") == "-");
  CHECK(SlugifySegment("") == "-");
  CHECK(UrlForNotePath("Note.MD") == "/note");
}

TEST_CASE("slug: Unicode letters are kept, Unicode punctuation separates") {
  // Lower-cased like ASCII (Latin, Greek, Cyrillic, Armenian), so "/заметки" and "/Заметки" are one page.
  CHECK(UrlForNotePath("Заметки/Моя заметка.md") == "/заметки/моя-заметка");
  CHECK(SlugifySegment("Ελληνικά Ÿes Łódź") == "ελληνικά-ÿes-łódź");
  CHECK(SlugifySegment("日本語のノート") == "日本語のノート");
  CHECK(SlugifySegment("你好，世界。") == "你好-世界");         // fullwidth comma, ideographic stop
  CHECK(SlugifySegment("Café au lait") == "café-au-lait");
  CHECK(SlugifySegment("Ärger über Öl") == "ärger-über-öl");   // non-ASCII keeps its case
  CHECK(SlugifySegment("a\u00A0b") == "a-b");                  // no-break space
  CHECK(SlugifySegment("a — b “c”") == "a-b-c");               // em dash, quotes
  CHECK(SlugifySegment("rocket 🚀 launch") == "rocket-launch");
  CHECK(SlugifySegment("x\xFFy") == "x-y");                     // invalid UTF-8 separates
}

TEST_CASE("slug: index notes are their folder's page") {
  CHECK(UrlForNotePath("index.md") == "/");
  CHECK(UrlForNotePath("INDEX.md") == "/");
  CHECK(UrlForNotePath("Docs/index.md") == "/docs/");
  CHECK(UrlForNotePath("Docs/Sub Dir/Index.md") == "/docs/sub-dir/");
  CHECK(UrlForNotePath("Docs/indexes.md") == "/docs/indexes");
  CHECK(UrlForNotePath("img/Photo 1.PNG") == "/img/photo-1.png");  // attachments keep their extension
}

TEST_CASE("slug: heading ids") {
  CHECK(HeadingId("Getting Started!") == "getting-started");
  CHECK(HeadingId("Über uns") == "über-uns");
  CHECK(HeadingId("***") == "-");
}

TEST_CASE("frontmatter: fields") {
  Frontmatter fm = ParseFrontmatter(
      "---\n"
      "title: My Note\n"
      "aliases: [First, Second]\n"
      "tags: [\"#a\", b]\n"
      "permalink: /x\n"
      "description: Short\n"
      "cssclasses: wide dark\n"
      "date: 2024-01-02\n"
      "modified: 2024-02-03\n"
      "cover: pic.png\n"
      "lang: ru\n"
      "---\n"
      "# Body\n");
  CHECK(fm.present);
  CHECK(fm.error.empty());
  CHECK(fm.title == "My Note");
  CHECK(fm.aliases == std::vector<std::string>{"First", "Second"});
  CHECK(fm.tags == std::vector<std::string>{"a", "b"});
  CHECK(fm.permalink == "/x");
  CHECK(fm.description == "Short");
  CHECK(fm.cssclasses == std::vector<std::string>{"wide", "dark"});
  CHECK(fm.date == "2024-01-02");
  CHECK(fm.updated == "2024-02-03");
  CHECK(fm.image == "pic.png");
  CHECK(fm.lang == "ru");
  CHECK(fm.publish);
  CHECK(fm.body_offset == std::string_view(
      "---\ntitle: My Note\naliases: [First, Second]\ntags: [\"#a\", b]\npermalink: /x\n"
      "description: Short\ncssclasses: wide dark\ndate: 2024-01-02\nmodified: 2024-02-03\n"
      "cover: pic.png\nlang: ru\n---\n").size());
}

TEST_CASE("frontmatter: aliases and tags forms") {
  CHECK(ParseFrontmatter("---\nalias: Only One\n---\n").aliases == std::vector<std::string>{"Only One"});
  CHECK(ParseFrontmatter("---\naliases:\n  - A\n  - B\n---\n").aliases ==
        std::vector<std::string>{"A", "B"});
  CHECK(ParseFrontmatter("---\ntags: \"a, #b c\"\n---\n").tags == std::vector<std::string>{"a", "b", "c"});
  CHECK(ParseFrontmatter("---\ntag: \"#solo\"\n---\n").tags == std::vector<std::string>{"solo"});
  CHECK(ParseFrontmatter("---\ntags:\n  - x/y\n  - \"#z\"\n---\n").tags ==
        std::vector<std::string>{"x/y", "z"});
}

TEST_CASE("frontmatter: publish and draft") {
  CHECK(ParseFrontmatter("---\npublish: false\n---\n").publish == false);
  CHECK(ParseFrontmatter("---\npublish: true\n---\n").publish == true);
  CHECK(ParseFrontmatter("---\ndraft: true\n---\n").publish == false);
  CHECK(ParseFrontmatter("---\ndraft: no\n---\n").publish == true);
  CHECK(ParseFrontmatter("no frontmatter").publish == true);
}

TEST_CASE("frontmatter: publish: private") {
  Frontmatter p = ParseFrontmatter("---\npublish: private\n---\n");
  CHECK(p.publish);
  CHECK(p.private_note);
  CHECK(ParseFrontmatter("---\npublish: Private\n---\n").private_note);
  CHECK(ParseFrontmatterWith("---\npublish: \"private\"\n---\n", false).private_note);
  CHECK_FALSE(ParseFrontmatter("---\npublish: true\n---\n").private_note);
  CHECK_FALSE(ParseFrontmatter("---\npublish: false\n---\n").private_note);
  // A draft stays unpublished, private or not.
  CHECK_FALSE(ParseFrontmatter("---\npublish: private\ndraft: true\n---\n").publish);
}

namespace {
bool SameFields(const Frontmatter& a, const Frontmatter& b) {
  return a.present == b.present && a.title == b.title && a.aliases == b.aliases && a.tags == b.tags &&
         a.permalink == b.permalink && a.description == b.description && a.publish == b.publish &&
         a.private_note == b.private_note &&
         a.cssclasses == b.cssclasses && a.date == b.date && a.updated == b.updated && a.image == b.image &&
         a.lang == b.lang && a.body_offset == b.body_offset && a.error.empty() == b.error.empty();
}
}  // namespace

TEST_CASE("frontmatter: plain key: value lines read without yaml-cpp give what yaml-cpp gives") {
  // Fixed cases at the edge of what the plain-lines reader takes.
  const char* const kBlocks[] = {
      "title: Bench note 1\n", "title: a: b\n", "title: x #y\n", "title: x#y\n", "title: https://x.y/z\n",
      "title: ends:\n", "title: null\n", "title: ~\n", "title: 'q'\n", "title: it's\n", "tags: a, b c\n",
      "publish: no\ndraft: off\n", "publish: maybe\n", "publish: private\n", "title: x\ntitle: y\n", "title:  spaced  \n",
      "title: [a]\n", "title: a [b]\n", "title: \xC3\xA9" "t\xC3\xA9\n", "title: a\xC2\x85" "b\n", "title: -1\n",
      "date: 2024-01-02\nupdated: 2024-02-03T10:00:00Z\n", "Title: Upper\n", "x-y_z: 1\ntitle: t\n",
      "title: a\tb\n", "title:\ttab\n", "title:x\n", "title: \n", "title: a\r\n", "\ntitle: blank first\n",
      "title: %x\n", "title: @x\n", "title: x & y * z ! w\n", "title: \"q\" x\n", "cssclasses: wide, dark\n",
  };
  for (const char* block : kBlocks) {
    std::string doc = std::string("---\n") + block + "---\nbody\n";
    INFO(block);
    CHECK(SameFields(ParseFrontmatter(doc), ParseFrontmatterWith(doc, /*simple_lines=*/false)));
  }
  // And random ones from an alphabet of YAML's special characters.
  std::mt19937 rng(7);
  const std::string alphabet = "ab Z09-_:#,'\"[]{}&*!|>%@`~?.\\/\xC3\xA9";
  const char* const kKeys[] = {"title", "tags", "aliases", "publish", "draft", "date", "permalink", "other"};
  size_t simple = 0;
  for (int n = 0; n < 20000; ++n) {
    std::string doc = "---\n";
    for (int l = 0, lines = 1 + static_cast<int>(rng() % 3); l < lines; ++l) {
      doc += kKeys[rng() % 8];
      doc += ": ";
      for (int c = 0, len = static_cast<int>(rng() % 12); c < len; ++c) doc += alphabet[rng() % alphabet.size()];
      doc += "\n";
    }
    doc += "---\n";
    Frontmatter fast = ParseFrontmatter(doc), ref = ParseFrontmatterWith(doc, false);
    INFO(doc);
    REQUIRE(SameFields(fast, ref));
    if (ref.error.empty()) ++simple;
  }
  CHECK(simple > 1000);  // the comparison saw many valid blocks, not only errors
}

TEST_CASE("frontmatter: YAML escapes \\N and \\_ give valid UTF-8 (found by fuzzing)") {
  auto fm = ParseFrontmatter("---\ntitle: \"a\\Nb\\_c\"\naliases: [\"\\N\"]\ntags: \"x\\_y\"\n---\n");
  CHECK(fm.error == "");
  CHECK(fm.title == "a\u0085b\u00a0c");
  CHECK(folio::IsValidUtf8(fm.title));
  CHECK(fm.aliases == std::vector<std::string>{"\u0085"});
  CHECK(fm.tags == std::vector<std::string>{"x\u00a0y"});
}

TEST_CASE("frontmatter: absent, CRLF, dots, empty") {
  Frontmatter none = ParseFrontmatter("# Title\n---\n");
  CHECK(!none.present);
  CHECK(none.body_offset == 0);
  Frontmatter crlf = ParseFrontmatter("---\r\ntitle: T\r\n---\r\nbody");
  CHECK(crlf.title == "T");
  CHECK(crlf.body_offset == 20);
  Frontmatter dots = ParseFrontmatter("---\ntitle: D\n...\nbody");
  CHECK(dots.title == "D");
  CHECK(dots.body_offset == 17);
  Frontmatter empty = ParseFrontmatter("---\n---\nbody");
  CHECK(empty.present);
  CHECK(empty.error.empty());
  CHECK(empty.body_offset == 8);
  CHECK(!ParseFrontmatter("----\ntitle: x\n---\n").present);
}

TEST_CASE("frontmatter: invalid YAML names the document line, body still follows") {
  std::string doc = "---\ntitle: ok\ntags: [a, b\nx: 1\n---\nBody\n";
  Frontmatter fm = ParseFrontmatter(doc);
  CHECK(fm.present);
  CHECK(doc.substr(fm.body_offset) == "Body\n");
  CHECK(fm.error.rfind("frontmatter line ", 0) == 0);
  CHECK(fm.error == "frontmatter line 4: end of sequence flow not found");

  Frontmatter bad = ParseFrontmatter("---\ntitle: ok\n  bad: x\n---\nBody");
  CHECK(bad.error.find("frontmatter line 3:") == 0);
  Frontmatter scalar = ParseFrontmatter("---\njust text\n---\nBody");
  CHECK(!scalar.error.empty());
}

TEST_CASE("frontmatter: unterminated renders the whole document") {
  Frontmatter fm = ParseFrontmatter("---\ntitle: x\nno end\n");
  CHECK(!fm.error.empty());
  CHECK(fm.body_offset == 0);
  CHECK(fm.title.empty());
}

namespace {
LinkIndex MakeIndex() {
  LinkIndex idx;
  idx.Add("Formulas.md");
  idx.Add("Projects/Plan.md", {"Roadmap", "The Plan"});
  idx.Add("Projects/Notes.md");
  idx.Add("Archive/Notes.md");
  idx.Add("Deep/Nested/Notes.md");
  idx.Add("Notes.md");
  idx.Add("A/Shared.md");
  idx.Add("B/Shared.md");
  idx.Add("B/Sub/Only.md");
  idx.Add("img/Photo.png");
  return idx;
}
}  // namespace

TEST_CASE("links: case-insensitive, with or without .md") {
  LinkIndex idx = MakeIndex();
  CHECK(idx.size() == 10);
  CHECK(idx.Resolve("formulas", "X.md")->path == "Formulas.md");
  CHECK(idx.Resolve("FORMULAS.md", "X.md")->path == "Formulas.md");
  CHECK(idx.Resolve("Formulas.MD", "Deep/X.md")->path == "Formulas.md");
  CHECK(idx.Resolve("formulas", "X.md")->ambiguous == false);
  CHECK(idx.Contains("Formulas.md"));
  CHECK(!idx.Contains("formulas.md"));
}

TEST_CASE("links: relative to the linking note, then the vault root") {
  LinkIndex idx = MakeIndex();
  CHECK(idx.Resolve("Notes", "Projects/Plan.md")->path == "Projects/Notes.md");
  CHECK(idx.Resolve("Notes", "Other.md")->path == "Notes.md");
  CHECK(idx.Resolve("Archive/Notes", "Projects/Plan.md")->path == "Archive/Notes.md");
  CHECK(idx.Resolve("../Archive/Notes.md", "Projects/Plan.md")->path == "Archive/Notes.md");
  CHECK(idx.Resolve("./Plan", "Projects/Notes.md")->path == "Projects/Plan.md");
  CHECK(idx.Resolve("/Notes", "Projects/Plan.md")->path == "Notes.md");
  CHECK(!idx.Resolve("Notes", "Projects/Plan.md")->ambiguous);
}

TEST_CASE("links: by name anywhere, nearest wins, ambiguity reported") {
  LinkIndex idx = MakeIndex();
  auto only = idx.Resolve("only", "A/Shared.md");
  REQUIRE(only);
  CHECK(only->path == "B/Sub/Only.md");
  CHECK(!only->ambiguous);
  auto same_folder = idx.Resolve("Shared", "B/Sub/Only.md");  // neither is in B/Sub: shallowest, then lexicographic
  REQUIRE(same_folder);
  CHECK(same_folder->path == "A/Shared.md");
  CHECK(same_folder->ambiguous);
  LinkIndex idx2;
  idx2.Add("Z/Deep/Target.md");
  idx2.Add("Y/Target.md");
  idx2.Add("X/Target.md");
  idx2.Add("Z/Deep/From.md");
  auto near = idx2.Resolve("target", "Z/Deep/From.md");
  CHECK(near->path == "Z/Deep/Target.md");  // relative step: same folder
  auto shallow = idx2.Resolve("target", "Q/From.md");
  CHECK(shallow->path == "X/Target.md");  // two at depth 1: lexicographic
  CHECK(shallow->ambiguous);
}

TEST_CASE("links: folder/name suffix") {
  LinkIndex idx = MakeIndex();
  CHECK(idx.Resolve("Nested/Notes", "X.md")->path == "Deep/Nested/Notes.md");
  CHECK(idx.Resolve("sub/only", "X.md")->path == "B/Sub/Only.md");
  CHECK(!idx.Resolve("Other/Only", "X.md"));
  CHECK(!idx.Resolve("ub/Only", "X.md"));  // a suffix of whole segments only
}

TEST_CASE("links: aliases") {
  LinkIndex idx = MakeIndex();
  CHECK(idx.Resolve("roadmap", "X.md")->path == "Projects/Plan.md");
  CHECK(idx.Resolve("The Plan", "X.md")->path == "Projects/Plan.md");
  idx.Add("Projects/Plan.md");  // re-added without aliases
  CHECK(!idx.Resolve("Roadmap", "X.md"));
}

TEST_CASE("links: attachments, dangling, removal") {
  LinkIndex idx = MakeIndex();
  CHECK(idx.Resolve("Photo.png", "X.md")->path == "img/Photo.png");
  CHECK(idx.Resolve("photo.PNG", "X.md")->path == "img/Photo.png");
  CHECK(!idx.Resolve("Photo", "X.md"));
  CHECK(!idx.Resolve("Missing", "X.md"));
  CHECK(!idx.Resolve("", "X.md"));
  CHECK(!idx.Resolve("../../x", "A/b.md"));
  idx.Remove("Formulas.md");
  CHECK(!idx.Resolve("formulas", "X.md"));
  CHECK(idx.size() == 9);
  idx.Remove("Projects/Notes.md");
  CHECK(idx.Resolve("Notes", "Projects/Plan.md")->path == "Notes.md");
}
