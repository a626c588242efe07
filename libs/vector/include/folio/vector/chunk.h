// Chunking long notes by heading, so each part can be embedded on its own
// (a note keeps one whole-note vector plus one vector per chunk).
// Pure functions; thread-safe. Chunks own their text (copies of the input).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace folio::vector {

struct Chunk {
  std::string heading;  // heading path, e.g. "Setup > Linux"; "" before the first heading
  std::string body;     // the section's markdown (without the heading line), trimmed
  size_t offset = 0;    // byte offset of body's first line in the input
  // heading + "\n\n" + body (or just body when heading is empty): what to embed.
  std::string EmbedText() const;
};

// Splits `markdown` into chunks:
// - A leading YAML front matter block ("---" ... "---") is skipped.
// - A note whose remaining text is at most max_chars bytes is one chunk with
//   an empty heading (tiny notes are not split); a blank note gives no chunks.
// - Otherwise each ATX heading ("#".."######" then space or end of line, up to
//   3 spaces of indent; not inside ``` or ~~~ fences) starts a section; the
//   heading path joins the open headings of higher levels with " > ".
//   Sections with a blank body are dropped (their heading still shows in the
//   paths of subsections).
// - A section longer than max_chars is split at paragraph boundaries (blank
//   lines outside fences), packing paragraphs greedily; a paragraph that alone
//   exceeds max_chars is split at line ends, and a single over-long line at a
//   UTF-8 character boundary. Every piece keeps the section's heading path.
// REQUIRES: max_chars >= 16.
std::vector<Chunk> ChunkByHeadings(std::string_view markdown, size_t max_chars = 2000);

}  // namespace folio::vector
