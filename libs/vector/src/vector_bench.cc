// vector-bench: query latency/QPS and recall@10 of ExactIndex vs HnswIndex on
// four kinds of data, and HashedEmbedder throughput. A benchmark driver, not
// a test.
//
//   vector-bench [--quick] [--data LIST] [--sizes LIST] [--dims LIST]
//                [--m LIST] [--efc LIST] [--ef LIST] [--queries N] [--pin CPU] [--csv FILE]
//
// Data (unit vectors; queries are fresh draws from the same distribution):
//   clustered  n/100 equal clusters, noise of norm 0.8: easy (recall ~1 at any ef).
//   mixture    the realistic middle: n/50 clusters with power-law sizes (the
//              largest holds 1/8-1/6 of the points) under n/500 super-topics;
//              noise of norm ~1.0 (as large as the centre): 0.8 in 16 latent
//              directions per cluster (real embeddings have an intrinsic
//              dimension of tens, not hundreds) and 0.6 isotropic.
//   uniform    i.i.d. gaussian directions: the pathological case for HNSW.
//   notes      what folio-search indexes by default: HashedEmbedder (stop-word
//              IDF, as the service sets it) of synthetic notes (see NoteGen).
//              Two query sets: held-out notes ("related", the related-notes
//              workload) and 1-4 word queries ("words", the search box).
// Latency is single-threaded, one query at a time (on --pin CPU if given);
// HNSW builds use every hardware thread, as HnswIndex::Build does. Per HNSW
// setting: recall@10 against the exact top 10, and "scores": the sum of the
// returned top-10 scores over the exact top-10's (1 = as similar; near-ties
// lower recall but not this).
// Full run: every kind at 10k x 384 and 1024 and at 100k x 384; mixture also
// at 100k x 1024. --quick: 384-d only, 100k for mixture and notes.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "folio/testing/synthetic_notes.h"
#include "folio/vector/embedder.h"
#include "folio/vector/index.h"

using namespace folio::vector;
using folio::testing::NoteGen;
using folio::testing::Pin;
using folio::testing::Sampler;
using folio::testing::SynthNote;
using folio::testing::Zipf;
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

// Runs fn(i) for i in [0, n) on every hardware thread (data preparation only).
template <typename Fn>
void Parallel(size_t n, Fn&& fn) {
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (size_t i = t; i < n; i += threads) fn(i);
    });
  }
  for (auto& th : pool) th.join();
}

// What folio-search embeds for a note (search's NoteEmbedText): title twice, tags, text.
std::string EmbedText(const SynthNote& n) { return n.title + "\n" + n.title + "\n" + n.tag + " \n" + n.body; }

// ---- Data sets.

struct Data {
  size_t n = 0, dim = 0;
  std::vector<float> base;                                      // n x dim
  std::vector<std::pair<std::string, std::vector<float>>> queries;  // name, nq x dim
};

// nc centres under nc/10 super-topics; cluster sizes ~ Zipf(1) (power law).
// Each cluster gets kFacets latent directions from a pool of kPool.
constexpr size_t kFacets = 16, kPool = 1024;
struct Mixture {
  size_t dim, nc;
  std::vector<float> centres, pool;
  std::vector<uint32_t> facets;  // nc x kFacets
  Sampler pick;
};

Mixture MakeMixture(size_t n, size_t dim, std::mt19937_64& rng) {
  std::normal_distribution<float> g;
  Mixture m{dim, std::max<size_t>(n / 50, 20), {}, {}, {}, {}};
  size_t ns = std::max<size_t>(m.nc / 10, 4);
  std::vector<float> supers(ns * dim);
  for (float& x : supers) x = g(rng);
  for (size_t s = 0; s < ns; ++s) Normalise(&supers[s * dim], dim);
  m.centres.resize(m.nc * dim);
  for (size_t c = 0; c < m.nc; ++c) {
    const float* s = &supers[(c % ns) * dim];
    for (size_t i = 0; i < dim; ++i) m.centres[c * dim + i] = s[i] + 0.9f * g(rng) / std::sqrt(float(dim));
    Normalise(&m.centres[c * dim], dim);
  }
  m.pool.resize(kPool * dim);
  for (float& x : m.pool) x = g(rng);
  for (size_t p = 0; p < kPool; ++p) Normalise(&m.pool[p * dim], dim);
  m.facets.resize(m.nc * kFacets);
  for (auto& f : m.facets) f = static_cast<uint32_t>(rng() % kPool);
  m.pick = Sampler(Zipf(m.nc, 1.0));
  return m;
}

void MixturePoint(const Mixture& m, std::mt19937_64& rng, float* v) {
  std::normal_distribution<float> g;
  size_t c = m.pick(rng), dim = m.dim;
  const float iso = 0.6f / std::sqrt(float(dim)), lat = 0.8f / std::sqrt(float(kFacets));
  for (size_t i = 0; i < dim; ++i) v[i] = m.centres[c * dim + i] + iso * g(rng);
  for (size_t f = 0; f < kFacets; ++f) {
    float z = lat * g(rng);
    const float* d = &m.pool[m.facets[c * kFacets + f] * dim];
    for (size_t i = 0; i < dim; ++i) v[i] += z * d[i];
  }
  Normalise(v, dim);
}

void ClusteredPoint(const std::vector<float>& centres, size_t dim, std::mt19937_64& rng, float* v) {
  std::normal_distribution<float> g;
  size_t c = rng() % (centres.size() / dim);
  float sigma = 0.8f / std::sqrt(static_cast<float>(dim));
  for (size_t i = 0; i < dim; ++i) v[i] = centres[c * dim + i] + sigma * g(rng);
  Normalise(v, dim);
}

Data MakeGaussian(const std::string& kind, size_t n, size_t dim, size_t nq) {
  std::mt19937_64 rng(n * 31 + dim);
  std::normal_distribution<float> g;
  Data d{n, dim, std::vector<float>(n * dim), {{"same", std::vector<float>(nq * dim)}}};
  std::vector<float> centres(std::max<size_t>(n / 100, 10) * dim);
  for (float& x : centres) x = g(rng);
  for (size_t c = 0; c < centres.size() / dim; ++c) Normalise(&centres[c * dim], dim);
  Mixture mix = MakeMixture(n, dim, rng);
  auto point = [&](float* v) {
    if (kind == "clustered") return ClusteredPoint(centres, dim, rng, v);
    if (kind == "mixture") return MixturePoint(mix, rng, v);
    for (size_t i = 0; i < dim; ++i) v[i] = g(rng);
    Normalise(v, dim);
  };
  for (size_t r = 0; r < n; ++r) point(&d.base[r * dim]);
  for (size_t r = 0; r < nq; ++r) point(&d.queries[0].second[r * dim]);
  return d;
}

HashedEmbedder ServiceEmbedder(size_t dim) {
  HashedEmbedder e(dim);
  e.SetIdf(StopWordIdf(), kStopWordIdfName);
  return e;
}

// Embeds text(i) for i in [0, n) into out (n x dim), on every thread.
template <typename TextFn>
void EmbedAll(size_t n, size_t dim, TextFn&& text, float* out) {
  HashedEmbedder e = ServiceEmbedder(dim);
  Parallel(n, [&](size_t i) {
    std::vector<float> v;
    if (!e.EmbedOne(text(i), &v).ok()) std::abort();
    std::copy(v.begin(), v.end(), out + i * dim);
  });
}

Data MakeNotes(size_t n, size_t dim, size_t nq) {
  NoteGen gen(std::max<size_t>(n / 200, 16), 42);
  Data d{n, dim, std::vector<float>(n * dim),
         {{"related", std::vector<float>(nq * dim)}, {"words", std::vector<float>(nq * dim)}}};
  EmbedAll(n, dim, [&](size_t i) { return EmbedText(gen.Note(i)); }, d.base.data());
  EmbedAll(nq, dim, [&](size_t i) { return EmbedText(gen.Note(n + i)); }, d.queries[0].second.data());
  EmbedAll(nq, dim, [&](size_t i) { return gen.Query(i); }, d.queries[1].second.data());
  return d;
}

// ---- Measurement.

struct Latency {
  double p50_us, p99_us, qps;
};


template <typename Fn>
Latency Measure(size_t nq, int cpu, Fn&& fn) {
  Pin pin(cpu);
  for (size_t i = 0; i < std::min<size_t>(nq, 20); ++i) fn(i);  // warm up
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

struct Config {
  std::vector<size_t> ms = {HnswOptions{}.m}, efcs = {HnswOptions{}.ef_construction};
  std::vector<size_t> efs = {32, 64, 128, 192, 256};
  size_t nq = 1000;
  int cpu = -1;
  FILE* csv = nullptr;
  std::string date;
};

// One output line (and CSV row). m == 0 marks the exact index.
struct Result {
  const char* index;
  size_t m, efc;
  double build_s;
  size_t ef;
  Latency l;
  double recall;
  double score_ratio;  // sum of the top-10 scores / the exact top-10's: 1 = as similar
};

void Row(const Config& c, const std::string& kind, const std::string& qset, const Data& d, const Result& r) {
  auto opt = [](size_t x) { return x ? std::to_string(x) : std::string("-"); };
  std::printf("%-9s %-7s %7zu %5zu  %-5s %3s %4s %8.1f %5s %8.0f %8.0f %8.0f %7.3f %6.3f\n", kind.c_str(),
              qset.c_str(), d.n, d.dim, r.index, opt(r.m).c_str(), opt(r.efc).c_str(), r.build_s, opt(r.ef).c_str(),
              r.l.p50_us, r.l.p99_us, r.l.qps, r.recall, r.score_ratio);
  std::fflush(stdout);
  if (!c.csv) return;
  std::fprintf(c.csv, "%s,%s,%s,%zu,%zu,%s,%zu,%zu,%.2f,%zu,%.1f,%.1f,%.1f,%.4f,%.4f,\n", c.date.c_str(), kind.c_str(),
               qset.c_str(), d.n, d.dim, r.index, r.m, r.efc, r.build_s, r.ef, r.l.p50_us, r.l.p99_us, r.l.qps,
               r.recall, r.score_ratio);
  std::fflush(c.csv);
}

std::span<const float> Rowspan(const std::vector<float>& v, size_t i, size_t dim) {
  return std::span<const float>(v.data() + i * dim, dim);
}

// Per query: the exact top-10 ids and the sum of their scores.
struct Truth {
  std::vector<std::set<uint64_t>> ids;
  std::vector<double> score_sum;
};

// Builds an HNSW graph per (M, ef_construction) and sweeps ef_search over
// every query set.
void BenchHnsw(const Config& c, const std::string& kind, const Data& d, const std::vector<Truth>& truth) {
  std::vector<uint64_t> ids(d.n);
  for (size_t i = 0; i < d.n; ++i) ids[i] = i;
  for (size_t m : c.ms) {
    for (size_t efc : c.efcs) {
      HnswOptions o;
      o.m = m;
      o.ef_construction = efc;
      HnswIndex hnsw(d.dim, o);
      auto t0 = Clock::now();
      hnsw.Build(ids, d.base);
      double build_s = Seconds(t0, Clock::now());
      for (size_t q = 0; q < d.queries.size(); ++q) {
        const auto& queries = d.queries[q].second;
        for (size_t ef : c.efs) {
          hnsw.set_ef_search(ef);
          size_t found = 0;
          double rel = 0;
          for (size_t i = 0; i < c.nq; ++i) {
            double sum = 0;
            for (auto& h : hnsw.Search(Rowspan(queries, i, d.dim), 10)) {
              found += truth[q].ids[i].count(h.id);
              sum += h.score;
            }
            rel += truth[q].score_sum[i] > 0 ? sum / truth[q].score_sum[i] : 1.0;
          }
          double recall = static_cast<double>(found) / static_cast<double>(c.nq * 10);
          Latency l = Measure(c.nq, c.cpu, [&](size_t i) { (void)hnsw.Search(Rowspan(queries, i, d.dim), 10); });
          Row(c, kind, d.queries[q].first, d, {"hnsw", m, efc, build_s, ef, l, recall, rel / double(c.nq)});
        }
      }
    }
  }
}

void BenchData(const Config& c, const std::string& kind, const Data& d) {
  std::vector<Truth> truth;
  {
    ExactIndex exact(d.dim);
    auto t0 = Clock::now();
    for (size_t i = 0; i < d.n; ++i) {
      if (!exact.Upsert(i, Rowspan(d.base, i, d.dim)).ok()) std::abort();
    }
    double build_s = Seconds(t0, Clock::now());
    for (const auto& [qset, queries] : d.queries) {
      Truth& t = truth.emplace_back(Truth{std::vector<std::set<uint64_t>>(c.nq), std::vector<double>(c.nq)});
      Parallel(c.nq, [&](size_t i) {
        for (auto& h : exact.Search(Rowspan(queries, i, d.dim), 10)) {
          t.ids[i].insert(h.id);
          t.score_sum[i] += h.score;
        }
      });
      size_t nq = d.n * d.dim >= 30'000'000 ? std::min<size_t>(c.nq, 300) : c.nq;
      Latency l = Measure(nq, c.cpu, [&](size_t i) { (void)exact.Search(Rowspan(queries, i, d.dim), 10); });
      Row(c, kind, qset, d, {"exact", 0, 0, build_s, 0, l, 1.0, 1.0});
    }
  }
  BenchHnsw(c, kind, d, truth);
}

// Single-thread throughput of the service's embedder on synthetic notes.
void BenchEmbedder(const Config& c) {
  NoteGen gen(50, 42);
  const size_t kNotes = 2000;
  std::vector<std::string> notes(kNotes);
  size_t bytes = 0;
  for (size_t i = 0; i < kNotes; ++i) bytes += (notes[i] = EmbedText(gen.Note(i))).size();
  std::vector<std::string_view> views(notes.begin(), notes.end());
  for (size_t dim : {384, 1024}) {
    HashedEmbedder e = ServiceEmbedder(dim);
    std::vector<std::vector<float>> out;
    Pin pin(c.cpu);
    auto t0 = Clock::now();
    if (!e.Embed(views, &out).ok()) std::abort();
    double s = Seconds(t0, Clock::now());
    std::printf("HashedEmbedder dim %4zu: %zu notes (avg %zu B) in %.2f s: %.0f notes/s, %.1f MB/s (1 thread)\n", dim,
                kNotes, bytes / kNotes, s, static_cast<double>(kNotes) / s, static_cast<double>(bytes) / s / 1e6);
    if (c.csv) {
      std::fprintf(c.csv, "%s,embedder,notes,%zu,%zu,hashed,0,0,%.2f,0,0,0,%.1f,0,0,%.2f\n", c.date.c_str(), kNotes,
                   dim, s, static_cast<double>(kNotes) / s, static_cast<double>(bytes) / s / 1e6);
    }
  }
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

std::vector<size_t> SplitNumbers(const std::string& s) {
  std::vector<size_t> out;
  for (const auto& x : Split(s)) out.push_back(std::strtoul(x.c_str(), nullptr, 10));
  return out;
}

// The default matrix leaves out the slowest, least telling runs (see the file comment).
bool Skip(const std::string& kind, size_t n, size_t dim, bool quick) {
  if (n < 100000) return false;
  if (quick) return kind == "clustered" || kind == "uniform";
  return dim > 384 && kind != "mixture";
}

int Usage() {
  std::fprintf(stderr,
               "usage: vector-bench [--quick] [--data clustered,mixture,uniform,notes] [--sizes 10000,100000]\n"
               "                    [--dims 384,1024] [--m LIST] [--efc LIST] [--ef 32,64,128,192,256]\n"
               "                    [--queries 1000] [--pin CPU] [--csv FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  bool quick = false;
  std::vector<std::string> kinds = {"clustered", "mixture", "uniform", "notes"};
  std::vector<size_t> sizes = {10000, 100000}, dims = {384, 1024};
  bool sizes_set = false, dims_set = false;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has = i + 1 < argc;
    if (a == "--quick") {
      quick = true;
    } else if (a == "--data" && has) {
      kinds = Split(argv[++i]);
    } else if (a == "--sizes" && has) {
      sizes = SplitNumbers(argv[++i]), sizes_set = true;
    } else if (a == "--dims" && has) {
      dims = SplitNumbers(argv[++i]), dims_set = true;
    } else if (a == "--m" && has) {
      c.ms = SplitNumbers(argv[++i]);
    } else if (a == "--efc" && has) {
      c.efcs = SplitNumbers(argv[++i]);
    } else if (a == "--ef" && has) {
      c.efs = SplitNumbers(argv[++i]);
    } else if (a == "--queries" && has) {
      c.nq = std::max<size_t>(std::strtoul(argv[++i], nullptr, 10), 10);
    } else if (a == "--pin" && has) {
      c.cpu = std::atoi(argv[++i]);
    } else if (a == "--csv" && has) {
      csv = argv[++i];
    } else {
      return Usage();
    }
  }
  for (const auto& k : kinds) {
    if (k != "clustered" && k != "mixture" && k != "uniform" && k != "notes") return Usage();
  }
  if (quick && !dims_set) dims = {384};
  if (!csv.empty()) {
    bool fresh = !std::filesystem::exists(csv);
    c.csv = std::fopen(csv.c_str(), "a");
    if (!c.csv) {
      std::perror(csv.c_str());
      return 1;
    }
    if (fresh) {
      std::fprintf(c.csv, "date,data,queries,n,dim,index,m,efc,build_s,ef,p50_us,p99_us,qps,recall,score_ratio,"
                          "mb_per_s\n");
    }
  }
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  c.date = date;
  std::printf("vector-bench: %u hardware threads; k=10; %zu queries; query thread pinned to CPU %d (-1: not)\n",
              std::thread::hardware_concurrency(), c.nq, c.cpu);
  BenchEmbedder(c);
  std::printf("\n%-9s %-7s %7s %5s  %-5s %3s %4s %8s %5s %8s %8s %8s %7s %6s\n", "data", "queries", "n", "dim",
              "index", "M", "efc", "build_s", "ef", "p50_us", "p99_us", "qps", "recall", "scores");
  for (const auto& kind : kinds) {
    for (size_t n : sizes) {
      for (size_t dim : dims) {
        if (!sizes_set && !dims_set && Skip(kind, n, dim, quick)) continue;
        Data d = kind == "notes" ? MakeNotes(n, dim, c.nq) : MakeGaussian(kind, n, dim, c.nq);
        BenchData(c, kind, d);
      }
    }
  }
  if (c.csv) std::fclose(c.csv);
  return 0;
}
