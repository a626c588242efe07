#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <unistd.h>

#include "folio/vector/chunk.h"
#include "folio/vector/embedder.h"
#include "folio/vector/index.h"

using namespace folio::vector;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

std::vector<float> Embed(HashedEmbedder& e, std::string_view text) {
  std::vector<float> v;
  REQUIRE(e.EmbedOne(text, &v).ok());
  return v;
}

float DotV(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(s);
}

double Norm(const std::vector<float>& a) { return std::sqrt(static_cast<double>(DotV(a, a))); }

std::vector<std::vector<float>> RandomUnit(size_t n, size_t dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  std::vector<std::vector<float>> out(n, std::vector<float>(dim));
  for (auto& v : out) {
    double s = 0;
    for (float& x : v) {
      x = g(rng);
      s += static_cast<double>(x) * x;
    }
    auto inv = static_cast<float>(1.0 / std::sqrt(s));
    for (float& x : v) x *= inv;
  }
  return out;
}

// Brute force reference: all scores (double-accumulated), sorted.
std::vector<Hit> BruteForce(const std::vector<std::pair<uint64_t, std::vector<float>>>& rows,
                            const std::vector<float>& q, size_t k) {
  std::vector<Hit> all;
  for (const auto& [id, v] : rows) all.push_back({id, DotV(q, v)});
  SortHits(&all);
  if (all.size() > k) all.resize(k);
  return all;
}

std::string TempPath(const char* name) {
  return std::string("/tmp/folio_vector_test_") + std::to_string(::getpid()) + "_" + name;
}

}  // namespace

// ---------------------------------------------------------------- embedder

TEST_CASE("embedder: deterministic, normalised, fixed hash") {
  HashedEmbedder e;
  CHECK(e.dim() == 384);
  auto a = Embed(e, "The quick brown fox jumps over the lazy dog.");
  auto b = Embed(e, "The quick brown fox jumps over the lazy dog.");
  REQUIRE(a.size() == 384);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  CHECK(std::abs(Norm(a) - 1.0) < 1e-5);
  // Pinned hash values: a change here changes every stored vector.
  CHECK(FeatureHash(FeatureKind::kWord, "fox") == 0xb8b165d776edc19eull);
  CHECK(FeatureHash(FeatureKind::kWordBigram, "brown", "fox") == 0xec4ccecf5eebc23cull);
  // Pinned vector prefix (the first non-zero buckets of the vector above).
  std::vector<std::pair<size_t, float>> nz;
  for (size_t i = 0; i < a.size() && nz.size() < 4; ++i) {
    if (a[i] != 0) nz.emplace_back(i, a[i]);
  }
  REQUIRE(nz.size() == 4);
  CHECK(nz[0].first == 2);
  CHECK(nz[1].first == 9);
  CHECK(nz[2].first == 10);
  CHECK(nz[3].first == 11);
  CHECK(nz[0].second == doctest::Approx(0.0671032).epsilon(1e-5));
  CHECK(nz[1].second == doctest::Approx(0.0671032).epsilon(1e-5));
  CHECK(nz[2].second == doctest::Approx(-0.0671032).epsilon(1e-5));
  CHECK(nz[3].second == doctest::Approx(0.0671032).epsilon(1e-5));
}

TEST_CASE("embedder: batch API, empty text is the zero vector, invalid UTF-8 fails") {
  HashedEmbedder e(64);
  std::vector<std::string_view> texts = {"hello world", "", "  ...!!  ", "Hello, World"};
  std::vector<std::vector<float>> out;
  REQUIRE(e.Embed(texts, &out).ok());
  REQUIRE(out.size() == 4);
  for (auto& v : out) CHECK(v.size() == 64);
  CHECK(std::all_of(out[1].begin(), out[1].end(), [](float x) { return x == 0; }));
  CHECK(std::all_of(out[2].begin(), out[2].end(), [](float x) { return x == 0; }));
  CHECK(out[0] == out[3]);  // case and punctuation do not matter
  std::vector<std::string_view> bad = {"ok", "\xff\xfe"};
  auto s = e.Embed(bad, &out);
  CHECK(s.code() == folio::Code::kInvalidArgument);
}

TEST_CASE("embedder: similar texts are closer than dissimilar ones") {
  HashedEmbedder e;
  auto a = Embed(e, "How to configure the nginx reverse proxy with TLS certificates");
  auto b = Embed(e, "Configuring an nginx reverse proxy: TLS certificate setup");
  auto c = Embed(e, "A recipe for sourdough bread with a long cold fermentation");
  CHECK(DotV(a, b) > DotV(a, c) + 0.2f);
  CHECK(DotV(a, b) > 0.3f);
}

TEST_CASE("embedder: CJK text gives non-zero vectors and ranks the matching doc first") {
  HashedEmbedder e;
  std::vector<std::string> docs = {
      "東京は日本の首都であり、世界最大の都市圏の一つです。",           // Tokyo
      "機械学習はデータからパターンを学習する人工知能の一分野です。",    // ML (ja)
      "今天天气很好，我们去公园散步吧。",                               // weather (zh)
      "한국어는 한국과 조선민주주의인민공화국의 공용어이다.",            // Korean
      "Sourdough bread needs a long fermentation.",
  };
  ExactIndex idx(e.dim());
  for (size_t i = 0; i < docs.size(); ++i) {
    auto v = Embed(e, docs[i]);
    CHECK(Norm(v) > 0.99);
    REQUIRE(idx.Upsert(i, v).ok());
  }
  CHECK(idx.Search(Embed(e, "日本の首都は東京"), 1)[0].id == 0);
  CHECK(idx.Search(Embed(e, "人工知能と機械学習"), 1)[0].id == 1);
  CHECK(idx.Search(Embed(e, "公园散步"), 1)[0].id == 2);
  CHECK(idx.Search(Embed(e, "한국어 공용어"), 1)[0].id == 3);
}

TEST_CASE("embedder: IDF weights change the vector; default idf = 1") {
  HashedEmbedder e(128);
  auto base = Embed(e, "the cat and the hat");
  e.SetIdf(std::unordered_map<std::string, float>{{"the", 0.0f}, {"and", 0.0f}});
  auto weighted = Embed(e, "the cat and the hat");
  CHECK(base != weighted);
  CHECK(std::abs(Norm(weighted) - 1.0) < 1e-5);
  e.SetIdf(HashedEmbedder::IdfFn());
  CHECK(Embed(e, "the cat and the hat") == base);
}

TEST_CASE("embedder: stop-word weights separate unrelated texts and name themselves") {
  HashedEmbedder plain(384), weighted(384);
  weighted.SetIdf(StopWordIdf(), kStopWordIdfName);
  CHECK(plain.Describe() == "hashed-384");
  CHECK(weighted.Describe() == "hashed-384+stopwords-1");
  const char* a = "the cat sat on the mat and then it was in the house with the dog";
  const char* b = "the market is open and the price of it was in the news with the bank";
  auto dot = [](const std::vector<float>& x, const std::vector<float>& y) {
    double s = 0;
    for (size_t i = 0; i < x.size(); ++i) s += static_cast<double>(x[i]) * y[i];
    return s;
  };
  double before = dot(Embed(plain, a), Embed(plain, b));
  double after = dot(Embed(weighted, a), Embed(weighted, b));
  CHECK(after < before / 2);
  // Content words still match as before.
  CHECK(dot(Embed(weighted, "the siamese cat purrs"), Embed(weighted, "a siamese cat and its purrs")) > 0.5);
  weighted.SetIdf(HashedEmbedder::IdfFn(), "ignored");
  CHECK(weighted.Describe() == "hashed-384");
}

// ---------------------------------------------------------------- chunking

TEST_CASE("chunk: tiny note is one chunk, blank note none") {
  auto c = ChunkByHeadings("# Title\n\nShort body.\n\n## Sub\n\nMore.\n");
  REQUIRE(c.size() == 1);
  CHECK(c[0].heading.empty());
  CHECK(c[0].body == "# Title\n\nShort body.\n\n## Sub\n\nMore.");
  CHECK(ChunkByHeadings("  \n\n").empty());
  CHECK(ChunkByHeadings("---\ntitle: x\n---\n").empty());
}

TEST_CASE("chunk: headings make sections with heading paths; fences are ignored") {
  std::string md =
      "---\ntitle: T\n---\n"
      "Intro paragraph.\n\n"
      "# Setup\n\nSetup text.\n\n"
      "## Linux\n\nLinux text.\n\n```sh\n# not a heading\necho hi\n```\n\n"
      "## macOS ##\n\nMac text.\n\n"
      "# Usage\n\nUsage text.\n";
  auto c = ChunkByHeadings(md, 80);
  REQUIRE(c.size() == 5);
  CHECK(c[0].heading == "");
  CHECK(c[0].body == "Intro paragraph.");
  CHECK(md.substr(c[0].offset, 5) == "Intro");
  CHECK(c[1].heading == "Setup");
  CHECK(c[1].body == "Setup text.");
  CHECK(c[2].heading == "Setup > Linux");
  CHECK(c[2].body.find("# not a heading") != std::string::npos);
  CHECK(c[3].heading == "Setup > macOS");
  CHECK(c[4].heading == "Usage");
  CHECK(c[4].EmbedText() == "Usage\n\nUsage text.");
}

TEST_CASE("chunk: long sections split at paragraph boundaries under max_chars") {
  std::string md = "# Long\n\n";
  for (int i = 0; i < 30; ++i) md += "Paragraph " + std::to_string(i) + " has some words in it.\n\n";
  md += "# Next\n\nTail.\n";
  auto c = ChunkByHeadings(md, 200);
  REQUIRE(c.size() > 3);
  size_t paras = 0;
  for (const auto& ch : c) {
    CHECK(ch.body.size() <= 200);
    if (ch.heading == "Long") {
      CHECK(ch.body.starts_with("Paragraph "));
      CHECK(ch.body.ends_with("in it."));  // never cut mid-paragraph
      paras += static_cast<size_t>(std::count(ch.body.begin(), ch.body.end(), '.'));
    }
  }
  CHECK(paras == 30);
  CHECK(c.back().heading == "Next");
  // One giant line is hard-split at UTF-8 boundaries.
  std::string giant = "# G\n\n";
  for (int i = 0; i < 500; ++i) giant += "é";
  giant += "\n\n# H\n\nx\n";
  for (const auto& ch : ChunkByHeadings(giant, 100)) {
    CHECK(ch.body.size() <= 100);
    CHECK((static_cast<unsigned char>(ch.body[0]) & 0xC0) != 0x80);
  }
}

// ---------------------------------------------------------------- exact index

TEST_CASE("exact: matches brute force; ordering and ties") {
  const size_t dim = 37;  // not a multiple of 8: exercises the tail loop
  auto vecs = RandomUnit(500, dim, 1);
  ExactIndex idx(dim);
  std::vector<std::pair<uint64_t, std::vector<float>>> rows;
  for (size_t i = 0; i < vecs.size(); ++i) {
    REQUIRE(idx.Upsert(i * 7 + 3, vecs[i]).ok());
    rows.emplace_back(i * 7 + 3, vecs[i]);
  }
  CHECK(idx.size() == 500);
  auto queries = RandomUnit(20, dim, 2);
  for (const auto& q : queries) {
    auto got = idx.Search(q, 10);
    auto want = BruteForce(rows, q, 10);
    REQUIRE(got.size() == 10);
    for (size_t i = 0; i < 10; ++i) {
      CHECK(got[i].id == want[i].id);
      CHECK(got[i].score == doctest::Approx(want[i].score).epsilon(1e-4));
      if (i) CHECK(got[i - 1].score >= got[i].score);
    }
  }
  // Ties broken by id ascending.
  ExactIndex t(4);
  std::vector<float> v = {1, 0, 0, 0};
  for (uint64_t id : {9, 2, 5}) REQUIRE(t.Upsert(id, v).ok());
  REQUIRE(t.Upsert(1, std::vector<float>{0, 1, 0, 0}).ok());
  auto hits = t.Search(v, 3);
  REQUIRE(hits.size() == 3);
  CHECK(hits[0].id == 2);
  CHECK(hits[1].id == 5);
  CHECK(hits[2].id == 9);
  CHECK(t.Search(v, 100).size() == 4);
  CHECK(t.Search(v, 0).empty());
  CHECK(t.Search(std::vector<float>{1, 0}, 3).empty());  // wrong dim
}

TEST_CASE("exact: upsert replaces, remove works, bad vectors rejected") {
  ExactIndex idx(3);
  REQUIRE(idx.Upsert(1, std::vector<float>{1, 0, 0}).ok());
  REQUIRE(idx.Upsert(2, std::vector<float>{0, 1, 0}).ok());
  REQUIRE(idx.Upsert(3, std::vector<float>{0, 0, 1}).ok());
  REQUIRE(idx.Upsert(1, std::vector<float>{0, 0, 1}).ok());  // replace
  CHECK(idx.size() == 3);
  auto hits = idx.Search(std::vector<float>{0, 0, 1}, 3);
  CHECK(hits[0] == Hit{1, 1.0f});
  CHECK(hits[1] == Hit{3, 1.0f});
  CHECK(idx.Remove(1));
  CHECK(!idx.Remove(1));
  CHECK(idx.size() == 2);
  hits = idx.Search(std::vector<float>{0, 0, 1}, 3);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].id == 3);
  CHECK(idx.Search(std::vector<float>{0, 1, 0}, 1)[0].id == 2);  // swapped row still right
  CHECK(idx.Upsert(4, std::vector<float>{1, 0}).code() == folio::Code::kInvalidArgument);
  CHECK(idx.Upsert(4, std::vector<float>{NAN, 0, 0}).code() == folio::Code::kInvalidArgument);
}

TEST_CASE("exact: save/load round trip; corrupt files rejected") {
  auto vecs = RandomUnit(100, 16, 3);
  ExactIndex idx(16);
  for (size_t i = 0; i < vecs.size(); ++i) REQUIRE(idx.Upsert(1000 + i, vecs[i]).ok());
  REQUIRE(idx.Remove(1050));
  std::string path = TempPath("exact.vec");
  REQUIRE(idx.Save(path).ok());
  ExactIndex loaded(16);
  REQUIRE(loaded.Load(path).ok());
  CHECK(loaded.size() == 99);
  CHECK(loaded.Search(vecs[7], 5) == idx.Search(vecs[7], 5));

  ExactIndex wrong_dim(8);
  CHECK(wrong_dim.Load(path).code() == folio::Code::kInvalidArgument);
  CHECK(loaded.Load(path + ".missing").code() == folio::Code::kNotFound);

  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (size_t pos : {size_t{0}, size_t{9}, size_t{30}, bytes.size() / 2, bytes.size() - 1}) {
    std::string bad = bytes;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x10);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    ExactIndex other(16);
    auto s = other.Load(path);
    CHECK_MESSAGE(s.code() == folio::Code::kInvalidArgument, "flipped byte ", pos);
    CHECK(other.size() == 0);
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 5);
  CHECK(loaded.Load(path).code() == folio::Code::kInvalidArgument);
  CHECK(loaded.size() == 99);  // unchanged on failure
  std::remove(path.c_str());
}

// ---------------------------------------------------------------- HNSW

namespace {
double RecallAt10(const VectorIndex& approx, const ExactIndex& exact,
                  const std::vector<std::vector<float>>& queries) {
  size_t found = 0, total = 0;
  for (const auto& q : queries) {
    auto want = exact.Search(q, 10);
    auto got = approx.Search(q, 10);
    std::set<uint64_t> w;
    for (auto& h : want) w.insert(h.id);
    for (auto& h : got) found += w.count(h.id);
    total += want.size();
  }
  return static_cast<double>(found) / static_cast<double>(total);
}
}  // namespace

TEST_CASE("hnsw: recall@10 against exact search >= 0.95") {
  const size_t n = kSanitized ? 3000 : 20000;
  const size_t dim = 64;
  auto vecs = RandomUnit(n, dim, 42);
  auto queries = RandomUnit(200, dim, 43);
  ExactIndex exact(dim);
  std::vector<uint64_t> ids;
  std::vector<float> data;
  for (size_t i = 0; i < n; ++i) {
    REQUIRE(exact.Upsert(i, vecs[i]).ok());
    ids.push_back(i);
    data.insert(data.end(), vecs[i].begin(), vecs[i].end());
  }
  HnswOptions o;
  o.ef_search = 256;  // random 64-d data is hard: ef 128 gives ~0.90, 256 ~0.97
  HnswIndex hnsw(dim, o);
  hnsw.Build(ids, data);
  CHECK(hnsw.size() == n);
  double recall = RecallAt10(hnsw, exact, queries);
  MESSAGE("HNSW recall@10 on ", n, " x ", dim, "-d random unit vectors, ef=256: ", recall);
  CHECK(recall >= 0.95);
  auto hits = hnsw.Search(queries[0], 10);
  for (size_t i = 1; i < hits.size(); ++i) CHECK(hits[i - 1].score >= hits[i].score);
}

TEST_CASE("hnsw: upserts, updates and deletes") {
  const size_t dim = 32;
  auto vecs = RandomUnit(3000, dim, 7);
  HnswOptions o;
  o.initial_capacity = 16;  // forces several resizes
  HnswIndex idx(dim, o);
  for (size_t i = 0; i < 2000; ++i) REQUIRE(idx.Upsert(i, vecs[i]).ok());
  CHECK(idx.size() == 2000);
  // Each stored vector finds itself.
  for (size_t i = 0; i < 2000; i += 97) CHECK(idx.Search(vecs[i], 1)[0].id == i);
  // Update: id 5 now holds vector 2500.
  REQUIRE(idx.Upsert(5, vecs[2500]).ok());
  CHECK(idx.size() == 2000);
  auto hits = idx.Search(vecs[2500], 1);
  CHECK(hits[0].id == 5);
  CHECK(hits[0].score == doctest::Approx(1.0f).epsilon(1e-4));
  CHECK(idx.Search(vecs[5], 1)[0].id != 5);
  // Delete.
  CHECK(idx.Remove(10));
  CHECK(!idx.Remove(10));
  CHECK(idx.size() == 1999);
  for (auto& h : idx.Search(vecs[10], 10)) CHECK(h.id != 10);
  // Re-add after delete.
  REQUIRE(idx.Upsert(10, vecs[10]).ok());
  CHECK(idx.Search(vecs[10], 1)[0].id == 10);
  // Many deletes trigger a compaction; results stay right.
  for (size_t i = 100; i < 1700; ++i) CHECK(idx.Remove(i));
  CHECK(idx.size() == 400);
  CHECK(idx.deleted_nodes() < 1024);
  for (size_t i = 0; i < 100; i += 9) {
    if (i == 5) continue;
    CHECK(idx.Search(vecs[i], 1)[0].id == i);
  }
  for (auto& h : idx.Search(vecs[150], 10)) CHECK((h.id < 100 || h.id >= 1700));
  // Save/load round trip (graph rebuilt on load).
  std::string path = TempPath("hnsw.vec");
  REQUIRE(idx.Save(path).ok());
  HnswIndex loaded(dim);
  REQUIRE(loaded.Load(path).ok());
  CHECK(loaded.size() == 400);
  CHECK(loaded.Search(vecs[2500], 1)[0].id == 5);
  std::remove(path.c_str());
}

TEST_CASE("auto: switches to HNSW above the threshold and keeps results") {
  const size_t dim = 24;
  auto vecs = RandomUnit(1200, dim, 11);
  AutoOptions o;
  o.threshold = 1000;
  AutoIndex idx(dim, o);
  ExactIndex exact(dim);
  for (size_t i = 0; i < 1000; ++i) {
    REQUIRE(idx.Upsert(i, vecs[i]).ok());
    REQUIRE(exact.Upsert(i, vecs[i]).ok());
  }
  CHECK(!idx.is_hnsw());
  CHECK(idx.Search(vecs[3], 10) == exact.Search(vecs[3], 10));
  for (size_t i = 1000; i < 1200; ++i) {
    REQUIRE(idx.Upsert(i, vecs[i]).ok());
    REQUIRE(exact.Upsert(i, vecs[i]).ok());
  }
  CHECK(idx.is_hnsw());
  CHECK(idx.size() == 1200);
  std::vector<std::vector<float>> queries(vecs.begin(), vecs.begin() + 100);
  CHECK(RecallAt10(idx, exact, queries) >= 0.95);
  for (size_t i = 0; i < 1200; i += 101) CHECK(idx.Search(vecs[i], 1)[0].id == i);
  CHECK(idx.Remove(0));
  CHECK(idx.Search(vecs[0], 1)[0].id != 0);
  // Load of a small file goes back to exact.
  std::string path = TempPath("auto.vec");
  REQUIRE(exact.Save(path).ok());
  AutoIndex small(dim, AutoOptions{.threshold = 5000, .hnsw = {}});
  REQUIRE(small.Load(path).ok());
  CHECK(!small.is_hnsw());
  CHECK(small.size() == 1200);
  std::remove(path.c_str());
}

namespace {
std::vector<float> Flatten(const std::vector<std::vector<float>>& rows, size_t from, size_t to) {
  std::vector<float> out;
  for (size_t i = from; i < to; ++i) out.insert(out.end(), rows[i].begin(), rows[i].end());
  return out;
}
}  // namespace

TEST_CASE("exact: SearchMany gives what Search gives, for every query block and row block") {
  // 3000 x 96-d rows span several 256 KiB row blocks; 70 queries span three
  // query blocks, the last one partial.
  const size_t dim = 96;
  auto vecs = RandomUnit(3000, dim, 21);
  ExactIndex idx(dim);
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < vecs.size(); ++i) ids.push_back(i * 7 + 1);
  REQUIRE(idx.UpsertMany(ids, Flatten(vecs, 0, vecs.size())).ok());
  auto queries = RandomUnit(70, dim, 22);
  for (size_t k : {size_t{1}, size_t{10}, size_t{5000}}) {
    auto many = idx.SearchMany(Flatten(queries, 0, queries.size()), k);
    REQUIRE(many.size() == queries.size());
    for (size_t q = 0; q < queries.size(); ++q) CHECK(many[q] == idx.Search(queries[q], k));
  }
  CHECK(idx.SearchMany(Flatten(queries, 0, 3), 0) == std::vector<std::vector<Hit>>(3));
  ExactIndex empty(dim);
  CHECK(empty.SearchMany(Flatten(queries, 0, 2), 10) == std::vector<std::vector<Hit>>(2));
  CHECK(empty.Search(queries[0], 10).empty());
}

TEST_CASE("batch upsert: same contents as one-by-one upserts; a bad row changes nothing") {
  const size_t dim = 32;
  auto vecs = RandomUnit(2600, dim, 31);
  std::vector<uint64_t> ids(2000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  HnswOptions ho;
  ho.initial_capacity = 16;  // UpsertMany grows the graph once
  ho.build_threads = 2;
  HnswIndex hnsw(dim, ho);
  ExactIndex exact(dim);
  AutoIndex autox(dim, AutoOptions{.threshold = 1500, .hnsw = ho});
  for (VectorIndex* idx : std::initializer_list<VectorIndex*>{&hnsw, &exact, &autox}) {
    REQUIRE(idx->UpsertMany(std::span(ids).first(1000), Flatten(vecs, 0, 1000)).ok());
    REQUIRE(idx->UpsertMany(std::span(ids).subspan(1000), Flatten(vecs, 1000, 2000)).ok());
    CHECK(idx->size() == 2000);
    // Replacing: ids 0..599 get vectors 2000..2599.
    REQUIRE(idx->UpsertMany(std::span(ids).first(600), Flatten(vecs, 2000, 2600)).ok());
    CHECK(idx->size() == 2000);
    for (size_t i = 0; i < 600; i += 37) {
      auto hit = idx->Search(vecs[2000 + i], 1);
      REQUIRE(hit.size() == 1);
      CHECK(hit[0].id == i);
      CHECK(idx->Get(i)[0] == vecs[2000 + i][0]);
    }
    for (size_t i = 600; i < 2000; i += 53) CHECK(idx->Search(vecs[i], 1)[0].id == i);
    // A NaN in the last row, or a short batch: rejected, nothing changed.
    auto bad = Flatten(vecs, 0, 3);
    bad.back() = std::nanf("");
    std::vector<uint64_t> new_ids = {5000, 5001, 5002};
    folio::Status s = idx->UpsertMany(new_ids, bad);
    CHECK(s.code() == folio::Code::kInvalidArgument);
    CHECK(s.message().find("vector 2") != std::string::npos);
    CHECK(idx->UpsertMany(new_ids, Flatten(vecs, 0, 2)).code() == folio::Code::kInvalidArgument);
    CHECK(idx->size() == 2000);
    CHECK(idx->Get(5000).empty());
  }
  CHECK(autox.is_hnsw());
  std::vector<std::vector<float>> queries(vecs.begin() + 600, vecs.begin() + 700);
  CHECK(RecallAt10(hnsw, exact, queries) >= 0.95);
}

TEST_CASE("auto: a graph prepared ahead is adopted, unless the index changed in between") {
  const size_t dim = 16;
  auto vecs = RandomUnit(1100, dim, 41);
  AutoIndex idx(dim, AutoOptions{.threshold = 1000, .hnsw = {}});
  std::vector<uint64_t> ids(900);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  REQUIRE(idx.UpsertMany(ids, Flatten(vecs, 0, 900)).ok());
  CHECK(!idx.WouldSwitch(100));
  CHECK(idx.WouldSwitch(101));

  // A mutation after PrepareHnsw voids it: still exact, and the change kept.
  auto stale = idx.PrepareHnsw();
  REQUIRE(stale.index != nullptr);
  CHECK(idx.Remove(3));
  CHECK(!idx.AdoptHnsw(std::move(stale)));
  CHECK(!idx.is_hnsw());

  auto fresh = idx.PrepareHnsw();
  CHECK(fresh.index->size() == 899);
  CHECK(idx.AdoptHnsw(std::move(fresh)));
  CHECK(idx.is_hnsw());
  CHECK(idx.size() == 899);
  CHECK(idx.Get(3).empty());
  for (size_t i = 4; i < 900; i += 61) CHECK(idx.Search(vecs[i], 1)[0].id == i);
  CHECK(!idx.WouldSwitch(1000));                   // already HNSW
  CHECK(idx.PrepareHnsw().index == nullptr);       // nothing to prepare
}
