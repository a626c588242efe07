// Synthetic vaults for tests and benchmarks (search's engine test,
// vector-bench, search-bench), and Pin (run a thread on one CPU): a
// deterministic generator of notes whose words follow a Zipf law and cluster
// by topic, so that embeddings, related lists and queries behave like a real
// vault's. Test and benchmark support only; header-only; not used by any service.
// Threading: a NoteGen is immutable after construction; Note() and Query()
// may run concurrently from any number of threads.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace folio::testing {

inline std::vector<double> Zipf(size_t n, double s) {
  std::vector<double> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = 1.0 / std::pow(static_cast<double>(i + 1), s);
  return w;
}

// Samples index i with probability w[i] / sum(w). Const, so threads may share it.
class Sampler {
 public:
  Sampler() = default;
  explicit Sampler(const std::vector<double>& w) : cdf_(w.size()) {
    double sum = 0;
    for (size_t i = 0; i < w.size(); ++i) cdf_[i] = sum += w[i];
  }
  size_t operator()(std::mt19937_64& rng) const {
    double u = std::uniform_real_distribution<double>(0, cdf_.back())(rng);
    return std::min<size_t>(std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin(), cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
};

// Synthetic notes: a Zipf vocabulary of 40,000 word-like strings whose
// head is real English function words; topics with power-law popularity, six
// subtopics each (a topic's 300 and a subtopic's 80 words are drawn from the
// mid/low-frequency part). A note has a topic, a subtopic and a second topic;
// its words are 45% general, 25% topic, 20% subtopic, 10% second topic;
// 200-2000 words (log-uniform) in 6-18 word sentences, 3-6 per paragraph,
// a heading (2-4 subtopic words) every 2-4 paragraphs; the title is 2-4
// topic/subtopic words; the tag names the topic.
struct SynthNote {
  std::string title, tag, body;
  std::vector<std::pair<std::string, size_t>> headings;  // text, byte offset of its line in body
};

class NoteGen {
 public:
  NoteGen(size_t topics, uint64_t seed);
  SynthNote Note(uint64_t i) const;  // deterministic in i
  std::string Query(uint64_t i) const;  // a 1-4 word search-box query, deterministic in i

 private:
  static constexpr size_t kSub = 6, kTopicWords = 300, kSubWords = 80;
  const std::string& Word(std::mt19937_64& rng, size_t topic, size_t sub, size_t other) const;
  const std::string& Focused(std::mt19937_64& rng, size_t topic, size_t sub) const;
  std::vector<std::string> words_;
  std::vector<std::vector<uint32_t>> topic_words_, sub_words_;  // sub: topic * kSub + s
  Sampler general_, topic_, sub_, topic_rank_, sub_rank_;
};

inline NoteGen::NoteGen(size_t topics, uint64_t seed) {
  std::mt19937_64 rng(seed);
  static const char* kFunction[] = {"the", "of", "and", "to", "a", "in", "is", "it", "that", "for", "on",
                                    "with", "as", "this", "be", "are", "by", "from", "or", "not", "we", "can",
                                    "at", "an", "if", "which", "you", "but", "has", "when", "all", "more"};
  static const char* kOnset[] = {"", "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t",
                                 "v", "w", "z", "br", "st", "tr", "ch", "sh", "th", "pl", "gr", "sp", "cl"};
  static const char* kVowel[] = {"a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y"};
  static const char* kCoda[] = {"", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "x"};
  std::unordered_set<std::string> seen(std::begin(kFunction), std::end(kFunction));
  words_.assign(std::begin(kFunction), std::end(kFunction));
  while (words_.size() < 40000) {
    std::string w;
    static const size_t kSyllables[20] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4};
    for (size_t s = kSyllables[rng() % 20]; s > 0; --s) {
      w += kOnset[rng() % std::size(kOnset)];
      w += kVowel[rng() % std::size(kVowel)];
      w += kCoda[rng() % std::size(kCoda)];
    }
    if (w.size() >= 2 && seen.insert(w).second) words_.push_back(w);
  }
  auto draw = [&](size_t n) {
    std::vector<uint32_t> v(n);
    for (auto& w : v) w = static_cast<uint32_t>(500 + rng() % (words_.size() - 500));
    return v;
  };
  for (size_t t = 0; t < topics; ++t) topic_words_.push_back(draw(kTopicWords));
  for (size_t s = 0; s < topics * kSub; ++s) sub_words_.push_back(draw(kSubWords));
  general_ = Sampler(Zipf(words_.size(), 1.0));
  topic_ = Sampler(Zipf(topics, 1.0));
  sub_ = Sampler(Zipf(kSub, 1.0));
  topic_rank_ = Sampler(Zipf(kTopicWords, 0.8));
  sub_rank_ = Sampler(Zipf(kSubWords, 0.8));
}

inline const std::string& NoteGen::Word(std::mt19937_64& rng, size_t topic, size_t sub, size_t other) const {
  double u = std::uniform_real_distribution<double>(0, 1)(rng);
  if (u < 0.45) return words_[general_(rng)];
  if (u < 0.70) return words_[topic_words_[topic][topic_rank_(rng)]];
  if (u < 0.90) return words_[sub_words_[topic * kSub + sub][sub_rank_(rng)]];
  return words_[topic_words_[other][topic_rank_(rng)]];
}

inline const std::string& NoteGen::Focused(std::mt19937_64& rng, size_t topic, size_t sub) const {
  if (rng() % 2) return words_[topic_words_[topic][rng() % 30]];
  return words_[sub_words_[topic * kSub + sub][rng() % 30]];
}

inline SynthNote NoteGen::Note(uint64_t i) const {
  std::mt19937_64 rng(i * 0x9E3779B97F4A7C15ull + 1);
  size_t topic = topic_(rng), sub = sub_(rng), other = topic_(rng);
  size_t words = static_cast<size_t>(200.0 * std::pow(10.0, std::uniform_real_distribution<double>(0, 1)(rng)));
  SynthNote n;
  for (size_t w = 2 + rng() % 3; w > 0; --w) n.title += (n.title.empty() ? "" : " ") + Focused(rng, topic, sub);
  n.title[0] = static_cast<char>(n.title[0] - 'a' + 'A');
  n.tag = "topic" + std::to_string(topic);
  n.body.reserve(words * 8);
  size_t sentence_left = 0, sentences_left = 3 + rng() % 4, paragraphs_left = 1 + rng() % 3;
  for (size_t w = 0; w < words; ++w) {
    bool first = sentence_left == 0;
    if (first) sentence_left = 6 + rng() % 13;
    size_t at = n.body.size();
    n.body += Word(rng, topic, sub, other);
    if (first) n.body[at] = static_cast<char>(n.body[at] - 'a' + 'A');
    if (--sentence_left > 0) {
      n.body += ' ';
      continue;
    }
    n.body += '.';
    if (--sentences_left > 0) {
      n.body += ' ';
      continue;
    }
    n.body += "\n\n";
    sentences_left = 3 + rng() % 4;
    if (--paragraphs_left > 0 || w + 50 > words) continue;
    paragraphs_left = 2 + rng() % 3;
    std::string h;
    for (size_t k = 2 + rng() % 3; k > 0; --k) h += (h.empty() ? "" : " ") + Focused(rng, topic, sub);
    n.headings.emplace_back(h, n.body.size());
    n.body += h + "\n\n";
  }
  return n;
}

inline std::string NoteGen::Query(uint64_t i) const {
  std::mt19937_64 rng(i * 0xC2B2AE3D27D4EB4Full + 7);
  size_t topic = topic_(rng), sub = sub_(rng);
  std::string q;
  for (size_t w = 1 + rng() % 4; w > 0; --w) q += (q.empty() ? "" : " ") + Focused(rng, topic, sub);
  return q;
}

// Pins the calling thread to cpu (if >= 0) while alive; restores its mask after.
class Pin {
 public:
  explicit Pin(int cpu) {
    if (cpu < 0) return;
    pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    active_ = pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
  }
  ~Pin() {
    if (active_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
  }

 private:
  cpu_set_t saved_;
  bool active_ = false;
};

}  // namespace folio::testing
