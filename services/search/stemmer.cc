#include "stemmer.h"

#include <libstemmer.h>

#include <memory>
#include <utility>
#include <vector>

#include "folio/core/utf8.h"
#include "snippet.h"

namespace folio::search {
namespace {

struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};

// This thread's stemmers by normalized language; nullptr = libstemmer has
// none. Language names are bounded (Normalize), but a stream of different
// unknown names would still grow the list: past kMaxCached entries unknown
// names are not remembered.
class ThreadStemmers {
 public:
  sb_stemmer* Get(const std::string& lang) {
    for (auto& [name, s] : cache_) {
      if (name == lang) return s.get();
    }
    std::unique_ptr<sb_stemmer, StemmerDeleter> s(sb_stemmer_new(lang.c_str(), "UTF_8"));
    sb_stemmer* raw = s.get();
    if (raw != nullptr || cache_.size() < kMaxCached) cache_.emplace_back(lang, std::move(s));
    return raw;
  }

 private:
  static constexpr size_t kMaxCached = 64;
  std::vector<std::pair<std::string, std::unique_ptr<sb_stemmer, StemmerDeleter>>> cache_;
};

sb_stemmer* ForThisThread(std::string_view lang) {
  thread_local ThreadStemmers stemmers;
  std::string key = Stemmer::Normalize(lang);
  return key.empty() ? nullptr : stemmers.Get(key);
}

// True if the word has at least `min` code points and none of them is CJK.
bool Stemmable(std::string_view word, size_t min) {
  size_t i = 0, chars = 0;
  while (i < word.size()) {
    if (ClassifyCodePoint(DecodeUtf8(word, &i)) == CharClass::kCjk) return false;
    ++chars;
  }
  return chars >= min;
}

// libstemmer 2.2's languages by English name, with their ISO 639-1 codes.
constexpr std::pair<std::string_view, std::string_view> kNames[] = {
    {"arabic", "ar"},     {"armenian", "hy"},   {"basque", "eu"},     {"catalan", "ca"},
    {"danish", "da"},     {"dutch", "nl"},      {"english", "en"},    {"finnish", "fi"},
    {"french", "fr"},     {"german", "de"},     {"greek", "el"},      {"hindi", "hi"},
    {"hungarian", "hu"},  {"indonesian", "id"}, {"irish", "ga"},      {"italian", "it"},
    {"lithuanian", "lt"}, {"nepali", "ne"},     {"norwegian", "no"},  {"portuguese", "pt"},
    {"romanian", "ro"},   {"russian", "ru"},    {"serbian", "sr"},    {"spanish", "es"},
    {"swedish", "sv"},    {"tamil", "ta"},      {"turkish", "tr"},    {"yiddish", "yi"},
    {"nb", "no"},         {"nn", "no"},
};

}  // namespace

std::string Stemmer::Normalize(std::string_view lang) {
  constexpr size_t kMaxLangBytes = 16;
  if (lang.size() > kMaxLangBytes) return "";
  std::string out;
  for (char c : lang) {
    if (c == '-' || c == '_') break;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c < 'a' || c > 'z') return "";
    out.push_back(c);
  }
  for (auto [name, code] : kNames) {
    if (out == name) return std::string(code);
  }
  return out;
}

bool Stemmer::Supported(std::string_view lang) { return ForThisThread(lang) != nullptr; }

std::string Stemmer::Stem(std::string_view lang, std::string_view folded_word) const {
  std::string word(folded_word);
  if (word.size() > kMaxBytes || !Stemmable(word, kMinChars)) return word;
  sb_stemmer* s = ForThisThread(lang);
  if (s == nullptr) return word;
  const sb_symbol* out = sb_stemmer_stem(s, reinterpret_cast<const sb_symbol*>(word.data()),
                                         static_cast<int>(word.size()));
  // NULL only when libstemmer runs out of memory; the word is still a word.
  if (out == nullptr) return word;
  return std::string(reinterpret_cast<const char*>(out), sb_stemmer_length(s));
}

}  // namespace folio::search
