// Embedders: turn note text into fixed-size float vectors for similarity search.
//
// Embedder is the one interface the search service uses; HashedEmbedder is the
// built-in default (no model, no download, deterministic, any language);
// HttpEmbedder (http_embedder.h) calls an OpenAI-compatible endpoint.
//
// Ownership: Embed writes into a caller-owned vector; embedders keep no
// reference to the input texts after returning.
// Thread-safety: each implementation states it. HashedEmbedder::Embed may run
// concurrently on one instance from any number of threads; SetIdf needs
// exclusive access (no concurrent Embed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folio/core/status.h"

namespace folio::vector {

class Embedder {
 public:
  virtual ~Embedder();

  // Length of every vector Embed produces. Constant for the embedder's life.
  virtual size_t dim() const = 0;

  // Embeds texts[i] into (*out)[i]; *out is resized to texts.size() and each
  // entry to dim(). Vectors are L2-normalised (norm 1) unless documented
  // otherwise by the implementation (HashedEmbedder: empty text -> all zeros).
  // Fails with kInvalidArgument if a text is not valid UTF-8, kUnavailable or
  // kDeadlineExceeded for remote embedders; on failure *out is unspecified.
  virtual Status Embed(std::span<const std::string_view> texts,
                       std::vector<std::vector<float>>* out) = 0;

  // What produces the vectors, for logs and status pages, e.g. "hashed-384"
  // or "openai:<model>@<url>". Never contains secrets. "" if not described.
  // Vectors from embedders with different descriptions are not comparable.
  virtual std::string Describe() const { return ""; }
};

// The kinds of feature HashedEmbedder extracts; passed to an IDF function.
enum class FeatureKind : uint8_t {
  kWord = 'w',          // a lower-cased word, or one CJK/kana/hangul code point
  kWordBigram = 'b',    // two adjacent non-CJK words joined by ' '
  kCharTrigram = 't',   // 3 code points of "<word>" (with boundary markers)
  kCjkBigram = 'c',     // two adjacent CJK/kana/hangul code points
};

// A deterministic lexical embedding: hashed TF-IDF of words, word bigrams,
// character trigrams and CJK character bigrams into `dim` signed buckets.
//
// Tokenising (on valid UTF-8): ASCII letters are lower-cased; fullwidth ASCII
// (U+FF01..U+FF5E) folds to ASCII; Latin-1, Greek and Cyrillic capitals are
// lower-cased. Whitespace, ASCII punctuation, Latin-1 punctuation, general
// punctuation (U+2000..U+206F), CJK symbols (U+3000..U+303F) and fullwidth
// punctuation separate words. Each Han ideograph, hiragana, katakana or hangul
// code point is a token of its own; adjacent ones also form a CJK bigram.
// Everything else (letters, digits, '_' and other scripts) makes up words.
//
// Feature weights: kWord 1.0, kCjkBigram 1.0, kWordBigram 0.5, kCharTrigram
// 0.25 (trigrams of the first 32 code points of a word only), times sublinear
// tf (1 + ln tf), times idf (default 1).
//
// Hash (fixed; vectors are identical across builds and platforms): h = FNV-1a
// 64 over [kind byte, feature UTF-8 bytes] (bigrams: first, 0x20, second),
// then MurmurHash3's fmix64. Bucket = h % dim; the sign is bit 63 (set -> -).
// The vector is then L2-normalised. Text with no tokens (empty, only
// punctuation) gives the all-zero vector, which scores 0 against everything.
class HashedEmbedder final : public Embedder {
 public:
  // Returns the IDF weight for a feature, e.g. ln(N / df). Must be pure.
  using IdfFn = std::function<float(FeatureKind kind, std::string_view feature)>;

  // REQUIRES: dim > 0.
  explicit HashedEmbedder(size_t dim = 384);  // default 384, as small sentence models

  size_t dim() const override { return dim_; }
  // "hashed-<dim>", e.g. "hashed-384"; "+<name>" when SetIdf named its weights
  // ("hashed-384+stopwords-1"), so vectors made with other weights are told apart.
  std::string Describe() const override;

  // Thread-safe (see file comment). Fails with kInvalidArgument on invalid UTF-8.
  Status Embed(std::span<const std::string_view> texts,
               std::vector<std::vector<float>>* out) override;

  // Single-text convenience. Same contract as Embed.
  Status EmbedOne(std::string_view text, std::vector<float>* out);

  // Sets IDF weights for kWord features (keys are lower-cased words or single
  // CJK characters); other features and missing words get 1. Replaces any
  // previous table or function. REQUIRES: no concurrent Embed.
  void SetIdf(std::unordered_map<std::string, float> word_idf);
  // General form; an empty function resets to idf = 1 everywhere. `name`
  // (optional) identifies the weights in Describe(); change it whenever the
  // function's values change.
  void SetIdf(IdfFn idf, std::string name = "");

 private:
  size_t dim_;
  IdfFn idf_;  // empty: idf = 1
  std::string idf_name_;
};

// Weights that make function words nearly silent (0.1) in kWord features
// and in kWordBigram features made of two of them: the most frequent words
// of English, German, French, Spanish, Portuguese, Italian, Dutch and
// Russian. Without it, two unrelated notes look alike because both use
// "the", "and", "of". Name for SetIdf: kStopWordIdfName.
HashedEmbedder::IdfFn StopWordIdf();
inline constexpr const char* kStopWordIdfName = "stopwords-1";

// The feature hash HashedEmbedder uses (exposed for tests and tools).
uint64_t FeatureHash(FeatureKind kind, std::string_view a, std::string_view b = {});

}  // namespace folio::vector
