// Vocabulary and ForEachWord.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <thread>
#include <string>
#include <tuple>
#include <vector>

#include "folio/core/utf8.h"
#include "snippet.h"
#include "vocabulary.h"

using namespace folio;
using namespace folio::search;

namespace {

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> out;
  ForEachWord(text, [&](std::string_view w) { out.emplace_back(w); });
  return out;
}

std::vector<std::string> SimilarWords(const Vocabulary& v, std::string_view w, int k) {
  std::vector<std::string> out;
  for (auto& n : v.Similar(w, k, 1000)) out.push_back(n.word);
  return out;
}

std::vector<uint32_t> Cps(std::string_view s) {
  std::vector<uint32_t> out;
  size_t i = 0;
  while (i < s.size()) out.push_back(DecodeUtf8(s, &i));
  return out;
}

// Optimal string alignment distance, the textbook full table.
int Osa(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  const size_t w = b.size() + 1;
  std::vector<int> d((a.size() + 1) * w);
  for (size_t i = 0; i <= a.size(); ++i) d[i * w] = static_cast<int>(i);
  for (size_t j = 0; j <= b.size(); ++j) d[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int v = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      }
      d[i * w + j] = v;
    }
  }
  return d.back();
}

}  // namespace

TEST_CASE("ForEachWord splits and folds as QueryTerms does") {
  CHECK(Words("Café au LAIT, naïve-ÉTÉ!") ==
        std::vector<std::string>{"cafe", "au", "lait", "naive", "ete"});
  CHECK(Words("Минуты и ЧАСЫ") == std::vector<std::string>{"минуты", "и", "часы"});
  CHECK(Words("ＡＢＣ snake_case x2") == std::vector<std::string>{"abc", "snake", "case", "x2"});
  CHECK(Words("abc東京def 東京") == std::vector<std::string>{"abc", "def"});  // CJK skipped
  CHECK(Words("a a") == std::vector<std::string>{"a", "a"});                 // duplicates kept
  CHECK(Words("").empty());
  CHECK(Words("?! …").empty());
  // The same words as QueryTerms, on a text short enough for it.
  const char* text = "Öffentliche Notizen: publish_my notes, ＦＵＬＬWIDTH, Ελληνικά 日本語 x";
  std::vector<std::string> from_terms;
  for (auto& t : QueryTerms(text)) {
    if (!t.cjk) from_terms.push_back(t.folded);
  }
  CHECK(Words(text) == from_terms);
}

TEST_CASE("Vocabulary: add, remove, document frequency") {
  Vocabulary v;
  CHECK(v.size() == 0);
  CHECK(v.DocFreq("kitchen") == 0);
  v.Add("kitchen", "en");
  v.Add("kitchen", "en", 4);
  v.Add("garden", "en", 2);
  v.Add("nothing", "en", 0);  // no documents: no word
  v.Add("", "en");
  CHECK(v.size() == 2);
  CHECK(v.DocFreq("kitchen") == 5);
  CHECK(v.DocFreq("garden") == 2);
  CHECK(v.DocFreq("nothing") == 0);
  size_t mem = v.MemoryBytes();
  CHECK(mem > 0);
  {
    Vocabulary grown;
    size_t empty = grown.MemoryBytes();
    for (int i = 0; i < 1000; ++i) grown.Add("word" + std::to_string(i), "en");
    size_t full = grown.MemoryBytes();
    CHECK(full > empty + 1000 * 100);  // every index holds each word
    for (int i = 0; i < 1000; ++i) grown.Remove("word" + std::to_string(i));
    CHECK(grown.size() == 0);
    CHECK(grown.MemoryBytes() < full - 1000 * 50);  // nodes and lists freed
  }
  v.Remove("kitchen", 3);
  CHECK(v.DocFreq("kitchen") == 2);
  v.Remove("kitchen", 10);  // not below 0: gone
  CHECK(v.DocFreq("kitchen") == 0);
  CHECK(v.size() == 1);
  v.Remove("absent");
  CHECK(v.size() == 1);
  v.Add("kitchen", "en", UINT32_MAX);
  v.Add("kitchen", "en", 7);
  CHECK(v.DocFreq("kitchen") == UINT32_MAX);  // saturates
}

TEST_CASE("Vocabulary: stem families") {
  Vocabulary v;
  v.Add("connect", "en", 1);
  v.Add("connections", "en", 5);
  v.Add("connected", "en", 3);
  v.Add("connecting", "en", 3);
  v.Add("connector", "en", 9);  // Porter2: "connector", another stem
  v.Add("publish", "en", 2);
  CHECK(v.Family("connect", "en", 10) ==
        std::vector<std::string>{"connections", "connected", "connecting", "connect"});
  CHECK(v.Family("connection", "en-US", 2) == std::vector<std::string>{"connections", "connected"});
  CHECK(v.Family("publishing", "en", 10) == std::vector<std::string>{"publish"});
  CHECK(v.Family("absent", "en", 10).empty());
  CHECK(v.Family("connect", "en", 0).empty());
  // A word's stem is its Add's language's: German words do not join English families.
  v.Add("hauser", "de", 1);
  v.Add("haus", "de", 1);
  CHECK(v.Family("haus", "de", 10) == std::vector<std::string>{"haus", "hauser"});
  CHECK(v.Family("haus", "en", 10) == std::vector<std::string>{"haus"});  // itself, present
  // Unsupported language: the word is its own family.
  v.Add("kitchens", "xx", 1);
  CHECK(v.Family("kitchens", "xx", 10) == std::vector<std::string>{"kitchens"});
  v.Remove("connections", 5);
  CHECK(v.Family("connect", "en", 10) ==
        std::vector<std::string>{"connected", "connecting", "connect"});
  v.Add("минуты", "ru", 2);
  v.Add("минута", "ru", 1);
  CHECK(v.Family("минут", "ru", 10) == std::vector<std::string>{"минуты", "минута"});
}

TEST_CASE("Vocabulary: similar words") {
  Vocabulary v;
  for (auto w : {"kitchen", "kitchens", "chicken", "embedding", "embedded", "documentation",
                 "documents", "cafe", "garden"}) {
    v.Add(w, "en");
  }
  v.Add("kitchen", "en", 9);
  CHECK(SimilarWords(v, "kitchn", 1) == std::vector<std::string>{"kitchen"});
  CHECK(SimilarWords(v, "embdeding", 1) == std::vector<std::string>{"embedding"});  // swap
  CHECK(SimilarWords(v, "documantaton", 1).empty());
  CHECK(SimilarWords(v, "documantaton", 2) == std::vector<std::string>{"documentation"});
  auto near = v.Similar("kitchen", 2, 10);  // itself excluded; nearest, then most frequent
  REQUIRE(near.size() == 1);
  CHECK(near[0].word == "kitchens");
  CHECK(near[0].distance == 1);
  CHECK(near[0].df == 1);
  near = v.Similar("kitchenz", 2, 10);
  REQUIRE(near.size() == 2);
  CHECK(near[0].word == "kitchen");   // distance 1, df 10
  CHECK(near[1].word == "kitchens");  // distance 1, df 1
  CHECK(v.Similar("kitchenz", 2, 1).size() == 1);
  // Distance 3 is never returned.
  CHECK(SimilarWords(v, "kotchxnn", 2).empty());  // kitchen: 3 edits
  CHECK(SimilarWords(v, "gxrdxnx", 2).empty());
  CHECK(SimilarWords(v, "cafe", 2).empty());  // nothing within 2 of "cafe" but itself
  CHECK(SimilarWords(v, "cafes", 1) == std::vector<std::string>{"cafe"});
  CHECK(SimilarWords(v, "caef", 1) == std::vector<std::string>{"cafe"});  // short: by length
  CHECK(v.Similar("kitchn", 0, 10).size() == 1);  // clamped to 1
  CHECK(v.Similar("kitchn", 9, 10).size() == 2);  // clamped to 2: "kitchen", "kitchens"
  CHECK(v.Similar("kitchn", 1, 0).empty());
  CHECK(v.Similar("", 2, 10).empty());
  CHECK(v.Similar(std::string(70, 'k'), 2, 10).empty());
  // Removed words cannot be found.
  v.Remove("kitchen", 10);
  CHECK(SimilarWords(v, "kitchn", 1).empty());
  CHECK(SimilarWords(v, "kitchn", 2) == std::vector<std::string>{"kitchens"});
  v.Remove("embedding");
  CHECK(SimilarWords(v, "embdeding", 2).empty());  // "embedded" is 3 edits away
  CHECK(SimilarWords(v, "embeded", 2) == std::vector<std::string>{"embedded"});
}

TEST_CASE("Vocabulary: UTF-8 words are counted in code points") {
  Vocabulary v;
  ForEachWord("Café Минуты ÉTÉ", [&](std::string_view w) { v.Add(w, "fr"); });
  CHECK(v.DocFreq("cafe") == 1);
  CHECK(v.DocFreq("минуты") == 1);
  CHECK(v.DocFreq("ete") == 1);
  CHECK(SimilarWords(v, "минуиы", 1) == std::vector<std::string>{"минуты"});  // one substitution
  CHECK(SimilarWords(v, "мниуты", 1) == std::vector<std::string>{"минуты"});  // one swap
  CHECK(SimilarWords(v, "минутыыы", 1).empty());
  CHECK(SimilarWords(v, "минутыыы", 2) == std::vector<std::string>{"минуты"});
  CHECK(SimilarWords(v, "cafeé", 1) == std::vector<std::string>{"cafe"});
  CHECK(v.Prefix("мин", 5) == std::vector<std::string>{"минуты"});
}

TEST_CASE("Vocabulary: prefix lookup") {
  Vocabulary v;
  v.Add("pub", "en", 1);
  v.Add("publish", "en", 5);
  v.Add("publishing", "en", 7);
  v.Add("public", "en", 5);
  v.Add("pumpkin", "en", 50);
  CHECK(v.Prefix("pub", 10) == std::vector<std::string>{"publishing", "public", "publish", "pub"});
  CHECK(v.Prefix("pub", 2) == std::vector<std::string>{"publishing", "public"});
  CHECK(v.Prefix("publ", 10) == std::vector<std::string>{"publishing", "public", "publish"});
  CHECK(v.Prefix("x", 10).empty());
  CHECK(v.Prefix("pu", 1) == std::vector<std::string>{"pumpkin"});
  v.Remove("pumpkin", 50);
  CHECK(v.Prefix("pu", 1) == std::vector<std::string>{"publishing"});
  // Only kMaxPrefixScan words are looked at: a frequent word past them is not seen.
  Vocabulary big;
  for (size_t i = 0; i < Vocabulary::kMaxPrefixScan; ++i) big.Add("w" + std::to_string(10000 + i), "en");
  big.Add("wz", "en", 100);
  CHECK(big.Prefix("w", 1) == std::vector<std::string>{"w10000"});
  CHECK(big.Prefix("wz", 1) == std::vector<std::string>{"wz"});
}

// Similar must return exactly what comparing the query with every word gives.
TEST_CASE("Vocabulary: Similar equals a brute-force scan on 20k random words") {
  std::mt19937 rng(27);
  // A small alphabet (with a two-byte letter) so that near words are common.
  const std::vector<std::string> letters = {"a", "b", "c", "d", "e", "o", "r", "s", "t", "é"};
  auto random_word = [&](size_t min, size_t max) {
    std::string w;
    size_t n = std::uniform_int_distribution<size_t>(min, max)(rng);
    for (size_t i = 0; i < n; ++i) w += letters[rng() % letters.size()];
    return w;
  };
  auto mutate = [&](std::string w) {  // up to 3 random edits of a word
    auto cps = Cps(w);
    int edits = static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = cps.empty() ? 0 : rng() % cps.size();
      uint32_t letter = Cps(letters[rng() % letters.size()])[0];
      switch (rng() % 4) {
        case 0: cps.insert(cps.begin() + static_cast<ptrdiff_t>(at), letter); break;
        case 1: if (!cps.empty()) cps.erase(cps.begin() + static_cast<ptrdiff_t>(at)); break;
        case 2: if (!cps.empty()) cps[at] = letter; break;
        default: if (at + 1 < cps.size()) std::swap(cps[at], cps[at + 1]);
      }
    }
    std::string out;
    for (uint32_t c : cps) AppendUtf8(c, &out);
    return out.empty() ? std::string("a") : out;
  };
  Vocabulary v;
  std::set<std::string> words;
  while (words.size() < 20000) {
    auto near = words.lower_bound(random_word(1, 3));
    std::string w = near == words.end() || rng() % 2 ? random_word(1, 14) : mutate(*near);
    if (words.insert(w).second) v.Add(w, "en", 1 + rng() % 5);
  }
  // Remove a tenth, so that removal keeps the indexes exact too.
  std::vector<std::string> all(words.begin(), words.end());
  for (size_t i = 0; i < all.size(); i += 10) {
    v.Remove(all[i], 100);
    words.erase(all[i]);
  }
  REQUIRE(v.size() == words.size());
  std::vector<std::pair<std::string, std::vector<uint32_t>>> decoded;
  for (const std::string& w : words) decoded.emplace_back(w, Cps(w));
  int checked = 0, found = 0;
  for (int q = 0; q < 400; ++q) {
    std::string query = q % 3 ? mutate(all[rng() % all.size()]) : random_word(1, 16);
    auto query_cps = Cps(query);
    for (int k = 1; k <= 2; ++k) {
      std::set<std::tuple<int, std::string>> expect, got;
      for (const auto& [w, cps] : decoded) {
        if (cps.size() > query_cps.size() + 2 || cps.size() + 2 < query_cps.size()) continue;
        int d = Osa(query_cps, cps);
        if (d <= k && w != query) expect.insert({d, w});
      }
      for (auto& n : v.Similar(query, k, SIZE_MAX)) got.insert({n.distance, n.word});
      CHECK_MESSAGE(got == expect, query, " k=", k);
      ++checked;
      found += static_cast<int>(got.size());
    }
  }
  MESSAGE("queries ", checked, ", words found ", found);
  CHECK(found > 1000);  // the alphabet is small: many words are near
}

// Const methods from 4 threads at once (their scratch space is per thread)
// give what one thread gets.
TEST_CASE("Vocabulary: concurrent queries") {
  Vocabulary v;
  std::mt19937 rng(7);
  std::vector<std::string> words;
  for (int i = 0; i < 5000; ++i) {
    std::string w;
    size_t n = 3 + rng() % 9;
    for (size_t j = 0; j < n; ++j) w += static_cast<char>('a' + rng() % 6);
    words.push_back(w);
    v.Add(w, "en", 1 + rng() % 9);
  }
  auto answer = [&](const std::string& q) {
    std::string out;
    for (auto& n : v.Similar(q, 2, 20)) out += n.word + ",";
    for (auto& w : v.Family(q, "en", 5)) out += w + ";";
    for (auto& w : v.Prefix(q.substr(0, 2), 5)) out += w + ".";
    return out;
  };
  std::vector<std::string> expect;
  for (size_t i = 0; i < 200; ++i) expect.push_back(answer(words[i]));
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (size_t i = 0; i < 200; ++i) {
          size_t at = (i + t * 50) % 200;
          if (answer(words[at]) != expect[at]) ++wrong[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int w : wrong) CHECK(w == 0);
}
