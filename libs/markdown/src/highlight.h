// Internal: syntax highlighting of fenced code at render time, with GNU
// Source-highlight's library (libsource-highlight: maintained, 100+
// language definitions in /usr/share/source-highlight, no JavaScript).
// Output is our own markup: escaped text in <span class="hl-KIND"> for the
// kinds the stylesheet colours (keyword, type, string, comment, number,
// preproc, function, variable, regexp, specialchar, and for diffs deleted
// and inserted). Keys of JSON and YAML mappings are "type", as CSS
// properties are, so they differ from string values.
//
// Cost: Source-highlight alone tries every rule's regex over the rest of the
// line for each token (~13 us a line); its rules are swapped for FastRules
// (highlight_rule.h: same regexes, same output, far fewer searches), and
// lines that start and end outside any comment or string are cached per
// thread and language by text (256 KB each). push-bench's two-line js fence
// costs ~8 us instead of ~31 us (highlight-bench). Whole fences are not
// cached: with the line cache a fence costs microseconds, and a process-wide
// fence cache held ~7 MB at 10,000 notes for no measurable gain.
//
// Threading: HighlightCode may run on any number of threads at once; each
// thread keeps its own loaded language definitions (~3 ms per language,
// once per thread) and line cache; nothing is shared.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace folio::markdown {

// The highlighted HTML of `code` (the content of <code>, newlines kept), or
// nullopt when the language is unknown, the definitions are not installed,
// or the code is larger than kMaxHighlightBytes or has a line longer than
// kMaxHighlightLineBytes (then it stays plain).
std::optional<std::string> HighlightCode(std::string_view lang, std::string_view code);

// diff/patch and yaml/yml fences, coloured line by line without
// Source-highlight (highlight_lines.cc); nullopt for any other language.
// HighlightCode answers those languages with it.
std::optional<std::string> HighlightByLines(std::string_view lang, std::string_view code);

// For tests and highlight-bench: HighlightCode with
// FastRules (what HighlightCode uses) or with Source-highlight's own rules
// (the reference FastRules must match byte for byte).
std::optional<std::string> HighlightCodeWithRules(std::string_view lang, std::string_view code, bool fast_rules);

// Fences above this size are not highlighted (bounded work per note).
inline constexpr size_t kMaxHighlightBytes = 256 * 1024;
// Nor are fences with a line longer than this (minified code, or a line
// built to be slow): Source-highlight copies the text before each rule's
// next match for every token, quadratic in a line's length (issue 22: one
// 200 KB line of LaTeX braces took 1.7 s, 75 s under ASan).
inline constexpr size_t kMaxHighlightLineBytes = 1000;
// A note's fences are highlighted until they add up to this; later ones stay
// plain (a highlighted line costs up to ~0.4 ms when built to be slow).
inline constexpr size_t kMaxNoteHighlightBytes = 1024 * 1024;

}  // namespace folio::markdown
