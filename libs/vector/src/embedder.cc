#include "folio/vector/embedder.h"

#include <cmath>
#include <string>
#include <unordered_set>
#include <utility>

#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/core/utf8.h"

namespace folio::vector {

Embedder::~Embedder() = default;

namespace {

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t FnvAdd(uint64_t h, std::string_view s) { return Fnv1a64(s, h); }

uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

constexpr float kWeightWord = 1.0f;
constexpr float kWeightCjkBigram = 1.0f;
constexpr float kWeightWordBigram = 0.5f;
constexpr float kWeightTrigram = 0.25f;
constexpr size_t kMaxTrigramCodePoints = 32;

// Input is validated up front, so core's decoder never reports a bad code point here.
char32_t Decode(std::string_view s, size_t* i) { return DecodeUtf8(s, i); }

bool IsCjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x3FFFF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||  // kana
         (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1100 && c <= 0x11FF) ||  // hangul
         (c >= 0x3130 && c <= 0x318F);
}

bool IsSeparator(char32_t c) {
  if (c < 0x80) {
    return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
  }
  return (c >= 0x80 && c <= 0xBF) || c == 0xD7 || c == 0xF7 || (c >= 0x2000 && c <= 0x206F) ||
         (c >= 0x3000 && c <= 0x303F) || (c >= 0xFE30 && c <= 0xFE4F) ||
         (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
         (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65) || c == 0xFEFF;
}

char32_t Fold(char32_t c) {
  if (c >= 0xFF01 && c <= 0xFF5E) c -= 0xFEE0;  // fullwidth ASCII
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

struct Feature {
  float count = 0;
  float weight = 0;  // kind weight * idf
};

// Accumulates features by hash; 64-bit collisions are ignored (negligible).
class FeatureBag {
 public:
  FeatureBag(const HashedEmbedder::IdfFn& idf) : idf_(idf) {}

  void Add(FeatureKind kind, float kind_weight, std::string_view a, std::string_view b = {}) {
    uint64_t h = FeatureHash(kind, a, b);
    auto [it, inserted] = bag_.try_emplace(h);
    if (inserted) {
      float idf = 1;
      if (idf_) {
        if (b.empty()) {
          idf = idf_(kind, a);
        } else {
          scratch_.assign(a);
          scratch_.push_back(' ');
          scratch_.append(b);
          idf = idf_(kind, scratch_);
        }
      }
      it->second.weight = kind_weight * idf;
    }
    it->second.count += 1;
  }

  void Project(size_t dim, std::vector<float>* out) const {
    out->assign(dim, 0.0f);
    for (const auto& [h, f] : bag_) {
      float w = (1.0f + std::log(f.count)) * f.weight;
      size_t bucket = h % dim;
      (*out)[bucket] += (h >> 63) ? -w : w;
    }
    double norm = 0;
    for (float x : *out) norm += static_cast<double>(x) * x;
    if (norm > 0) {
      auto inv = static_cast<float>(1.0 / std::sqrt(norm));
      for (float& x : *out) x *= inv;
    }
  }

 private:
  const HashedEmbedder::IdfFn& idf_;
  std::unordered_map<uint64_t, Feature> bag_;
  std::string scratch_;
};

void Featurize(std::string_view text, FeatureBag* bag) {
  std::string word;               // current non-CJK word, folded UTF-8
  std::vector<size_t> cp_starts;  // byte offsets of the word's code points
  std::string prev_word;          // previous non-CJK word (for bigrams), "" if broken
  std::string cjk_prev;           // previous CJK code point if adjacent
  std::string cjk_cur;
  std::string marked;

  auto flush_word = [&] {
    if (word.empty()) return;
    bag->Add(FeatureKind::kWord, kWeightWord, word);
    if (!prev_word.empty()) bag->Add(FeatureKind::kWordBigram, kWeightWordBigram, prev_word, word);
    // Character trigrams of "<word>" over at most kMaxTrigramCodePoints.
    size_t n = std::min(cp_starts.size(), kMaxTrigramCodePoints);
    size_t end = n < cp_starts.size() ? cp_starts[n] : word.size();
    marked.assign("<");
    marked.append(word, 0, end);
    marked.push_back('>');
    // Code point starts within `marked`: 0, then 1 + cp_starts[i], then end+1.
    std::vector<size_t> starts;
    starts.reserve(n + 2);
    starts.push_back(0);
    for (size_t i = 0; i < n; ++i) starts.push_back(1 + cp_starts[i]);
    starts.push_back(end + 1);
    starts.push_back(end + 2);  // one past '>'
    for (size_t i = 0; i + 3 < starts.size(); ++i) {
      bag->Add(FeatureKind::kCharTrigram, kWeightTrigram,
               std::string_view(marked).substr(starts[i], starts[i + 3] - starts[i]));
    }
    prev_word = std::move(word);
    word.clear();
    cp_starts.clear();
  };

  size_t i = 0;
  while (i < text.size()) {
    char32_t c = Decode(text, &i);
    if (IsCjk(c)) {
      flush_word();
      prev_word.clear();
      cjk_cur.clear();
      AppendUtf8(c, &cjk_cur);
      bag->Add(FeatureKind::kWord, kWeightWord, cjk_cur);
      if (!cjk_prev.empty()) bag->Add(FeatureKind::kCjkBigram, kWeightCjkBigram, cjk_prev, cjk_cur);
      cjk_prev.swap(cjk_cur);
      continue;
    }
    cjk_prev.clear();
    if (IsSeparator(c)) {
      flush_word();
      continue;
    }
    cp_starts.push_back(word.size());
    AppendUtf8(Fold(c), &word);
  }
  flush_word();
}

}  // namespace

uint64_t FeatureHash(FeatureKind kind, std::string_view a, std::string_view b) {
  uint64_t h = kFnvOffset;
  h ^= static_cast<uint8_t>(kind);
  h *= kFnvPrime;
  h = FnvAdd(h, a);
  if (!b.empty()) {
    h ^= 0x20;
    h *= kFnvPrime;
    h = FnvAdd(h, b);
  }
  return Fmix64(h);
}

HashedEmbedder::HashedEmbedder(size_t dim) : dim_(dim) {}

std::string HashedEmbedder::Describe() const {
  std::string d = "hashed-" + std::to_string(dim_);
  if (!idf_name_.empty()) d += "+" + idf_name_;
  return d;
}

Status HashedEmbedder::Embed(std::span<const std::string_view> texts,
                             std::vector<std::vector<float>>* out) {
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!IsValidUtf8(texts[i])) {
      return Status::Invalid("text " + std::to_string(i) + " is not valid UTF-8");
    }
  }
  out->resize(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    FeatureBag bag(idf_);
    Featurize(texts[i], &bag);
    bag.Project(dim_, &(*out)[i]);
  }
  return Status::Ok();
}

Status HashedEmbedder::EmbedOne(std::string_view text, std::vector<float>* out) {
  std::vector<std::vector<float>> v;
  Status s = Embed(std::span<const std::string_view>(&text, 1), &v);
  if (!s.ok()) return s;
  *out = std::move(v[0]);
  return s;
}

void HashedEmbedder::SetIdf(std::unordered_map<std::string, float> word_idf) {
  idf_name_.clear();
  idf_ = [table = std::move(word_idf)](FeatureKind kind, std::string_view f) -> float {
    if (kind != FeatureKind::kWord) return 1.0f;
    auto it = table.find(std::string(f));
    return it == table.end() ? 1.0f : it->second;
  };
}

void HashedEmbedder::SetIdf(IdfFn idf, std::string name) {
  idf_ = std::move(idf);
  idf_name_ = idf_ ? std::move(name) : std::string();
}

HashedEmbedder::IdfFn StopWordIdf() {
  static const std::unordered_set<std::string_view> kStop = {
      // English
      "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "because", "been",
      "but", "by", "can", "could", "did", "do", "does", "each", "even", "every", "for", "from", "had", "has",
      "have", "he", "her", "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just",
      "like", "may", "me", "more", "most", "much", "must", "my", "no", "not", "now", "of", "on", "one",
      "only", "or", "other", "our", "out", "over", "same", "she", "should", "so", "some", "such", "than",
      "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "through", "to",
      "too", "up", "us", "very", "was", "we", "well", "were", "what", "when", "where", "which", "while",
      "who", "why", "will", "with", "would", "you", "your",
      // German
      "der", "die", "das", "und", "ist", "nicht", "ein", "eine", "zu", "den", "mit", "von", "sich", "des",
      "auf", "für", "im", "dem", "es", "auch", "als", "wie", "wir", "ich", "sie", "er", "oder", "aber",
      // French
      "le", "la", "les", "et", "un", "une", "du", "que", "qui", "pour", "pas", "dans", "ce", "il", "sur",
      "au", "aux", "avec", "est", "ne", "se", "plus", "par", "je", "vous", "nous", "ou", "mais",
      // Spanish / Portuguese / Italian
      "el", "los", "las", "y", "en", "con", "por", "para", "una", "es", "lo", "al", "del", "su", "o",
      "e", "os", "não", "uma", "com", "il", "di", "che", "non", "per", "sono", "della",
      // Dutch
      "het", "een", "van", "en", "op", "te", "dat", "niet", "zijn", "voor", "met",
      // Russian
      "и", "в", "не", "на", "что", "с", "по", "это", "как", "а", "но", "к", "у", "из", "за", "от", "то",
      "же", "для", "так", "все", "он", "она", "они", "мы", "вы", "я", "или", "бы", "был", "была"};
  return [](FeatureKind kind, std::string_view f) -> float {
    if (kind == FeatureKind::kWord) return kStop.count(f) ? 0.1f : 1.0f;
    if (kind == FeatureKind::kWordBigram) {
      size_t sp = f.find(' ');
      if (sp != std::string_view::npos && kStop.count(f.substr(0, sp)) && kStop.count(f.substr(sp + 1))) return 0.1f;
    }
    return 1.0f;
  };
}

}  // namespace folio::vector
