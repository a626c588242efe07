// Vocabulary: the distinct words of one site's notes, folded exactly as the
// full-text index tokenizes them (ForEachWord), each with its document
// frequency, and three ways to find words from a reader's word:
//   - Family: the words sharing its Snowball stem (Stemmer);
//   - Similar: the words within edit distance 1 or 2 (typo tolerance),
//     found through an index of the words' padded trigrams, never by
//     comparing the query with every word;
//   - Prefix: words starting with a prefix (search as you type).
//
// Ownership: the Vocabulary owns copies of its words; inputs are
// caller-owned views read during the call; results own their bytes.
// Threading: const methods may run on any number of threads at once (their
// scratch space is per thread); Add and Remove need exclusive access (no
// other call at the same time): the Engine calls them under its
// shared_mutex held exclusively and queries under it held shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "stemmer.h"

namespace folio::search {

// Calls `fn` with each word of `text` in order, folded (FoldFullwidth, then
// FoldForMatch on each code point), split exactly as QueryTerms splits a
// query: at separators and at every change between word and CJK characters.
// CJK runs are skipped. Unlike QueryTerms it reads all of `text` and does
// not drop duplicates. The view passed to `fn` is valid during the call only.
void ForEachWord(std::string_view text, const std::function<void(std::string_view folded)>& fn);

class Vocabulary {
 public:
  // Prefix() looks at no more than this many words (in byte order) that
  // start with the prefix, then returns the most frequent of those.
  static constexpr size_t kMaxPrefixScan = 1024;
  // Similar() ignores queries and words longer than this many bytes.
  static constexpr size_t kMaxSimilarBytes = 64;

  // df(word) += docs (saturating). A new word joins every index; its stem is
  // computed in `lang` (unsupported languages: the word is its own stem).
  // REQUIRES: `word` is folded (ForEachWord's output), non-empty. docs == 0
  // or an empty word does nothing.
  void Add(std::string_view word, std::string_view lang, uint32_t docs = 1);
  // df(word) -= docs, not below 0; at 0 the word leaves every index. An
  // absent word does nothing.
  void Remove(std::string_view word, uint32_t docs = 1);
  // 0 if absent.
  uint32_t DocFreq(std::string_view word) const;
  // Distinct words.
  size_t size() const { return ids_.size(); }
  // An estimate of the heap bytes held, for a gauge. O(1).
  size_t MemoryBytes() const;

  // Words of the vocabulary whose stem (computed with the lang their Add
  // gave first) equals the stem of `word` in `lang`, plus `word` itself when
  // present, most frequent first (ties: byte order), at most `limit`.
  std::vector<std::string> Family(std::string_view word, std::string_view lang,
                                  size_t limit) const;

  struct Near {
    std::string word;
    int distance;
    uint32_t df;
  };
  // Words within `max_distance` of `word` in optimal string alignment
  // distance (insert, delete, substitute, swap two adjacent characters; each
  // character edited once), counted in code points; `word` itself excluded;
  // nearest first, then most frequent, then byte order; at most `limit`.
  // Candidates come from two indexes, never from comparing with every word:
  //   - when either word has more than kShortChars code points: padded
  //     trigrams ("$$w", ..., "d$$") listed per word length (the length
  //     filter: |n - m| <= k), the q-gram
  //     count filter (seen from the shorter word an edit destroys at most 4
  //     trigrams, an insertion 2, and |n - m| edits are insertions, so words
  //     of n and m code points within k share >= min(n, m) + 2 + 2|n - m|
  //     - 4k, always >= 1 here), applied with prefix filtering (only the
  //     shortest lists are read; the long ones are probed by binary search);
  //   - when both have at most kShortChars, where that bound falls to 0: a
  //     deletion index (every string made by deleting up to 2 code points of
  //     each such word) looked up with the query's up to k deletions.
  // A 64-bit letter signature drops more candidates; the rest are verified.
  // `max_distance` is clamped to [1, 2]. Empty if `word` is empty or longer
  // than kMaxSimilarBytes.
  std::vector<Near> Similar(std::string_view word, int max_distance, size_t limit) const;

  // Up to `limit` words starting with `prefix` (byte-wise), most frequent
  // first (ties: byte order), chosen among the first kMaxPrefixScan such
  // words in byte order.
  std::vector<std::string> Prefix(std::string_view prefix, size_t limit) const;

 private:
  // Words of at most this many code points are also in the deletion index:
  // the count filter cannot find pairs of them (see Similar).
  static constexpr size_t kShortChars = 6;
  struct Entry {
    const std::string* word = nullptr;  // the key in ids_ (map nodes do not move)
    uint32_t df = 0;
    uint32_t chars = 0;  // code points
    uint8_t lang = 0;    // index into langs_
  };

  void IndexGrams(uint32_t id, bool add);
  void IndexFamily(uint32_t id, bool add);
  void IndexShort(uint32_t id, bool add);
  void TrigramCandidates(const std::vector<uint32_t>& query, uint64_t letters, int k,
                         uint32_t chars, int bound, std::vector<uint32_t>* ids) const;
  void DeletionCandidates(const std::vector<uint32_t>& query, int k,
                          std::vector<uint32_t>* ids) const;
  std::string FamilyKey(uint8_t lang, std::string_view word) const;
  uint8_t LangIndex(std::string_view lang);

  std::map<std::string, uint32_t, std::less<>> ids_;  // word -> index into entries_
  std::vector<Entry> entries_;                        // by id; freed ids in free_
  std::vector<uint32_t> free_;
  // By id: bit (code point % 64) of each code point of the word. Apart from
  // entries_ so that Similar's filter reads 8 bytes a word, not a cache line.
  std::vector<uint64_t> letters_;
  std::vector<std::string> langs_{""};  // Stemmer::Normalize'd; "" = no stemmer
  std::unordered_map<std::string, std::vector<uint32_t>> families_;  // lang '\0' stem -> ids
  // (trigram, length) key -> ids, ascending (Similar probes them by binary search).
  std::unordered_map<uint64_t, std::vector<uint32_t>> grams_;
  std::unordered_multimap<uint64_t, uint32_t> deletions_;       // deletion key -> short word
  size_t word_heap_bytes_ = 0;  // for MemoryBytes
  size_t posting_bytes_ = 0;    // capacity of the vectors in grams_ and families_
  Stemmer stemmer_;
};

}  // namespace folio::search
