// A note's description when its frontmatter has none (<meta name=
// "description"> and og:description): the first paragraph of its text, as
// a reader sees it, never the title again (issue 28).
// Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace folio::site {

// The description's bound, in bytes, before the ellipsis.
inline constexpr size_t kDescriptionMax = 160;

// `body` is the note's markdown after its frontmatter. Skips headings
// (ATX and setext), fenced and indented code, math blocks, tables, HTML
// blocks, %% comments %%, rules, embed-only lines, tag-only lines and
// callout titles; takes the first paragraph left (a list item or a quote's
// text counts), strips inline markup (links keep their text, wikilinks their
// alias or target, embeds, images, footnote references and ^block-ids go),
// collapses white space, and cuts it at a word boundary (or a character,
// for text without spaces) to at most `max` bytes plus "…". "" when the
// note has no such text.
std::string NoteDescription(std::string_view body, size_t max = kDescriptionMax);

}  // namespace folio::site
