// RenderNoteDeferred + FillLinks (deferred.h) against RenderNote: the same
// page, byte for byte, whenever every link resolves and no note is
// embedded; nullopt otherwise.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "folio/markdown/deferred.h"
#include "folio/markdown/render.h"
#include "folio/markdown/slug.h"

using namespace folio::markdown;

namespace {

// Answers every question (URLs with characters that need escaping), or
// none for targets starting with "Gone"; notes are embedded when asked.
// Records the questions, as ingest's resolver records warnings.
class Vault : public LinkResolver {
 public:
  std::optional<std::string> Resolve(std::string_view t) override {
    asked.push_back("note " + std::string(t));
    if (t.substr(0, 4) == "Gone") return std::nullopt;
    return "/n/" + HeadingId(t) + "/a b&c\"é";
  }
  std::optional<std::string> ResolveAttachment(std::string_view t) override {
    asked.push_back("file " + std::string(t));
    if (t.substr(0, 4) == "Gone") return std::nullopt;
    return "/assets/h/" + std::string(t);
  }
  std::optional<std::string> EmbedNote(std::string_view t, std::string_view, const RenderOptions&) override {
    return "<p>embedded " + std::string(t) + "</p>";
  }
  std::vector<std::string> asked;
};

// Every link kind, in the places the renderer treats apart.
const char* const kNotes[] = {
    "# Title [[Head link]]\n\nText [[Other]] and [[Other|alias *em*]] and [[Other#Sec]] and [[Other#^blk]].\n",
    "---\ntitle: Front\ntags: [a, b]\n---\nA [md link](Other%20note.md#Part) and [rel](docs/page) and "
    "[abs](https://example.com/x) and [frag](#Here).\n",
    "![[pic.png]] ![[pic.png|300x200]] ![[clip.mp4]] ![[song.mp3]] ![[doc.pdf#page=2]] ![img](img/a%20b.png)\n",
    "| a | b |\n|---|---|\n| [[T1\\|x]] | [[T2]] |\n\n- item [[L1]] ^blk\n- [ ] task [[L2]]\n",
    "> [!note] Call [[C1]]\n> body [[C2]] ==mark [[C3]]==\n\nfoot[^1]\n\n[^1]: note [[F1]]\n",
    "```js\nconst x = \"[[Not a link]]\";\n```\n\n$x^2$ and #tag/sub and %%hidden [[H]]%% end\n",
    "Text ~fl0123456789abcdef.0~ that looks like a placeholder, and [[Real]].\n",
    "[[#Local heading]] and [[ ]] and ![[ ]] and [x](javascript:alert(1))\n",
    "[link to file](files/spec%20sheet.pdf) and [[spec sheet.pdf]]\n",
};

}  // namespace

TEST_CASE("deferred: FillLinks gives RenderNote's page when every link resolves") {
  for (const char* note : kNotes) {
    CAPTURE(note);
    for (bool strict : {false, true}) {
      RenderOptions opts;
      opts.strict_line_breaks = strict;
      Vault direct_vault;
      opts.resolver = &direct_vault;
      RenderResult direct = RenderNote(note, "Folder/Here.md", opts);

      DeferredLinks links;
      RenderResult first = RenderNoteDeferred(note, "Folder/Here.md", opts, &links);
      Vault later_vault;
      std::optional<std::string> html = FillLinks(first.html, links, &later_vault);
      REQUIRE(html.has_value());
      CHECK(*html == direct.html);
      CHECK(later_vault.asked == direct_vault.asked);  // same questions, same order
      CHECK(first.warnings == direct.warnings);
      CHECK(first.title == direct.title);
      CHECK(first.text == direct.text);
      CHECK(first.tags == direct.tags);
      CHECK(first.block_ids == direct.block_ids);
      REQUIRE(first.links.size() == direct.links.size());
      for (size_t i = 0; i < first.links.size(); ++i) {
        CHECK(first.links[i].target == direct.links[i].target);
        CHECK(first.links[i].anchor == direct.links[i].anchor);
        CHECK(first.links[i].embed == direct.links[i].embed);
        CHECK(first.links[i].resolved == direct.links[i].resolved);
      }
      REQUIRE(first.headings.size() == direct.headings.size());
      for (size_t i = 0; i < first.headings.size(); ++i) CHECK(first.headings[i].id == direct.headings[i].id);
    }
  }
}

TEST_CASE("deferred: a dangling link or a note embed asks for a new render") {
  for (const char* note : {"[[Gone]]", "[x](Gone.md)", "![[Gone.png]]", "![y](Gone.png)", "ok [[A]] then [[Gone too]]"}) {
    CAPTURE(note);
    DeferredLinks links;
    RenderResult first = RenderNoteDeferred(note, "n.md", RenderOptions{}, &links);
    Vault vault;
    CHECK_FALSE(FillLinks(first.html, links, &vault).has_value());
  }
  DeferredLinks links;
  RenderResult first = RenderNoteDeferred("Before ![[Other note]] after", "n.md", RenderOptions{}, &links);
  CHECK(links.embeds_note);
  Vault vault;
  CHECK_FALSE(FillLinks(first.html, links, &vault).has_value());
  // A note without links is finished as it is.
  RenderResult plain = RenderNoteDeferred("# Plain\n\ntext", "n.md", RenderOptions{}, &links);
  CHECK(links.questions.empty());
  CHECK(FillLinks(plain.html, links, &vault) == RenderNote("# Plain\n\ntext", "n.md", RenderOptions{}).html);
}
