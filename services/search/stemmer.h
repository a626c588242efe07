// Stemmer: Snowball stemming (Debian's libstemmer) of words that are already
// folded for matching (lower-case, Latin diacritics removed: FoldForMatch in
// snippet.h), so that "connections" and "connected" meet at "connect".
//
// Languages are ISO 639-1 codes ("en", "de", "fr", "es", "ru", "pt", "it",
// "nl", "sv", "da", "fi", "no", "hu", "ro", "tr", "el", "ar", ...: the 28
// Snowball languages of libstemmer 2.2) or their English names ("english"
// -> "en"), case-insensitive; a region or script suffix is ignored ("en-US"
// -> "en", "pt_BR" -> "pt"); "nb" and "nn" are Norwegian. libstemmer's
// other aliases (three-letter codes, "porter") work too and stay as given.
//
// Ownership: inputs are caller-owned views read during the call; results own
// their bytes. Threading: every method may be called from any number of
// threads at once. libstemmer's sb_stemmer is not thread-safe, so each thread
// keeps its own instance per language (created on first use, freed when the
// thread exits); a Stemmer object itself holds no state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace folio::search {

class Stemmer {
 public:
  // Words shorter than this many code points are returned unchanged.
  static constexpr size_t kMinChars = 3;
  // Words longer than this many bytes are returned unchanged.
  static constexpr size_t kMaxBytes = 64;

  // The language key libstemmer is asked for: lower-case, cut at the first
  // '-' or '_', an English name replaced by its ISO 639-1 code, "nb"/"nn" ->
  // "no". "" if `lang` cannot name a language (empty, longer than 16 bytes,
  // or not all ASCII letters before the cut). Not checked against libstemmer.
  static std::string Normalize(std::string_view lang);

  // True if libstemmer has a stemmer for `lang` (after Normalize).
  static bool Supported(std::string_view lang);

  // The stem of `folded_word` in `lang`. REQUIRES: `folded_word` is folded
  // (FoldForMatch), valid UTF-8. Returns the word unchanged for an
  // unsupported language, for a word holding a CJK code point, and for a
  // word shorter than kMinChars code points or longer than kMaxBytes bytes.
  std::string Stem(std::string_view lang, std::string_view folded_word) const;
};

}  // namespace folio::search
