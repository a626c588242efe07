// Query terms and result snippets for folio-search's full-text side.
//
// QueryTerms splits a user query into the terms FullTextIndex searches for;
// MakeSnippet picks the part of a note's plain text that best matches a query
// and returns it as HTML-escaped text with <mark>...</mark> around matches.
//
// Characters are classed as in folio::vector::HashedEmbedder (embedder.h):
// fullwidth ASCII folds to ASCII; whitespace and punctuation separate words;
// each Han, kana or hangul code point is CJK; everything else makes up words.
// Two differences, both so that the index and snippets agree with SQLite's
// unicode61 tokenizer: '_', the katakana punctuation U+309B, U+309C, U+30A0,
// U+30FB and the symbol blocks U+2070..U+2BFF, U+2E00..U+2E7F, U+FE00..U+FE0F,
// U+1F000..U+1FAFF are separators here.
//
// Ownership: inputs are caller-owned views read during the call; results own
// their bytes. Threading: pure functions, callable from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace folio::search {

inline constexpr size_t kMaxQueryBytes = 1024;  // FullTextIndex::Search refuses longer queries
inline constexpr size_t kMaxQueryTerms = 32;    // terms past this many are ignored
// MakeSnippet looks at this much of a text (a longer text is cut at a code
// point boundary first): snippets of very long notes come from their start.
inline constexpr size_t kMaxSnippetScanBytes = 128 * 1024;

enum class CharClass : uint8_t { kSeparator, kWord, kCjk };
// The class of a code point after fullwidth folding (FoldFullwidth).
CharClass ClassifyCodePoint(uint32_t cp);
// U+FF01..U+FF5E -> U+0021..U+007E; other code points unchanged.
uint32_t FoldFullwidth(uint32_t cp);
// Lower-cases ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic capitals
// and drops the Latin diacritics SQLite's `remove_diacritics 2` drops
// ("É" -> "e", "Ł" -> "ł", "Ж" -> "ж"). Other code points unchanged.
uint32_t FoldForMatch(uint32_t cp);

struct QueryTerm {
  // The term as typed, fullwidth folded: a word (kWord characters only) or a
  // run of CJK code points. What FullTextIndex sends to SQLite.
  std::string text;
  // `text` with FoldForMatch applied: what MakeSnippet compares.
  std::string folded;
  bool cjk = false;     // a CJK run: matches anywhere inside a longer run
  bool prefix = false;  // the query's last word: matches words starting with it
  // Terms with the same group are one query word's alternatives (stems,
  // corrections): a snippet counts them as one. -1: its own index.
  int group = -1;
  bool common = false;  // in most notes: ignored when choosing a section
};

// Splits `query` into terms: words and CJK runs, split at separators and at
// every change between word and CJK characters. Duplicates (same `folded`)
// are dropped, keeping the first; at most kMaxQueryTerms are returned; only
// the first kMaxQueryBytes bytes are read. Invalid UTF-8 bytes separate.
// Returns an empty vector if the query has no words ("", "?!", "  ").
std::vector<QueryTerm> QueryTerms(std::string_view query);

// A snippet of `text` for `query` as HTML: the window of at most `max_chars`
// code points (ellipses and markup not counted) holding the most distinct
// query terms (then the most matches, then the earliest), matches centred,
// cut at word boundaries where possible and always at code point
// boundaries, "…" where text was cut, whitespace runs collapsed to one
// space, everything HTML-escaped, every match wrapped in <mark>...</mark>.
// Words match case- and diacritic-insensitively (FoldForMatch); the prefix
// term matches word starts and the whole word is marked; CJK terms match as
// substrings. No match: the start of the text. Invalid UTF-8 bytes in `text`
// become U+FFFD; the result is always valid UTF-8 with balanced, unnested
// <mark> tags. Empty text or max_chars == 0 gives "".
std::string MakeSnippet(std::string_view text, std::string_view query, size_t max_chars = 200);
// The same with terms from QueryTerms, for many snippets of one query.
std::string MakeSnippet(std::string_view text, std::span<const QueryTerm> terms,
                        size_t max_chars = 200);
// The same, and in one pass over the text what BestSection would return
// for section_offsets, in *best_section.
std::string MakeSnippet(std::string_view text, std::span<const QueryTerm> terms, size_t max_chars,
                        std::span<const size_t> section_offsets, int* best_section);

// The section of `text` that holds the most distinct query words (common
// ones aside; ties: the earliest): the index into `section_offsets` (byte
// offsets where sections start, ascending), or -1 when the best is the text
// before the first section or nothing matches.
int BestSection(std::string_view text, std::span<const QueryTerm> terms, std::span<const size_t> section_offsets);

}  // namespace folio::search
