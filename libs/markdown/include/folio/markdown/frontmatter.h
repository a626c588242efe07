// YAML frontmatter of a note (between "---" lines at the very top), parsed
// with yaml-cpp, or without it when every line is a plain `key: value` (the
// common case; the same fields either way). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace folio::markdown {

struct Frontmatter {
  bool present = false;                // a frontmatter block was found
  std::string title;
  std::vector<std::string> aliases;    // aliases / alias (list or single string)
  std::vector<std::string> tags;       // tags / tag (list or comma/space string), without '#'
  std::string permalink;               // permalink / slug
  std::string description;
  bool publish = true;                 // false when publish: false or draft: true
  // publish: private: the note is published for signed-in readers only and
  // unlisted (no listing, search, graph, feed or other note shows it).
  // Meaningful only while `publish` is true (a draft stays unpublished).
  bool private_note = false;
  std::vector<std::string> cssclasses; // cssclasses / cssclass
  std::string date;                    // date / created
  std::string updated;                 // updated / modified
  std::string image;                   // image / cover
  std::string lang;
  size_t body_offset = 0;              // byte offset where the markdown body starts
  // Non-empty when the block is unterminated or not valid YAML, e.g.
  // "frontmatter line 3: bad indentation". The note still renders: on
  // error, body_offset skips the block if it was terminated, else is 0.
  std::string error;
};

Frontmatter ParseFrontmatter(std::string_view doc);

// For tests and the fuzzer: `simple_lines` false sends every block through
// yaml-cpp (the reference the plain-lines reader must match).
Frontmatter ParseFrontmatterWith(std::string_view doc, bool simple_lines);

}  // namespace folio::markdown
