// Note embeds as ingest renders them (ExtractSection / ExtractBlock, then
// RenderNote with an id_prefix per embed): footnotes of an embedded section
// defined outside it, and ids that stay unique on a page embedding the
// same note twice (issue 28).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "folio/markdown/render.h"
#include "folio/markdown/slug.h"

using namespace folio::markdown;

namespace {

constexpr std::string_view kSectionSource =
    "# Section source\n\n"
    "Intro with a note.[^s]\n\n"
    "## First section\n\nOne.\n\n"
    "## Second section\n\n"
    "Two, with a footnote.[^s] Link to [[#Nested in second]] and [x](#second-section).\n\n"
    "### Nested in second\n\nDeep. ^blk\n\n"
    "[^s]: The shared footnote.\n";

// Embeds notes as services/ingest/page_renderer.cc does: the part of the
// source, rendered one level deeper with "e<N>-" ids.
class Embedder : public LinkResolver {
 public:
  explicit Embedder(std::string prefix = "") : prefix_(std::move(prefix)) {}
  std::optional<std::string> Resolve(std::string_view t) override { return "/" + HeadingId(t); }
  std::optional<std::string> EmbedNote(std::string_view target, std::string_view anchor,
                                       const RenderOptions& nested) override {
    if (target != "Section source") return std::nullopt;
    std::optional<std::string> part;
    if (anchor.empty()) part = std::string(kSectionSource);
    else if (anchor[0] == '^') part = ExtractBlock(kSectionSource, anchor.substr(1));
    else part = ExtractSection(kSectionSource, anchor);
    if (!part) return std::nullopt;
    std::string prefix = prefix_ + "e" + std::to_string(++embeds_);
    Embedder inner(prefix);
    RenderOptions opts = nested;
    opts.resolver = &inner;
    std::string id_prefix = prefix + "-";
    opts.id_prefix = id_prefix;
    return RenderNote(*part, "Section source.md", opts).html;
  }

 private:
  std::string prefix_;
  int embeds_ = 0;
};

std::string Page(std::string_view md) {
  Embedder embedder;
  RenderOptions opts;
  opts.resolver = &embedder;
  return RenderNote(md, "Host.md", opts).html;
}

// Every id="..." of `html`, with how often it occurs.
std::map<std::string, int> Ids(const std::string& html) {
  std::map<std::string, int> ids;
  for (size_t at = html.find(" id=\""); at != std::string::npos; at = html.find(" id=\"", at + 1)) {
    size_t end = html.find('"', at + 5);
    ++ids[html.substr(at + 5, end - at - 5)];
  }
  return ids;
}

bool Has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("an embedded section shows footnotes whose definitions lie outside it") {
  std::optional<std::string> part = ExtractSection(kSectionSource, "Second section");
  REQUIRE(part.has_value());
  CHECK(Has(*part, "[^s]: The shared footnote.\n"));
  CHECK(!Has(*part, "Intro"));
  // Defined inside the part already: not added twice.
  std::string inside = "## A\n\nx[^a]\n\n[^a]: here\n\n## B\n\n[^a]: elsewhere\n";
  CHECK(ExtractSection(inside, "A").value() == "## A\n\nx[^a]\n\n[^a]: here\n\n");
  // A block keeps its footnotes too.
  CHECK(Has(ExtractBlock("Para[^n] ^b\n\n[^n]: note\n", "b").value(), "[^n]: note"));

  std::string html = Page("![[Section source#Second section]]\n");
  CHECK(Has(html, "<sup class=\"footnote-ref\"><a href=\"#fn-e1-1\" id=\"fnref-e1-1\">1</a></sup>"));
  CHECK(Has(html, "<li id=\"fn-e1-1\">The shared footnote. <a href=\"#fnref-e1-1\""));
  CHECK(!Has(html, "[^s]"));
}

TEST_CASE("a note embedded twice on a page: ids unique, anchors point into their own embed") {
  std::string html = Page("# Host\n\n![[Section source]]\n\n![[Section source#Second section]]\n");
  for (const auto& [id, n] : Ids(html)) {
    INFO(id);
    CHECK(n == 1);
  }
  // The host's own ids are untouched; each embed's carry its prefix.
  CHECK(Has(html, "<h1 id=\"host\">Host</h1>"));
  CHECK(Has(html, "<h2 id=\"e1-second-section\">Second section</h2>"));
  CHECK(Has(html, "<h2 id=\"e2-second-section\">Second section</h2>"));
  CHECK(Has(html, "<h3 id=\"e1-nested-in-second\">"));
  CHECK(Has(html, "<h3 id=\"e2-nested-in-second\">"));
  CHECK(Has(html, "<p id=\"e1-block-blk\">"));
  CHECK(Has(html, "<p id=\"e2-block-blk\">"));
  // [[#Heading]] and [x](#id) inside an embed lead to that embed's heading.
  CHECK(Has(html, "<a href=\"#e1-nested-in-second\" class=\"internal-link\">Nested in second</a>"));
  CHECK(Has(html, "<a href=\"#e2-nested-in-second\" class=\"internal-link\">Nested in second</a>"));
  CHECK(Has(html, "<a href=\"#e1-second-section\">x</a>"));
  CHECK(Has(html, "<a href=\"#e2-second-section\">x</a>"));
  // The embed's link to its source still names the note's own heading.
  CHECK(Has(html, "<a class=\"embed-source\" href=\"/section-source#second-section\">"));
  CHECK(Has(html, "<div class=\"embed markdown-embed\" data-embed=\"Section source#Second section\">"));
}
