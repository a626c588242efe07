// Internal: syntax highlighting of fenced code at render time, with GNU
// Source-highlight's library (libsource-highlight: maintained, 100+
// language definitions in /usr/share/source-highlight, no JavaScript).
// Output is our own markup: escaped text in <span class="hl-KIND"> for the
// kinds the stylesheet colours (keyword, type, string, comment, number,
// preproc, function, variable, regexp, specialchar, and for diffs deleted
// and inserted).
//
// Cost: ~13 us a line of code (Source-highlight tries its regexes rule by
// rule), so results are kept in a process-wide cache by (language, code),
// bounded to ~16 MB (two 8 MB generations): pages rendered again for
// another note's sake, or notes edited outside their fences, pay nothing.
//
// Threading: HighlightCode may run on any number of threads at once; each
// thread keeps its own loaded language definitions (~3 ms per language,
// once per thread); the cache is shared under a mutex.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace folio::markdown {

// The highlighted HTML of `code` (the content of <code>, newlines kept), or
// nullopt when the language is unknown, the definitions are not installed,
// or the code is larger than kMaxHighlightBytes (then it stays plain).
std::optional<std::string> HighlightCode(std::string_view lang, std::string_view code);

// Fences above this size are not highlighted (bounded work per note).
inline constexpr size_t kMaxHighlightBytes = 256 * 1024;

}  // namespace folio::markdown
