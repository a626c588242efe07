// vector-bench: query latency/QPS and recall of ExactIndex vs HnswIndex, and
// HashedEmbedder throughput. A benchmark driver, not a test.
//
//   vector-bench [--quick] [--uniform] [--queries N]
//
// Data: synthetic unit vectors. By default clustered (n/100 random centres,
// each point = normalise(centre + gaussian noise of norm ~0.8)), which is closer
// to real embeddings than uniform noise; --uniform uses i.i.d. gaussian
// directions (the hardest case for HNSW). Queries are fresh points from the
// same distribution. Latency is single-threaded, one query at a time.
// Full run: 10k and 100k x 384-d and 1024-d; --quick skips 100k x 1024-d.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "folio/vector/embedder.h"
#include "folio/vector/index.h"

using namespace folio::vector;
using Clock = std::chrono::steady_clock;

namespace {

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void Normalise(float* v, size_t dim) {
  double s = 0;
  for (size_t i = 0; i < dim; ++i) s += static_cast<double>(v[i]) * v[i];
  auto inv = static_cast<float>(1.0 / std::sqrt(s));
  for (size_t i = 0; i < dim; ++i) v[i] *= inv;
}

// n rows of dim floats, row-major.
std::vector<float> MakeData(size_t n, size_t dim, bool uniform, const std::vector<float>& centres,
                            std::mt19937_64& rng) {
  std::normal_distribution<float> g;
  size_t nc = centres.size() / dim;
  std::uniform_int_distribution<size_t> pick(0, nc - 1);
  float sigma = 0.8f / std::sqrt(static_cast<float>(dim));
  std::vector<float> out(n * dim);
  for (size_t r = 0; r < n; ++r) {
    float* v = out.data() + r * dim;
    if (uniform) {
      for (size_t i = 0; i < dim; ++i) v[i] = g(rng);
    } else {
      const float* c = centres.data() + pick(rng) * dim;
      for (size_t i = 0; i < dim; ++i) v[i] = c[i] + sigma * g(rng);
    }
    Normalise(v, dim);
  }
  return out;
}

struct Latency {
  double p50_us, p99_us, qps;
};

template <typename Fn>
Latency Measure(size_t nq, Fn&& fn) {
  std::vector<double> t(nq);
  auto start = Clock::now();
  for (size_t i = 0; i < nq; ++i) {
    auto a = Clock::now();
    fn(i);
    t[i] = Seconds(a, Clock::now()) * 1e6;
  }
  double total = Seconds(start, Clock::now());
  std::sort(t.begin(), t.end());
  return {t[nq / 2], t[std::min(nq - 1, nq * 99 / 100)], static_cast<double>(nq) / total};
}

void BenchIndexes(size_t n, size_t dim, bool uniform, size_t nq) {
  std::mt19937_64 rng(n * 31 + dim);
  std::vector<float> centres;
  if (!uniform) {
    size_t nc = std::max<size_t>(n / 100, 10);
    std::normal_distribution<float> g;
    centres.resize(nc * dim);
    for (float& x : centres) x = g(rng);
    for (size_t c = 0; c < nc; ++c) Normalise(centres.data() + c * dim, dim);
  } else {
    centres.resize(dim, 1.0f);
  }
  std::vector<float> data = MakeData(n, dim, uniform, centres, rng);
  std::vector<float> queries = MakeData(nq, dim, uniform, centres, rng);
  auto q = [&](size_t i) { return std::span<const float>(queries.data() + i * dim, dim); };
  std::vector<uint64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = i;

  ExactIndex exact(dim);
  auto t0 = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    if (!exact.Upsert(i, std::span<const float>(data.data() + i * dim, dim)).ok()) std::abort();
  }
  double exact_build = Seconds(t0, Clock::now());
  size_t exact_nq = std::min(nq, n * dim >= 50'000'000 ? size_t{200} : nq);
  std::vector<std::set<uint64_t>> truth(nq);
  for (size_t i = 0; i < nq; ++i) {
    for (auto& h : exact.Search(q(i), 10)) truth[i].insert(h.id);
  }
  Latency le = Measure(exact_nq, [&](size_t i) { (void)exact.Search(q(i), 10); });
  std::printf("%-9s %7zu %5zu  %-6s %8.1f %5s %9.0f %9.0f %9.0f %8s\n", uniform ? "uniform" : "clustered",
              n, dim, "exact", exact_build, "-", le.p50_us, le.p99_us, le.qps, "1.000");
  std::fflush(stdout);

  HnswIndex hnsw(dim);
  t0 = Clock::now();
  hnsw.Build(ids, data);
  double hnsw_build = Seconds(t0, Clock::now());
  for (size_t ef : {64, 128, 256}) {
    hnsw.set_ef_search(ef);
    size_t found = 0;
    for (size_t i = 0; i < nq; ++i) {
      for (auto& h : hnsw.Search(q(i), 10)) found += truth[i].count(h.id);
    }
    double recall = static_cast<double>(found) / static_cast<double>(nq * 10);
    Latency lh = Measure(nq, [&](size_t i) { (void)hnsw.Search(q(i), 10); });
    std::printf("%-9s %7zu %5zu  %-6s %8.1f %5zu %9.0f %9.0f %9.0f %8.3f\n", uniform ? "uniform" : "clustered",
                n, dim, "hnsw", hnsw_build, ef, lh.p50_us, lh.p99_us, lh.qps, recall);
    std::fflush(stdout);
  }
}

void BenchEmbedder() {
  // ~2 KB notes from a 5,000-word vocabulary with a Zipf-like draw.
  std::mt19937_64 rng(7);
  std::vector<std::string> vocab;
  std::uniform_int_distribution<int> len(2, 10), letter('a', 'z');
  for (int i = 0; i < 5000; ++i) {
    std::string w;
    for (int k = len(rng); k > 0; --k) w.push_back(static_cast<char>(letter(rng)));
    vocab.push_back(w);
  }
  std::vector<double> weights(vocab.size());
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 1.0 / static_cast<double>(i + 1);
  std::discrete_distribution<size_t> zipf(weights.begin(), weights.end());
  const size_t kNotes = 2000;
  std::vector<std::string> notes(kNotes);
  size_t bytes = 0;
  for (auto& note : notes) {
    while (note.size() < 2048) {
      note += vocab[zipf(rng)];
      note += (note.size() % 97 < 7) ? ". " : " ";
    }
    bytes += note.size();
  }
  std::vector<std::string_view> views(notes.begin(), notes.end());
  for (size_t dim : {384, 1024}) {
    HashedEmbedder e(dim);
    std::vector<std::vector<float>> out;
    auto t0 = Clock::now();
    if (!e.Embed(views, &out).ok()) std::abort();
    double s = Seconds(t0, Clock::now());
    std::printf("HashedEmbedder dim %4zu: %zu notes (avg %zu B) in %.2f s: %.0f notes/s, %.1f MB/s (1 thread)\n",
                dim, kNotes, bytes / kNotes, s, static_cast<double>(kNotes) / s,
                static_cast<double>(bytes) / s / 1e6);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, uniform = false;
  size_t nq = 1000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--uniform") == 0) {
      uniform = true;
    } else if (std::strcmp(argv[i], "--queries") == 0 && i + 1 < argc) {
      nq = std::max<size_t>(std::strtoul(argv[++i], nullptr, 10), 10);
    } else {
      std::fprintf(stderr, "usage: vector-bench [--quick] [--uniform] [--queries N]\n");
      return 2;
    }
  }
  std::printf("vector-bench: %u hardware threads; k=10; HNSW M=16 ef_construction=200; %zu queries\n",
              std::thread::hardware_concurrency(), nq);
  BenchEmbedder();
  std::printf("\n%-9s %7s %5s  %-6s %8s %5s %9s %9s %9s %8s\n", "data", "n", "dim", "index", "build_s",
              "ef", "p50_us", "p99_us", "qps", "recall");
  std::vector<std::pair<size_t, size_t>> configs = {{10000, 384}, {10000, 1024}, {100000, 384}};
  if (!quick) configs.emplace_back(100000, 1024);
  for (auto [n, dim] : configs) BenchIndexes(n, dim, uniform, nq);
  return 0;
}
