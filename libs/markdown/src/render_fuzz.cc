// libFuzzer target: bytes -> RenderNote, the whole Obsidian-flavoured
// renderer (frontmatter, md4c, wikilinks, embeds, callouts, footnotes, math,
// mermaid, the raw-HTML sanitiser), with a resolver that resolves some
// links, attachments and note embeds. Checks what render.h and sanitize.h
// promise about the output, whatever the input:
//   - the HTML, title, text, headings and tags are valid UTF-8 when the
//     input is;
//   - the HTML, tokenised as a browser does (html_check.h), has only tags
//     the renderer writes itself or the sanitiser allows, no event-handler
//     or style attribute, no javascript:/vbscript:/data: URL, no comment,
//     doctype or processing instruction, and nothing left inside an open tag.
// Seeds: tests/fuzz/corpus/markdown_render_fuzz; build and run: tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "folio/core/text.h"
#include "folio/markdown/render.h"
#include "folio/markdown/slug.h"
#include "folio/testing/small_stack.h"
#include "html_check.h"

namespace {

using folio::markdown::LinkResolver;

// Resolves targets starting with a letter a-m (as notes), attachments with
// a known or ".zip" extension, and embeds of "embedded..." notes. What it
// returns is trusted HTML/URLs, so it returns only fixed, clean values,
// except for embeds of "self...": the fuzz input itself, rendered again
// with no cycle detection, so only the renderer's own bounds (depth and the
// page's embed budget, render.h) end the recursion (issue 22).
class Resolver final : public LinkResolver {
 public:
  explicit Resolver(std::string_view source) : source_(source) {}
  std::optional<std::string> Resolve(std::string_view target) override {
    if (target.empty() || !((target[0] >= 'a' && target[0] <= 'm') || (target[0] >= 'A' && target[0] <= 'M'))) {
      return std::nullopt;
    }
    return folio::markdown::UrlForNotePath(std::string(target) + ".md");
  }
  std::optional<std::string> ResolveAttachment(std::string_view target) override {
    static constexpr std::string_view kExts[] = {".png", ".svg", ".pdf", ".mp3", ".mp4", ".zip", ".html"};
    for (std::string_view e : kExts) {
      if (folio::EndsWith(folio::AsciiLower(target), e)) {
        return "/assets/0123456789abcdef/" + std::string(target.substr(target.rfind('/') + 1));
      }
    }
    return std::nullopt;
  }
  std::optional<std::string> EmbedNote(std::string_view target, std::string_view anchor,
                                       const folio::markdown::RenderOptions& nested) override {
    // At most 64 such renders an input: the depth bound gets exercised
    // (a chain is 15 deep), without the page budget's 1,000 renders each
    // time (limits_test covers that budget).
    if (folio::StartsWith(folio::AsciiLower(target), "self") && ++self_renders_ <= 64) {
      folio::markdown::RenderOptions opts = nested;
      opts.resolver = this;
      return folio::markdown::RenderNote(source_, "Folder/Fuzz note.md", opts).html;
    }
    if (!folio::StartsWith(folio::AsciiLower(target), "embedded")) return std::nullopt;
    if (anchor == "cycle") return std::string("<p class=\"embed-cycle\">cycle</p>");
    return std::string("<p>embedded <em>note</em></p>");
  }

 private:
  std::string_view source_;
  int self_renders_ = 0;
};

void Require(bool ok, const char* what, std::string_view detail = "") {
  if (ok) return;
  std::fprintf(stderr, "render_fuzz: %s: %.*s\n", what, static_cast<int>(std::min<size_t>(detail.size(), 400)),
               detail.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  Resolver resolver(source);
  folio::markdown::RenderOptions options;
  options.resolver = &resolver;
  folio::markdown::RenderResult r;
  // On a thread with a small stack, so unbounded recursion shows up at once
  // rather than after thousands of levels (issue 22).
  folio::testing::RunOnSmallStack([&] { r = folio::markdown::RenderNote(source, "Folder/Fuzz note.md", options); });

  std::string problem = folio::fuzz::CheckRenderedHtml(r.html);
  Require(problem.empty(), problem.c_str(), r.html);

  if (folio::IsValidUtf8(source)) {
    Require(folio::IsValidUtf8(r.html), "html is not valid UTF-8", r.html);
    Require(folio::IsValidUtf8(r.title), "title is not valid UTF-8", r.title);
    Require(folio::IsValidUtf8(r.text), "text is not valid UTF-8", r.text);
    for (const auto& h : r.headings) {
      Require(folio::IsValidUtf8(h.text), "heading is not valid UTF-8", h.text);
      Require(folio::IsValidUtf8(h.id), "heading id is not valid UTF-8", h.id);
    }
    for (const auto& t : r.tags) Require(folio::IsValidUtf8(t), "tag is not valid UTF-8", t);
  }
  for (const auto& h : r.headings) {
    Require(h.text_offset <= r.text.size(), "heading text_offset past the text", h.text);
    Require(!h.id.empty(), "empty heading id", h.text);
  }
  return 0;
}
