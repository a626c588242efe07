// vocabulary-bench [--words N] [--queries Q]: builds a Vocabulary of N
// (default 300000) distinct words (MakeWords: a system word list plus
// inflections, or synthetic), document frequencies skewed, then prints its
// memory and the latency of Similar() for 5-, 8- and 12-character queries
// (a word of the list with 1 or 2 random edits) at distance 1 and 2, and
// of Prefix() and Family().
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <malloc.h>
#include <fstream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "vocabulary.h"

using folio::search::Vocabulary;
using Clock = std::chrono::steady_clock;

namespace {

// Heap bytes in use (glibc): what the vocabulary holds, unlike RSS, which
// reuses memory freed before it was built.
size_t HeapBytes() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
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

// The words of /usr/share/dict/words (Debian's wamerican & co.), folded as
// the index folds them, then derived words (a word plus an English suffix,
// as a vault's vocabulary has inflections the list lacks) up to n; without
// the list, pronounceable synthetic stems with suffixes.
std::vector<std::string> MakeWords(size_t n, std::mt19937& rng) {
  static const char* kSuffixes[] = {"", "s", "ed", "ing", "er", "ers", "ly", "ion", "ions", "ment",
                                    "able", "ness"};
  std::unordered_set<std::string> seen;
  std::vector<std::string> words;
  std::ifstream dict("/usr/share/dict/words");
  for (std::string line; words.size() < n && std::getline(dict, line);) {
    folio::search::ForEachWord(line, [&](std::string_view w) {
      if (w.size() >= 2 && seen.insert(std::string(w)).second) words.emplace_back(w);
    });
  }
  const size_t listed = words.size();
  if (listed > 0) std::printf("/usr/share/dict/words: %zu distinct folded words\n", listed);
  while (listed > 0 && words.size() < n) {
    std::string w = words[rng() % listed] + kSuffixes[1 + rng() % (std::size(kSuffixes) - 1)];
    if (seen.insert(w).second) words.push_back(std::move(w));
  }
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

// This thread's CPU time: the machine may be shared, and wall time then
// counts other processes' turns too.
double CpuMicros() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}

struct Stats {
  double p50, p99, wall_p50, wall_p99, found;
};

template <typename Fn>
Stats Time(const std::vector<std::string>& queries, Fn&& fn) {
  std::vector<double> cpu, wall;
  size_t found = 0;
  for (const std::string& q : queries) {
    double c0 = CpuMicros();
    auto t0 = Clock::now();
    found += fn(q);
    wall.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    cpu.push_back(CpuMicros() - c0);
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  size_t mid = cpu.size() / 2, p99 = cpu.size() * 99 / 100;
  return {cpu[mid], cpu[p99], wall[mid], wall[p99], double(found) / double(queries.size())};
}

void Print(const char* what, const Stats& s) {
  std::printf("%-20s cpu p50 %7.1f us  p99 %7.1f us | wall p50 %7.1f us  p99 %7.1f us | %.1f found\n",
              what, s.p50, s.p99, s.wall_p50, s.wall_p99, s.found);
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
  size_t heap0 = HeapBytes();
  auto t0 = Clock::now();
  Vocabulary v;
  for (size_t i = 0; i < words.size(); ++i) v.Add(words[i], "en", 1 + 1000 / (1 + rng() % 1000));
  double build_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  size_t heap = HeapBytes() - heap0;
  std::printf("words %zu (<=6 chars: %zu)  build %.0f ms  MemoryBytes %.1f MB (%.0f B/word)  "
              "heap %.1f MB (%.0f B/word)\n",
              v.size(), by_len[1] + by_len[2] + by_len[3] + by_len[4] + by_len[5] + by_len[6],
              build_ms, v.MemoryBytes() / 1e6, double(v.MemoryBytes()) / double(v.size()),
              heap / 1e6, double(heap) / double(v.size()));
  for (size_t len : {5, 8, 12}) {
    std::vector<std::string> of_len;
    for (auto& w : words) if (w.size() == len) of_len.push_back(w);
    if (of_len.empty()) continue;
    for (int k = 1; k <= 2; ++k) {
      std::vector<std::string> queries;
      for (size_t i = 0; i < nq; ++i) queries.push_back(Edit(of_len[rng() % of_len.size()], k, rng));
      Stats s = Time(queries, [&](const std::string& q) { return v.Similar(q, k, 10).size(); });
      char what[64];
      std::snprintf(what, sizeof what, "Similar len %zu k=%d", len, k);
      Print(what, s);
    }
  }
  std::vector<std::string> prefixes, family;
  for (size_t i = 0; i < nq; ++i) {
    const std::string& w = words[rng() % words.size()];
    prefixes.push_back(w.substr(0, 2 + i % 3));
    family.push_back(w);
  }
  Print("Prefix 2-4 chars", Time(prefixes, [&](const std::string& q) { return v.Prefix(q, 8).size(); }));
  Print("Family", Time(family, [&](const std::string& q) { return v.Family(q, "en", 8).size(); }));
  return 0;
}
