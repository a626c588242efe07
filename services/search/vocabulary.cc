#include "vocabulary.h"

#include <algorithm>
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

// The keys of a word's padded trigrams, as a multiset made a set: the j-th
// repeat of a trigram gets its own key, so shared keys count shared trigrams
// with multiplicity. Two trigrams may hash alike: that only adds candidates.
void GramKeys(const std::vector<uint32_t>& cps, std::vector<uint64_t>* keys) {
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
    (*keys)[i] = Mix(gram ^ Mix(repeat + 1));
  }
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
  }
  it = ids_.emplace(std::string(word), id).first;
  if (it->first.capacity() > 15) word_heap_bytes_ += it->first.capacity() + 1;
  entries_[id] = Entry{&it->first, docs, static_cast<uint32_t>(CountChars(word)), LangIndex(lang)};
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
  GramKeys(cps, &keys);
  for (uint64_t key : keys) {
    if (add) {
      grams_[key].push_back(id);
      ++postings_;
      continue;
    }
    auto g = grams_.find(key);
    if (g == grams_.end()) continue;
    EraseOne(&g->second, id);
    --postings_;
    if (g->second.empty()) grams_.erase(g);
  }
}

void Vocabulary::IndexFamily(uint32_t id, bool add) {
  std::string key = FamilyKey(entries_[id].lang, *entries_[id].word);
  if (add) {
    families_[key].push_back(id);
    ++postings_;
    return;
  }
  auto f = families_.find(key);
  if (f == families_.end()) return;
  EraseOne(&f->second, id);
  --postings_;
  if (f->second.empty()) families_.erase(f);
}

void Vocabulary::IndexShort(uint32_t id, bool add) {
  const Entry& e = entries_[id];
  if (e.chars > kShortChars) return;
  if (add) {
    short_[e.chars].push_back(id);
    ++postings_;
  } else {
    EraseOne(&short_[e.chars], id);
    --postings_;
  }
}

uint32_t Vocabulary::DocFreq(std::string_view word) const {
  auto it = ids_.find(word);
  return it == ids_.end() ? 0 : entries_[it->second].df;
}

size_t Vocabulary::MemoryBytes() const {
  // Per-node costs of libstdc++'s map and unordered_map plus malloc's
  // 16-byte header; vectors counted at 1.5x their size for growth slack.
  constexpr size_t kMapNode = 32 + sizeof(std::string) + sizeof(uint32_t) + 16;
  constexpr size_t kHashNode = 8 + sizeof(uint64_t) + sizeof(std::vector<uint32_t>) + 16 + 16;
  size_t bytes = ids_.size() * kMapNode + word_heap_bytes_;
  bytes += entries_.capacity() * sizeof(Entry) + free_.capacity() * sizeof(uint32_t);
  bytes += (grams_.size() + families_.size()) * kHashNode;
  bytes += (grams_.bucket_count() + families_.bucket_count()) * sizeof(void*);
  // Family keys are strings, not uint64_t; some outgrow the small buffer.
  bytes += families_.size() * (sizeof(std::string) - sizeof(uint64_t) + 8);
  return bytes + postings_ * sizeof(uint32_t) * 3 / 2;
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
  thread_local std::vector<uint32_t> query, cand;
  thread_local std::vector<uint64_t> keys;
  thread_local std::vector<uint16_t> counts;  // per id; all zero between calls
  thread_local std::vector<uint32_t> touched;
  Decode(word, &query);
  const int n = static_cast<int>(query.size());
  std::vector<Near> out;
  auto verify = [&](uint32_t id) {
    const Entry& e = entries_[id];
    if (std::abs(static_cast<int>(e.chars) - n) > k || *e.word == word) return;
    Decode(*e.word, &cand);
    int d = BoundedOsa(query, cand, k);
    if (d <= k) out.push_back({*e.word, d, e.df});
  };
  // The count filter's bound for a candidate of m code points; <= 0: the
  // trigram index cannot find it, the lists by length do.
  auto bound = [&](int m) { return std::max(n, m) + 2 - 4 * k; };
  GramKeys(query, &keys);
  if (counts.size() < entries_.size()) counts.resize(entries_.size());
  for (uint64_t key : keys) {
    auto g = grams_.find(key);
    if (g == grams_.end()) continue;
    for (uint32_t id : g->second) {
      if (counts[id]++ == 0) touched.push_back(id);
    }
  }
  for (uint32_t id : touched) {
    int need = bound(static_cast<int>(entries_[id].chars));
    if (need > 0 && counts[id] >= need) verify(id);
    counts[id] = 0;
  }
  touched.clear();
  for (int m = std::max(1, n - k); m <= n + k && m <= static_cast<int>(kShortChars); ++m) {
    if (bound(m) > 0) continue;
    for (uint32_t id : short_[static_cast<size_t>(m)]) verify(id);
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
