// Internal: the md4c callback renderer behind RenderNote. render.cc holds the
// block/text side, render_links.cc links, images and wikilinks, embed.cc
// ![[embeds]], inline_syntax.cc ==highlights==, #tags and footnote
// references, callout.cc callouts and ^block-ids, footnotes.cc the footnote
// list; preprocess.cc removes comments and footnote definitions before md4c
// runs. One instance renders one note; not thread-safe.
#pragma once

#include <md4c.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "folio/markdown/render.h"
#include "preprocess.h"
#include "sanitize_internal.h"

namespace folio::markdown {

// "#Heading" -> HeadingId("Heading"); nested "A#B" -> HeadingId("B");
// "^block" -> "block-" + HeadingId("block").
std::string AnchorId(std::string_view anchor);

enum class MediaKind { kNone, kImage, kAudio, kVideo, kPdf };
// By the target's extension (ASCII-case-insensitive).
MediaKind MediaKindOf(std::string_view target);

// url + "#" + AnchorId(anchor), escaped for a double-quoted attribute.
void AppendHref(std::string_view url, std::string_view anchor, std::string* out);

// Removes "<p>", whitespace, "</p>\n" runs from (*html)[from..] (left behind
// where a block embed split a paragraph).
void DropEmptyParagraphs(std::string* html, size_t from);

// Tags or footnotes a note has up to this many are looked up by a scan;
// more, by hash (a scan each made thousands of them quadratic, issue 22).
inline constexpr size_t kFewItems = 16;

// At most this many "==" highlights are open (not yet closed) at a time;
// a later "==" stays text.
inline constexpr size_t kMaxOpenMarks = 32;

class Renderer {
 public:
  Renderer(std::string_view note_path, const RenderOptions& options, RenderResult* result);

  // Renders `body` (markdown without frontmatter) into the result.
  void Run(std::string_view body);

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
    size_t link_index = SIZE_MAX;  // its entry in result_->links
  };

  struct BlockFrame {
    MD_BLOCKTYPE type;
    size_t html_start = 0;     // html().size() before the opening tag
    size_t text_start = 0;
    size_t attr_pos = SIZE_MAX;  // where ' id="..."' may go (after the tag name)
    int children = 0;          // child blocks entered so far
    size_t last_child_attr = SIZE_MAX;  // attr_pos of the last closed child block
    bool mermaid = false;      // MD_BLOCK_CODE of a ```mermaid fence
    std::string code_lang;     // MD_BLOCK_CODE: the fence's language ("" = none)
    size_t code_start = 0;     // MD_BLOCK_CODE: where the code starts in html()
    bool split = false;        // MD_BLOCK_P: a block embed closed and reopened it
    std::string callout_type;  // MD_BLOCK_QUOTE: set when it is a callout (escaped, lower-case, as written)
    std::string callout_kind;  // its canonical type ("faq" -> "question")
    char callout_fold = 0;     // '+', '-' or 0
    std::string callout_title; // HTML of the title, empty for the default one
  };
  struct OpenMark {            // a "==" turned into <mark> that is not closed yet
    size_t html_pos;
    size_t text_pos;
    int depth;                 // span_depth_ when it was opened
  };

  static int OnEnterBlock(MD_BLOCKTYPE type, void* detail, void* self);
  static int OnLeaveBlock(MD_BLOCKTYPE type, void* detail, void* self);
  static int OnEnterSpan(MD_SPANTYPE type, void* detail, void* self);
  static int OnLeaveSpan(MD_SPANTYPE type, void* detail, void* self);
  static int OnText(MD_TEXTTYPE type, const MD_CHAR* text, MD_SIZE size, void* self);

  void EnterBlock(MD_BLOCKTYPE type, void* detail);
  void LeaveBlock(MD_BLOCKTYPE type, void* detail);
  // Writes the opening tag of a block being entered; returns the length of
  // its "<name", after which an id attribute may go (0: no such tag).
  size_t OpenBlockTag(MD_BLOCKTYPE type, void* detail, BlockFrame& frame);
  void OpenCodeBlock(const MD_BLOCK_CODE_DETAIL& code, BlockFrame& frame);
  void EnterSpan(MD_SPANTYPE type, void* detail);
  void LeaveSpan(MD_SPANTYPE type);
  void Text(MD_TEXTTYPE type, std::string_view text);
  void LeaveHeading(int level);
  // The first text of the list item blocks_[task_li_] starts at source `p`:
  // turns "[c] " into a task item with data-task="c".
  void TryTaskMark(const MD_CHAR* p);

  // inline_syntax.cc
  // Normal text: escapes it and turns ==, #tag and [^ref] into markup.
  void InlineText(std::string_view s);
  // Each returns how many bytes of s[i..] it consumed (and wrote), 0 if the
  // syntax does not apply there.
  size_t TryMark(std::string_view s, size_t i);
  size_t TryTag(std::string_view s, size_t i);
  size_t TryFootnoteRef(std::string_view s, size_t i);
  // The character before s[i] (from the text written so far at i == 0).
  char PrevChar(std::string_view s, size_t i);
  // Turns <mark>s opened at span depth >= `depth` and never closed back into "==".
  void RevertMarks(int depth);
  bool InsideLink() const;
  // Adds a tag to the result unless it is there already (ASCII case aside).
  void AddTag(std::string tag);

  // callout.cc
  void DetectCallout(BlockFrame& p, BlockFrame& quote);
  void RewriteCallout(BlockFrame& quote);
  // A "^id" ending the block's text becomes its id (or the preceding embed's).
  // True if the block was only "^id" and is gone (its id went to the previous sibling).
  bool ApplyBlockId(BlockFrame& block, BlockFrame* parent);
  void InsertId(size_t attr_pos, std::string_view block_id);

  // footnotes.cc
  void AppendFootnotes();
  // `md` rendered as inline markdown (one paragraph, its <p> removed) one
  // level deeper; false if it is not one paragraph or nests too deep.
  bool RenderInline(std::string_view md, std::string* html_out, std::string* text_out);

  // embed.cc
  // ![[f.target#f.anchor|alias]]; `shown` is the link text (alias or default).
  void RenderEmbed(SpanFrame& f, const std::string& alias, const std::string& shown);
  void RenderMediaEmbed(SpanFrame& f, const std::string& alias, MediaKind kind);
  void RenderNoteEmbed(SpanFrame& f, const std::string& alias, const std::string& shown);
  // The resolver's HTML for a note embed, within the page's bounds (render.h):
  // nullopt past them (with a warning) or if the target is no note.
  // REQUIRES: options_.resolver and options_.embed_budget are set.
  std::optional<std::string> EmbedNote(const SpanFrame& f);
  // A link to the note (or attachment) instead of its content.
  void RenderEmbedLink(SpanFrame& f, const std::string& shown);

  // render_links.cc
  void EnterLink(const MD_SPAN_A_DETAIL& d);
  void EnterImage(const MD_SPAN_IMG_DETAIL& d);
  void EnterWikilink(const MD_SPAN_WIKILINK_DETAIL& d);
  void LeaveLink(SpanFrame& f);
  void LeaveImage(SpanFrame& f);
  void LeaveWikilink(SpanFrame& f);
  SpanFrame NewFrame(SpanKind kind);
  std::optional<std::string> ResolveTarget(std::string_view target);
  std::optional<std::string> ResolveAttachment(std::string_view target);
  // Writes the opening <span class="link-dead"> for `target` and warns.
  void OpenDead(const std::string& target, bool embed);

  // An md4c attribute as a string: entities decoded, embed markers restored.
  std::string AttrString(const MD_ATTRIBUTE& a) const;
  // Text as written in the note: embed markers turned back into '!'.
  std::string_view Restore(const MD_CHAR* p, size_t n, std::string* scratch);
  void FlushHtml();
  void TextBreak(char c);
  bool InTableCell() const;
  // An element id as written on the page: options_.id_prefix + id, so the
  // headings and blocks of each embedded note have ids of their own.
  std::string PageId(std::string_view id) const;

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
  bool in_heading_ = false;
  // #tags inside the heading being rendered, as [begin, end) in text():
  // they are not part of its id ("## Plan #draft" is "#Plan").
  std::vector<std::pair<size_t, size_t>> heading_tags_;
  // A list item without md4c's task mark ([ ], [x]) whose text has not
  // started: "[-] " or "[/] " there make it a task with that state.
  size_t task_li_ = SIZE_MAX;               // its index in blocks_
  const MD_CHAR* task_skip_end_ = nullptr;  // source bytes up to here are the mark
  std::set<std::string> heading_ids_;
  std::vector<BlockFrame> blocks_;
  std::vector<OpenMark> marks_;
  size_t highlighted_bytes_ = 0;      // code of fences in a known language so far (kMaxNoteHighlightBytes)
  int span_depth_ = 0;
  std::vector<bool> skipped_spans_;   // per open span: entered inside a dropped element (not written)
  bool in_math_ = false;              // inside a math span: text goes to math_tex_
  std::string math_tex_;
  size_t embed_attr_pos_ = SIZE_MAX;  // after the tag name of the last embed
  size_t embed_end_ = SIZE_MAX;       // html().size() right after the last embed
  std::vector<FootnoteDef> footnotes_;
  std::unordered_map<std::string_view, size_t> footnote_index_;  // label -> index; kFewItems or more only
  std::unordered_set<std::string> tags_seen_;  // result_->tags lower-cased, once they are kFewItems
  std::unordered_map<std::string, int> heading_next_;  // id base -> next suffix to try
  std::vector<int> footnote_number_;  // per definition: 0 until first referenced
  std::vector<int> footnote_refs_;    // per definition: references so far
  std::vector<size_t> footnote_order_;  // definitions in order of first reference
};

}  // namespace folio::markdown
