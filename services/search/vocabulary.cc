#include "vocabulary.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "folio/core/utf8.h"
#include "snippet.h"

namespace folio::search {
namespace {

constexpr uint32_t kPad = 0;  // not a word character: pads trigrams at both ends

void Decode(std::string_view s, std::vector<uint32_t>* out) {
  out->clear();
  size_t i = 0;
  while (i < s.size()) out->push_back(DecodeUtf8(s, &i));
}

// One bit per code point (its value mod 64). A code point of one word that
// the other lacks needs an edit of its own (swaps bring none), so words
// within k have at most k bits that only one of them sets, each way.
uint64_t Signature(std::string_view s) {
  uint64_t bits = 0;
  size_t i = 0;
  while (i < s.size()) bits |= uint64_t{1} << (DecodeUtf8(s, &i) % 64);
  return bits;
}

bool SignatureWithin(uint64_t a, uint64_t b, int k) {
  return std::popcount(a & ~b) <= k && std::popcount(b & ~a) <= k;
}

size_t CountChars(std::string_view s) {
  size_t i = 0, n = 0;
  while (i < s.size()) DecodeUtf8(s, &i), ++n;
  return n;
}

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The keys of a word's padded trigrams for words of `chars` code points, as
// a multiset made a set: the j-th repeat of a trigram gets its own key, so
// shared keys count shared trigrams with multiplicity. Keys hold the length
// so that each list holds words of one length (the length filter costs
// nothing). Two keys may hash alike: that only adds candidates.
void GramKeys(const std::vector<uint32_t>& cps, uint64_t chars, std::vector<uint64_t>* keys) {
  keys->clear();
  auto at = [&](size_t i) -> uint64_t {  // padded position i
    if (i < 2 || i >= cps.size() + 2) return kPad;
    return std::min<uint32_t>(cps[i - 2], 0x1FFFFF);  // kBadCodePoint fits 21 bits too
  };
  for (size_t i = 0; i < cps.size() + 2; ++i) keys->push_back(at(i) << 42 | at(i + 1) << 21 | at(i + 2));
  std::sort(keys->begin(), keys->end());
  uint64_t repeat = 0, last = 0;
  for (size_t i = 0; i < keys->size(); ++i) {
    uint64_t gram = (*keys)[i];
    repeat = (i > 0 && gram == last) ? repeat + 1 : 0;
    last = gram;
    (*keys)[i] = Mix(gram ^ Mix((repeat + 1) << 32 | chars));
  }
}

// Keys of the distinct strings made by deleting at most `deletes` (<= 2)
// code points of `cps`, the string itself included.
void DeletionKeys(const std::vector<uint32_t>& cps, int deletes, std::vector<uint64_t>* keys) {
  keys->clear();
  const size_t n = cps.size(), kNone = SIZE_MAX;
  auto without = [&](size_t a, size_t b) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; ++i) {
      if (i != a && i != b) h = Mix(h + cps[i]);
    }
    return h;
  };
  keys->push_back(without(kNone, kNone));
  for (size_t a = 0; a < n && deletes >= 1; ++a) {
    keys->push_back(without(a, kNone));
    for (size_t b = a + 1; b < n && deletes >= 2; ++b) keys->push_back(without(a, b));
  }
  std::sort(keys->begin(), keys->end());
  keys->erase(std::unique(keys->begin(), keys->end()), keys->end());
}

// Optimal string alignment distance of a and b if it is <= k, else k + 1.
int BoundedOsa(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, int k) {
  int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  if (std::abs(n - m) > k) return k + 1;
  thread_local std::vector<int> rows;
  rows.assign(3 * static_cast<size_t>(m + 1), 0);
  int* prev2 = rows.data();
  int* prev = prev2 + m + 1;
  int* cur = prev + m + 1;
  for (int j = 0; j <= m; ++j) prev[j] = j;
  for (int i = 1; i <= n; ++i) {
    cur[0] = i;
    int row_min = i;
    for (int j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int d = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d = std::min(d, prev2[j - 2] + 1);
      }
      cur[j] = d;
      row_min = std::min(row_min, d);
    }
    if (row_min > k) return k + 1;
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[m], k + 1);
}

// The padded trigrams that words of n and m code points within OSA distance
// k share at least (the q-gram count filter). Seen from the shorter word,
// an edit destroys at most 4 of its trigrams (a swap; a deletion or a
// substitution 3, an insertion 2), and |n - m| of the k edits must be
// insertions: min(n, m) + 2 - 2|n - m| - 4(k - |n - m|).
int GramBound(int n, int m, int k) {
  int d = std::abs(n - m);
  return std::min(n, m) + 2 + 2 * d - 4 * k;
}

template <typename T>
void EraseOne(std::vector<T>* v, T x) {
  auto it = std::find(v->begin(), v->end(), x);
  if (it == v->end()) return;
  *it = v->back();
  v->pop_back();
}

}  // namespace

void ForEachWord(std::string_view text, const std::function<void(std::string_view folded)>& fn) {
  std::string cur;
  bool in_word = false;
  size_t i = 0;
  while (i < text.size()) {
    uint32_t cp = FoldFullwidth(DecodeUtf8(text, &i));
    bool word = ClassifyCodePoint(cp) == CharClass::kWord;
    if (word) AppendUtf8(FoldForMatch(cp), &cur);
    if (!word && in_word && !cur.empty()) {
      fn(cur);
      cur.clear();
    }
    in_word = word;
  }
  if (!cur.empty()) fn(cur);
}

uint8_t Vocabulary::LangIndex(std::string_view lang) {
  std::string key = Stemmer::Supported(lang) ? Stemmer::Normalize(lang) : "";
  for (size_t i = 0; i < langs_.size(); ++i) {
    if (langs_[i] == key) return static_cast<uint8_t>(i);
  }
  // Supported keys are libstemmer's names and aliases: far fewer than 255.
  if (langs_.size() > std::numeric_limits<uint8_t>::max()) return 0;
  langs_.push_back(std::move(key));
  return static_cast<uint8_t>(langs_.size() - 1);
}

std::string Vocabulary::FamilyKey(uint8_t lang, std::string_view word) const {
  const std::string& code = langs_[lang];
  std::string key = code;
  key.push_back('\0');
  key += code.empty() ? std::string(word) : stemmer_.Stem(code, word);
  return key;
}

void Vocabulary::Add(std::string_view word, std::string_view lang, uint32_t docs) {
  if (docs == 0 || word.empty()) return;
  auto it = ids_.find(word);
  if (it != ids_.end()) {
    Entry& e = entries_[it->second];
    e.df = docs > std::numeric_limits<uint32_t>::max() - e.df ? std::numeric_limits<uint32_t>::max()
                                                              : e.df + docs;
    return;
  }
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(entries_.size());
    entries_.emplace_back();
    letters_.push_back(0);
  }
  it = ids_.emplace(std::string(word), id).first;
  if (it->first.capacity() > 15) word_heap_bytes_ += it->first.capacity() + 1;
  entries_[id] = Entry{&it->first, docs, static_cast<uint32_t>(CountChars(word)), LangIndex(lang)};
  letters_[id] = Signature(word);
  IndexGrams(id, true);
  IndexFamily(id, true);
  IndexShort(id, true);
}

void Vocabulary::Remove(std::string_view word, uint32_t docs) {
  auto it = ids_.find(word);
  if (it == ids_.end()) return;
  Entry& e = entries_[it->second];
  if (e.df > docs) {
    e.df -= docs;
    return;
  }
  uint32_t id = it->second;
  IndexGrams(id, false);
  IndexFamily(id, false);
  IndexShort(id, false);
  if (it->first.capacity() > 15) word_heap_bytes_ -= it->first.capacity() + 1;
  ids_.erase(it);
  entries_[id] = Entry{};
  free_.push_back(id);
}

void Vocabulary::IndexGrams(uint32_t id, bool add) {
  const std::string& word = *entries_[id].word;
  if (word.size() > kMaxSimilarBytes) return;
  thread_local std::vector<uint32_t> cps;
  thread_local std::vector<uint64_t> keys;
  Decode(word, &cps);
  GramKeys(cps, cps.size(), &keys);
  for (uint64_t key : keys) {
    if (add) {
      std::vector<uint32_t>& list = grams_[key];
      size_t capacity = list.capacity();
      list.insert(std::lower_bound(list.begin(), list.end(), id), id);
      posting_bytes_ += (list.capacity() - capacity) * sizeof(uint32_t);
      continue;
    }
    auto g = grams_.find(key);
    if (g == grams_.end()) continue;
    auto at = std::lower_bound(g->second.begin(), g->second.end(), id);
    if (at == g->second.end() || *at != id) continue;
    g->second.erase(at);
    if (!g->second.empty()) continue;
    posting_bytes_ -= g->second.capacity() * sizeof(uint32_t);
    grams_.erase(g);
  }
}

void Vocabulary::IndexFamily(uint32_t id, bool add) {
  std::string key = FamilyKey(entries_[id].lang, *entries_[id].word);
  if (add) {
    std::vector<uint32_t>& list = families_[key];
    size_t capacity = list.capacity();
    list.push_back(id);
    posting_bytes_ += (list.capacity() - capacity) * sizeof(uint32_t);
    return;
  }
  auto f = families_.find(key);
  if (f == families_.end()) return;
  EraseOne(&f->second, id);
  if (!f->second.empty()) return;
  posting_bytes_ -= f->second.capacity() * sizeof(uint32_t);
  families_.erase(f);
}

void Vocabulary::IndexShort(uint32_t id, bool add) {
  const Entry& e = entries_[id];
  if (e.chars > kShortChars) return;
  thread_local std::vector<uint32_t> cps;
  thread_local std::vector<uint64_t> keys;
  Decode(*e.word, &cps);
  DeletionKeys(cps, 2, &keys);
  for (uint64_t key : keys) {
    if (add) {
      deletions_.emplace(key, id);
      continue;
    }
    auto [begin, end] = deletions_.equal_range(key);
    for (auto it = begin; it != end; ++it) {
      if (it->second == id) {
        deletions_.erase(it);
        break;
      }
    }
  }
}

uint32_t Vocabulary::DocFreq(std::string_view word) const {
  auto it = ids_.find(word);
  return it == ids_.end() ? 0 : entries_[it->second].df;
}

size_t Vocabulary::MemoryBytes() const {
  // Node sizes of libstdc++'s containers rounded up to glibc malloc chunks
  // (size + 8, to a multiple of 16). A vector's bytes over 24 bytes are
  // rounded the same way, on average 8 more.
  constexpr size_t kWordNode = 80;      // rb-tree links, string, id
  constexpr size_t kGramNode = 48;      // next, key, vector
  constexpr size_t kFamilyNode = 80;    // next, string, vector, cached hash
  constexpr size_t kDeletionNode = 32;  // next, key, id
  size_t bytes = ids_.size() * kWordNode + word_heap_bytes_;
  bytes += entries_.capacity() * sizeof(Entry) + letters_.capacity() * sizeof(uint64_t);
  bytes += free_.capacity() * sizeof(uint32_t);
  bytes += grams_.size() * (kGramNode + 8) + families_.size() * (kFamilyNode + 8);
  bytes += deletions_.size() * kDeletionNode + posting_bytes_;
  bytes += (grams_.bucket_count() + families_.bucket_count() + deletions_.bucket_count()) * 8;
  return bytes;
}

std::vector<std::string> Vocabulary::Family(std::string_view word, std::string_view lang,
                                            size_t limit) const {
  std::vector<uint32_t> ids;
  std::string code = Stemmer::Supported(lang) ? Stemmer::Normalize(lang) : "";
  std::string key = code + '\0' + (code.empty() ? std::string(word) : stemmer_.Stem(code, word));
  if (auto f = families_.find(key); f != families_.end()) ids = f->second;
  if (auto it = ids_.find(word); it != ids_.end() &&
                                 std::find(ids.begin(), ids.end(), it->second) == ids.end()) {
    ids.push_back(it->second);
  }
  auto better = [&](uint32_t a, uint32_t b) {
    const Entry &x = entries_[a], &y = entries_[b];
    return x.df != y.df ? x.df > y.df : *x.word < *y.word;
  };
  size_t n = std::min(limit, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(n), ids.end(), better);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(*entries_[ids[i]].word);
  return out;
}

std::vector<Vocabulary::Near> Vocabulary::Similar(std::string_view word, int max_distance,
                                                  size_t limit) const {
  if (word.empty() || word.size() > kMaxSimilarBytes || limit == 0) return {};
  const int k = std::clamp(max_distance, 1, 2);
  thread_local std::vector<uint32_t> query, ids;
  Decode(word, &query);
  const int n = static_cast<int>(query.size());
  const uint64_t letters = Signature(word);
  // Candidates of different lengths, and from the two indexes, are disjoint;
  // only the deletion index finds a word more than once.
  ids.clear();
  DeletionCandidates(query, k, &ids);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (int m = std::max(1, n - k); m <= n + k; ++m) {
    if (std::max(n, m) <= static_cast<int>(kShortChars)) continue;  // DeletionCandidates' words
    TrigramCandidates(query, letters, k, static_cast<uint32_t>(m), GramBound(n, m, k), &ids);
  }
  std::vector<Near> out;
  thread_local std::vector<uint32_t> cand;
  for (size_t i = 0; i < ids.size(); ++i) {
    // Candidates are scattered: fetch the entries and their words ahead.
    if (i + 8 < ids.size()) __builtin_prefetch(&entries_[ids[i + 8]]);
    if (i + 4 < ids.size()) __builtin_prefetch(entries_[ids[i + 4]].word);
    uint32_t id = ids[i];
    const Entry& e = entries_[id];
    if (!SignatureWithin(letters_[id], letters, k) || *e.word == word) continue;
    Decode(*e.word, &cand);
    int d = BoundedOsa(query, cand, k);
    if (d <= k) out.push_back({*e.word, d, e.df});
  }
  auto better = [](const Near& a, const Near& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    return a.df != b.df ? a.df > b.df : a.word < b.word;
  };
  size_t keep = std::min(limit, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<ptrdiff_t>(keep), out.end(), better);
  out.resize(keep);
  return out;
}

// A word sharing >= bound of the query's Q keys shares one of any
// Q - bound + 1 of them (prefix filtering): the shortest lists that many are
// read, counting per word (a dense array of counters, reset before
// returning), and further lists while they are short (kCheapList); the
// longer ones are probed by binary search for the words found, until a word
// reaches the bound or can no longer reach it (the DivideSkip idea).
void Vocabulary::TrigramCandidates(const std::vector<uint32_t>& query, uint64_t letters, int k,
                                   uint32_t chars, int bound, std::vector<uint32_t>* ids) const {
  constexpr size_t kCheapList = 64;
  thread_local std::vector<uint64_t> keys;
  thread_local std::vector<std::pair<size_t, const std::vector<uint32_t>*>> lists;
  thread_local std::vector<uint8_t> counts;  // by id; all zero between calls
  thread_local std::vector<uint32_t> touched;
  GramKeys(query, chars, &keys);
  lists.clear();
  for (uint64_t key : keys) {
    auto g = grams_.find(key);
    if (g != grams_.end()) lists.emplace_back(g->second.size(), &g->second);
  }
  std::sort(lists.begin(), lists.end());
  // Keys without a list hold no word: they count as read.
  const size_t must_read = keys.size() - static_cast<size_t>(bound) + 1;
  const size_t absent = keys.size() - lists.size();
  size_t read = 0;
  if (counts.size() < entries_.size()) counts.resize(entries_.size());
  touched.clear();
  for (; read < lists.size(); ++read) {
    if (absent + read >= must_read && lists[read].first > kCheapList) break;
    for (uint32_t id : *lists[read].second) {
      if (counts[id]++ == 0) touched.push_back(id);
    }
  }
  const int unread = static_cast<int>(lists.size() - read);
  for (size_t i = 0; i < touched.size(); ++i) {
    if (i + 8 < touched.size()) __builtin_prefetch(&letters_[touched[i + 8]]);
    uint32_t id = touched[i];
    int count = counts[id];
    counts[id] = 0;
    if (count + unread < bound || !SignatureWithin(letters_[id], letters, k)) continue;
    for (size_t j = read; j < lists.size() && count < bound; ++j) {
      if (count + static_cast<int>(lists.size() - j) < bound) break;
      const std::vector<uint32_t>& list = *lists[j].second;
      count += std::binary_search(list.begin(), list.end(), id) ? 1 : 0;
    }
    if (count >= bound) ids->push_back(id);
  }
}

// The words of at most kShortChars code points within k of a query of at
// most kShortChars: two words within k are each at most k deletions from a
// common string (a swap or a substitution deletes on both sides).
void Vocabulary::DeletionCandidates(const std::vector<uint32_t>& query, int k,
                                    std::vector<uint32_t>* ids) const {
  const int n = static_cast<int>(query.size());
  if (n > static_cast<int>(kShortChars)) return;
  thread_local std::vector<uint64_t> keys;
  DeletionKeys(query, k, &keys);
  for (uint64_t key : keys) {
    auto [begin, end] = deletions_.equal_range(key);
    for (auto it = begin; it != end; ++it) {
      int m = static_cast<int>(entries_[it->second].chars);
      if (std::abs(n - m) <= k) ids->push_back(it->second);
    }
  }
}

std::vector<std::string> Vocabulary::Prefix(std::string_view prefix, size_t limit) const {
  std::vector<const std::pair<const std::string, uint32_t>*> seen;
  for (auto it = ids_.lower_bound(prefix);
       it != ids_.end() && seen.size() < kMaxPrefixScan && it->first.starts_with(prefix); ++it) {
    seen.push_back(&*it);
  }
  auto better = [&](auto* a, auto* b) {
    uint32_t x = entries_[a->second].df, y = entries_[b->second].df;
    return x != y ? x > y : a->first < b->first;
  };
  size_t n = std::min(limit, seen.size());
  std::partial_sort(seen.begin(), seen.begin() + static_cast<ptrdiff_t>(n), seen.end(), better);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(seen[i]->first);
  return out;
}

}  // namespace folio::search
