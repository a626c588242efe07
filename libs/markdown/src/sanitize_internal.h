// Internal: the stateful sanitiser behind SanitizeHtml, used by the renderer
// across the many raw-HTML pieces of one note. It remembers which allowed
// tags the note opened, so a stray "</div>" cannot close the page template's
// elements and every tag the note opens is closed by the end of its block.
// One instance per render; not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace folio::markdown {

// Elements a note may have open at once; deeper start tags are dropped (a
// browser flattens far less deep trees, and closing tags search this stack:
// unbounded, 100,000 of them took seconds, issue 22).
inline constexpr size_t kMaxOpenElements = 256;

class HtmlSanitizer {
 public:
  // Sanitises `raw` (whole tags; an unterminated tag at the end is shown as
  // text), appending HTML to *html and, if `text` is non-null, the visible
  // text to *text.
  void Feed(std::string_view raw, std::string* html, std::string* text);

  // Starts a scope (a markdown block): closing tags in raw HTML cannot reach
  // below it, and PopScope closes whatever was opened inside it.
  void PushScope();
  void PopScope(std::string* html);
  // Closes every tag still open (end of the note).
  void CloseAll(std::string* html);
  // True inside an element dropped with its content (<script>, <style>,
  // ...): the caller drops the note's text and markup until it ends (its
  // end tag, or the end of the block it was opened in).
  bool Skipping() const { return !skip_.empty(); }
  // Ends such an element at the end of the raw-HTML block it was opened in,
  // so an unclosed <style> does not hide the rest of the note.
  void EndSkip() { skip_.clear(); }

 private:
  void CloseAbove(size_t depth, std::string* html);
  // Handles a tag starting at raw[i] == '<'; returns the index after it.
  size_t OnTag(std::string_view raw, size_t i, std::string* html, std::string* text);
  size_t OnEndTag(std::string_view raw, size_t i, std::string* html, std::string* text);
  // Inside a dropped element: the index after its end tag, or raw.size().
  size_t SkipContent(std::string_view raw, size_t i);

  std::vector<std::string> open_;  // allowed non-void tags opened by the note
  size_t floor_ = 0;               // open_ entries below this belong to outer scopes
  bool drop_iframe_close_ = false; // a video <iframe> was replaced: drop its </iframe>
  std::vector<size_t> floors_;
  std::string skip_;       // the dropped element being skipped ("" = none)
  size_t skip_scope_ = 0;  // floors_.size() when it started
};

}  // namespace folio::markdown
