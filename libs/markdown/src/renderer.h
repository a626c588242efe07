// Internal: the md4c callback renderer behind RenderNote. render.cc holds the
// block/text side, render_links.cc links, images and wikilinks. One instance
// renders one note; not thread-safe.
#pragma once

#include <md4c.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "folio/markdown/render.h"
#include "sanitize_internal.h"

namespace folio::markdown {

// "#Heading" -> HeadingId("Heading"); nested "A#B" -> HeadingId("B");
// "^block" -> "block-" + HeadingId("block").
std::string AnchorId(std::string_view anchor);

class Renderer {
 public:
  Renderer(std::string_view note_path, const RenderOptions& options, RenderResult* result);

  // Renders `body` (markdown without frontmatter) into the result.
  void Run(std::string body);

 private:
  enum class SpanKind { kLink, kImage, kWikilink };
  struct SpanFrame {
    SpanKind kind;
    size_t html_start = 0;   // where the span's inner HTML starts in html()
    size_t text_start = 0;   // where its inner text starts in text()
    std::string close;       // kLink: closing tag
    std::string raw;         // kWikilink: the target as md4c gave it
    std::string target;      // kWikilink: without alias and anchor
    std::string anchor;
    std::string alias;       // kWikilink: "\|" alias found inside the target
    std::optional<std::string> url;  // resolved URL (or image src)
    std::string title;       // kImage: title attribute
    bool embed = false;
    bool dead = false;
  };

  static int OnEnterBlock(MD_BLOCKTYPE type, void* detail, void* self);
  static int OnLeaveBlock(MD_BLOCKTYPE type, void* detail, void* self);
  static int OnEnterSpan(MD_SPANTYPE type, void* detail, void* self);
  static int OnLeaveSpan(MD_SPANTYPE type, void* detail, void* self);
  static int OnText(MD_TEXTTYPE type, const MD_CHAR* text, MD_SIZE size, void* self);

  void EnterBlock(MD_BLOCKTYPE type, void* detail);
  void LeaveBlock(MD_BLOCKTYPE type, void* detail);
  void EnterSpan(MD_SPANTYPE type, void* detail);
  void LeaveSpan(MD_SPANTYPE type);
  void Text(MD_TEXTTYPE type, std::string_view text);
  void LeaveHeading(int level);

  // render_links.cc
  void EnterLink(const MD_SPAN_A_DETAIL& d);
  void EnterImage(const MD_SPAN_IMG_DETAIL& d);
  void EnterWikilink(const MD_SPAN_WIKILINK_DETAIL& d);
  void LeaveLink(SpanFrame& f);
  void LeaveImage(SpanFrame& f);
  void LeaveWikilink(SpanFrame& f);
  SpanFrame NewFrame(SpanKind kind);
  std::optional<std::string> ResolveTarget(std::string_view target);
  // Writes the opening <span class="link-dead"> for `target` and warns.
  void OpenDead(const std::string& target, bool embed);

  // An md4c attribute as a string: entities decoded, embed markers restored.
  std::string AttrString(const MD_ATTRIBUTE& a) const;
  // Text as written in the note: embed markers turned back into '!'.
  std::string_view Restore(const MD_CHAR* p, size_t n, std::string* scratch);
  void FlushHtml();
  void TextBreak(char c);

  std::string& html() { return result_->html; }
  std::string& text() { return result_->text; }

  std::string_view note_path_;
  const RenderOptions& options_;
  RenderResult* result_;
  std::string body_;
  std::vector<size_t> bangs_;       // offsets of "!" of "![[" replaced by a marker
  bool trailing_bang_ = false;      // the text being handled ends with a restored "!"
  size_t bang_html_end_ = SIZE_MAX; // html().size() right after such a text was written
  std::string pending_html_;        // consecutive raw-HTML pieces not yet sanitised
  HtmlSanitizer sanitizer_;
  std::vector<SpanFrame> spans_;
  size_t heading_html_start_ = 0;
  size_t heading_text_start_ = 0;
  std::set<std::string> heading_ids_;
  std::string first_h1_;
};

}  // namespace folio::markdown
