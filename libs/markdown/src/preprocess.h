// Internal: the source pre-pass that runs before md4c, and the fenced-code
// line tracking it shares with section.cc. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace folio::markdown {

struct FootnoteDef {
  std::string label;  // "1" of "[^1]: text"
  std::string text;   // "text" (markdown, one line)
};

struct Preprocessed {
  std::string body;                    // the body without comments and definitions
  std::vector<FootnoteDef> footnotes;  // definitions in source order (first wins per label)
};

// Removes "%%comments%%" (also across lines; an unclosed "%%" comments out
// the rest of the note, as Obsidian hides it) and "[^label]: text" footnote
// definition lines; turns "^[inline footnotes]" into references to
// definitions of their own; escapes each '$' that by Obsidian's rule opens
// no math ("it costs $5 and $10"), so md4c sees math only where Obsidian
// does. Code fences and code spans are left alone. A comment that fills
// whole lines takes those lines with it, so it does not split the paragraph
// around it.
Preprocessed Preprocess(std::string_view body);

// Tracks fenced code blocks line by line (``` or ~~~, also inside
// blockquotes and list items).
class FenceTracker {
 public:
  // Feeds the next line (without its newline). True if the line belongs to
  // a fence: the opening line, a content line or the closing line.
  bool InFence(std::string_view line);

 private:
  char ch_ = 0;     // '`' or '~' while a fence is open
  size_t len_ = 0;  // length of the opening run
};

}  // namespace folio::markdown
