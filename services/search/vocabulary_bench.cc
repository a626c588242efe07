// vocabulary-bench [--words N] [--queries Q]: builds a Vocabulary of N
// (default 300000) distinct synthetic words shaped like a documentation
// vault's (pronounceable stems of 3..12 letters in families with English
// suffixes, document frequencies Zipf-like), then prints its memory and the
// latency of Similar() for 5-, 8- and 12-character queries with 1 or 2
// random edits at distance 1 and 2, and of Prefix() and Family().
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "vocabulary.h"

using folio::search::Vocabulary;
using Clock = std::chrono::steady_clock;

namespace {

size_t RssBytes() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0, rss = 0;
  f >> pages >> rss;
  return rss * 4096;
}

std::string Stem(std::mt19937& rng) {
  static const char* kOnsets[] = {"b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s",
                                  "t", "v", "w", "z", "br", "ch", "cl", "cr", "dr", "fl", "gr",
                                  "pl", "pr", "sh", "sl", "sp", "st", "str", "th", "tr"};
  static const char* kVowels[] = {"a", "e", "i", "o", "u", "ea", "ai", "ou", "io", "y"};
  static const char* kCodas[] = {"", "", "", "n", "r", "s", "t", "l", "m", "nd", "nt", "st", "ck"};
  std::string w;
  size_t syllables = 1 + rng() % 4;
  for (size_t i = 0; i < syllables; ++i) {
    w += kOnsets[rng() % std::size(kOnsets)];
    w += kVowels[rng() % std::size(kVowels)];
    w += kCodas[rng() % std::size(kCodas)];
  }
  return w;
}

std::vector<std::string> MakeWords(size_t n, std::mt19937& rng) {
  static const char* kSuffixes[] = {"", "s", "ed", "ing", "er", "ers", "ly", "ion", "ions", "ment",
                                    "able", "ness"};
  std::unordered_set<std::string> seen;
  std::vector<std::string> words;
  while (words.size() < n) {
    std::string stem = Stem(rng);
    if (stem.size() < 3 || stem.size() > 12) continue;
    size_t family = 1 + rng() % 5;
    for (size_t i = 0; i < family && words.size() < n; ++i) {
      std::string w = stem + kSuffixes[rng() % std::size(kSuffixes)];
      if (seen.insert(w).second) words.push_back(std::move(w));
    }
  }
  return words;
}

std::string Edit(std::string w, int edits, std::mt19937& rng) {
  for (int e = 0; e < edits; ++e) {
    size_t at = rng() % w.size();
    char c = static_cast<char>('a' + rng() % 26);
    switch (rng() % 4) {
      case 0: w.insert(w.begin() + static_cast<ptrdiff_t>(at), c); break;
      case 1: if (w.size() > 1) w.erase(at, 1); break;
      case 2: w[at] = c; break;
      default: if (at + 1 < w.size()) std::swap(w[at], w[at + 1]);
    }
  }
  return w;
}

struct Stats {
  double p50, p99, found;
};

template <typename Fn>
Stats Time(const std::vector<std::string>& queries, Fn&& fn) {
  std::vector<double> us;
  size_t found = 0;
  for (const std::string& q : queries) {
    auto t0 = Clock::now();
    found += fn(q);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100], double(found) / double(queries.size())};
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = 300000, nq = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--words")) n = std::strtoul(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--queries")) nq = std::strtoul(argv[i + 1], nullptr, 10);
  }
  std::mt19937 rng(27);
  std::vector<std::string> words = MakeWords(n, rng);
  std::vector<size_t> by_len(80);
  for (auto& w : words) by_len[std::min<size_t>(w.size(), 79)]++;
  size_t rss0 = RssBytes();
  auto t0 = Clock::now();
  Vocabulary v;
  for (size_t i = 0; i < words.size(); ++i) v.Add(words[i], "en", 1 + 1000 / (1 + rng() % 1000));
  double build_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  size_t rss = RssBytes() - rss0;
  std::printf("words %zu (<=6 chars: %zu)  build %.0f ms  MemoryBytes %.1f MB (%.0f B/word)  "
              "RSS growth %.1f MB (%.0f B/word)\n",
              v.size(), by_len[1] + by_len[2] + by_len[3] + by_len[4] + by_len[5] + by_len[6],
              build_ms, v.MemoryBytes() / 1e6, double(v.MemoryBytes()) / double(v.size()),
              rss / 1e6, double(rss) / double(v.size()));
  for (size_t len : {5, 8, 12}) {
    std::vector<std::string> of_len;
    for (auto& w : words) if (w.size() == len) of_len.push_back(w);
    for (int k = 1; k <= 2; ++k) {
      std::vector<std::string> queries;
      for (size_t i = 0; i < nq; ++i) queries.push_back(Edit(of_len[rng() % of_len.size()], k, rng));
      Stats s = Time(queries, [&](const std::string& q) { return v.Similar(q, k, 10).size(); });
      std::printf("Similar len %2zu k=%d: p50 %6.1f us  p99 %6.1f us  (%.1f words found)\n", len, k,
                  s.p50, s.p99, s.found);
    }
  }
  std::vector<std::string> prefixes, family;
  for (size_t i = 0; i < nq; ++i) {
    const std::string& w = words[rng() % words.size()];
    prefixes.push_back(w.substr(0, 2 + i % 3));
    family.push_back(w);
  }
  Stats p = Time(prefixes, [&](const std::string& q) { return v.Prefix(q, 8).size(); });
  std::printf("Prefix 2-4 chars:  p50 %6.1f us  p99 %6.1f us  (%.1f words)\n", p.p50, p.p99, p.found);
  Stats f = Time(family, [&](const std::string& q) { return v.Family(q, "en", 8).size(); });
  std::printf("Family:            p50 %6.1f us  p99 %6.1f us  (%.1f words)\n", f.p50, f.p99, f.found);
  return 0;
}
