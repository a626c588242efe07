// Engine in-process on real SQLite files: the incremental related lists
// against a from-scratch computation, what Apply publishes against what it
// stores, restarts without embedding, and queries running while a batch
// switches an index to HNSW.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "config.h"
#include "engine.h"
#include "folio/core/thread_pool.h"
#include "folio/testing/synthetic_notes.h"
#include "folio/testing/testing.h"
#include "folio/vector/embedder.h"

using namespace folio;
using folio::testing::NoteGen;

namespace {

constexpr char kSite[] = "docs";

// The built-in embedder, counting what it is asked to embed.
class CountingEmbedder : public vector::Embedder {
 public:
  explicit CountingEmbedder(size_t dim) : inner_(dim) {}
  size_t dim() const override { return inner_.dim(); }
  Status Embed(std::span<const std::string_view> texts, std::vector<std::vector<float>>* out) override {
    texts_ += texts.size();
    return inner_.Embed(texts, out);
  }
  std::string Describe() const override { return inner_.Describe(); }
  size_t texts() const { return texts_.load(); }

 private:
  vector::HashedEmbedder inner_;
  std::atomic<size_t> texts_{0};
};

bus::NoteEvent Event(const NoteGen& gen, uint64_t i, uint64_t content, int64_t version) {
  testing::SynthNote n = gen.Note(content);
  bus::NoteEvent e;
  e.site = kSite;
  e.path = "n/" + std::to_string(i) + ".md";
  e.url = "/n/" + std::to_string(i);
  e.version = version;
  e.title = n.title + " " + std::to_string(i);
  e.tags = {n.tag};
  for (auto& [h, off] : n.headings) e.sections.push_back({h, "h" + std::to_string(off), static_cast<uint32_t>(off)});
  e.text = std::move(n.body);
  return e;
}

bus::NoteEvent Deleted(uint64_t i, int64_t version) {
  bus::NoteEvent e;
  e.site = kSite;
  e.path = "n/" + std::to_string(i) + ".md";
  e.url = "/n/" + std::to_string(i);
  e.version = version;
  e.deleted = true;
  return e;
}

using Lists = std::map<std::string, std::vector<std::string>>;  // path -> related paths

std::vector<std::string> RelatedPaths(search::Engine& e, const std::string& path) {
  bus::SearchReply r = e.Related({kSite, path, 10});
  std::vector<std::string> out;
  for (const bus::SearchHit& h : r.hits) out.push_back(h.path);
  return out;
}

// Applies one batch; folds the published updates into *published (as ingest would).
void ApplyAll(search::Engine& e, const std::vector<bus::NoteEvent>& batch, Lists* published) {
  search::ApplyStats stats;
  auto updates = e.Apply(batch, &stats);
  REQUIRE(updates.ok());
  for (const bus::RelatedUpdate& u : *updates) {
    for (const bus::RelatedList& l : u.lists) {
      auto& list = (*published)[l.path];
      list.clear();
      for (const bus::RelatedEntry& r : l.related) list.push_back(r.path);
    }
  }
  REQUIRE(e.MarkPublished(*updates).ok());
}

search::EngineOptions Options(const std::string& dir, size_t hnsw_threshold) {
  search::EngineOptions o;
  o.data_dir = dir;
  o.hnsw_threshold = hnsw_threshold;
  o.chunk_chars = 800;  // most synthetic notes get sections too
  o.embed_batch = 16;   // several batches per Apply, so the pool embeds in parallel
  return o;
}

// folio-search's config from these flags (the program name added).
Result<search::SearchConfig> ReadConfig(std::vector<const char*> args) {
  Flags flags("folio-search", "test");
  search::AddSearchFlags(&flags);
  args.insert(args.begin(), "folio-search");
  REQUIRE(flags.Parse(static_cast<int>(args.size()), args.data()).ok());
  return search::ReadSearchConfig(flags, ServiceBasics{});
}

}  // namespace

TEST_CASE("engine: incremental related lists agree with a full recomputation, and every change is published") {
  NoteGen gen(6, 7);
  ThreadPool pool(2);
  CountingEmbedder embedder(128);
  testing::TempDir dir_a, dir_b;
  auto a = search::Engine::Open(Options(dir_a.path(), 100000), &embedder, &pool);
  REQUIRE(a.ok());

  // Import 240 notes in batches of 40 (the later ones take the incremental path).
  const uint64_t n = 240;
  std::map<uint64_t, bus::NoteEvent> state;  // the vault as it ends up
  Lists published;
  for (uint64_t b = 0; b < n; b += 40) {
    std::vector<bus::NoteEvent> batch;
    for (uint64_t i = b; i < b + 40; ++i) batch.push_back(state[i] = Event(gen, i, i, 1));
    ApplyAll(**a, batch, &published);
  }
  CHECK((*a)->notes() == n);
  CHECK((*a)->vectors() > n);  // sections too

  // 45 single changes: edits (a note takes another's content), deletes, new notes.
  uint64_t next = n;
  for (int step = 0; step < 45; ++step) {
    bus::NoteEvent e;
    if (step % 3 == 0) {
      e = Event(gen, (step * 37) % n, 1000 + step, 2);
    } else if (step % 3 == 1 && state.count((step * 53) % n)) {
      e = Deleted((step * 53) % n, 3);
    } else {
      e = Event(gen, next, next, 1);
      ++next;
    }
    if (e.deleted) {
      state.erase((step * 53) % n);
    } else {
      state[std::stoull(e.path.substr(2))] = e;
    }
    ApplyAll(**a, {e}, &published);
  }
  REQUIRE((*a)->notes() == state.size());

  // The same vault imported at once: every list computed from scratch.
  auto b = search::Engine::Open(Options(dir_b.path(), 100000), &embedder, &pool);
  REQUIRE(b.ok());
  std::vector<bus::NoteEvent> all;
  for (auto& [i, e] : state) all.push_back(e);
  Lists published_b;
  ApplyAll(**b, all, &published_b);

  size_t lists = 0, differ = 0, unpublished = 0;
  for (auto& [i, e] : state) {
    std::vector<std::string> got = RelatedPaths(**a, e.path);
    std::vector<std::string> want = RelatedPaths(**b, e.path);
    ++lists;
    differ += got != want;
    // What Apply published is what the engine serves (deleted notes are
    // gone from both; an empty list may never have been published).
    auto p = published.find(e.path);
    const std::vector<std::string> empty;
    if ((p == published.end() ? empty : p->second) != got) ++unpublished;
  }
  MESSAGE(differ, " of ", lists, " incrementally maintained lists differ from a full recomputation");
  CHECK(unpublished == 0);
  CHECK(differ == 0);  // exact indexes: the incremental lists are exact
  CHECK(lists > 200);
}

TEST_CASE("engine: a restart loads vectors and lists without embedding anything") {
  NoteGen gen(5, 11);
  ThreadPool pool(2);
  for (size_t threshold : {size_t{100000}, size_t{150}}) {  // exact indexes, then HNSW ones
    CAPTURE(threshold);
    testing::TempDir d;
    Lists published, before;
    std::vector<std::vector<bus::SearchHit>> searches;
    size_t vectors = 0;
    {
      CountingEmbedder embedder(96);
      auto e = search::Engine::Open(Options(d.path(), threshold), &embedder, &pool);
      REQUIRE(e.ok());
      std::vector<bus::NoteEvent> batch;
      for (uint64_t i = 0; i < 200; ++i) batch.push_back(Event(gen, i, i, 1));
      ApplyAll(**e, batch, &published);
      CHECK(embedder.texts() > 200);
      vectors = (*e)->vectors();
      for (uint64_t i = 0; i < 200; ++i) before[batch[i].path] = RelatedPaths(**e, batch[i].path);
      for (uint64_t i = 0; i < 10; ++i) {
        searches.push_back((*e)->Search({kSite, gen.Query(i), 10, bus::SearchMode::kHybrid}).hits);
      }
    }
    CountingEmbedder embedder(96);
    auto e = search::Engine::Open(Options(d.path(), threshold), &embedder, &pool);
    REQUIRE(e.ok());
    CHECK(embedder.texts() == 0);
    CHECK((*e)->notes() == 200);
    CHECK((*e)->vectors() == vectors);
    for (auto& [path, list] : before) CHECK(RelatedPaths(**e, path) == list);
    if (threshold > 1000) {  // exact: the same answers; HNSW graphs are rebuilt, so may differ slightly
      for (uint64_t i = 0; i < 10; ++i) {
        auto hits = (*e)->Search({kSite, gen.Query(i), 10, bus::SearchMode::kHybrid}).hits;
        REQUIRE(hits.size() == searches[i].size());
        for (size_t j = 0; j < hits.size(); ++j) CHECK(hits[j].path == searches[i][j].path);
      }
    }
    CHECK(embedder.texts() == (threshold > 1000 ? 10u : 0u));  // only the queries above
  }
}

TEST_CASE("engine: queries keep running while a batch switches the indexes to HNSW") {
  NoteGen gen(8, 3);
  ThreadPool pool(2);
  CountingEmbedder embedder(64);
  testing::TempDir dir;
  auto e = search::Engine::Open(Options(dir.path(), 120), &embedder, &pool);
  REQUIRE(e.ok());
  std::atomic<bool> stop{false};
  std::atomic<size_t> queries{0}, errors{0};
  std::thread reader([&] {
    for (uint64_t i = 0; !stop.load(); ++i) {
      bus::SearchReply r = (*e)->Search({kSite, gen.Query(i), 10, bus::SearchMode::kHybrid});
      errors += !r.error.empty();
      (void)(*e)->Related({kSite, "n/" + std::to_string(i % 300) + ".md", 10});
      ++queries;
    }
  });
  Lists published;
  for (uint64_t b = 0; b < 300; b += 100) {
    std::vector<bus::NoteEvent> batch;
    for (uint64_t i = b; i < b + 100; ++i) batch.push_back(Event(gen, i, i, 1));
    ApplyAll(**e, batch, &published);
  }
  stop = true;
  reader.join();
  CHECK(errors == 0);
  CHECK(queries > 0);
  CHECK((*e)->notes() == 300);
  // A passage of a note finds the note first in vector mode (through its
  // section's vector or its own).
  size_t found = 0;
  for (uint64_t i = 0; i < 300; i += 7) {
    bus::NoteEvent ev = Event(gen, i, i, 1);
    std::string passage = ev.text.substr(ev.text.size() / 3, 400);
    auto hits = (*e)->Search({kSite, passage, 3, bus::SearchMode::kVector}).hits;
    found += !hits.empty() && hits[0].path == ev.path;
  }
  CHECK(found * 10 >= 43 * 9);  // >= 90% of the 43 probes
  CHECK(published.size() >= 290);
}

// Issue 13, bug 12: a nonsense query found "20 results" in hybrid mode, the
// nearest vectors of unrelated notes. Without lexical support a vector hit
// must be similar enough to be shown; a real query keeps its results.
TEST_CASE("engine: a nonsense query finds nothing in hybrid mode; real queries still find notes") {
  testing::TempDir dir;
  CountingEmbedder embedder(384);  // the service default --embed-dim
  ThreadPool pool(2);
  auto e = search::Engine::Open(Options(dir.path(), 20000), &embedder, &pool);
  REQUIRE(e.ok());
  NoteGen gen(5, 7);
  Lists published;
  std::vector<bus::NoteEvent> batch;
  for (uint64_t i = 0; i < 200; ++i) batch.push_back(Event(gen, i, i, 1));
  ApplyAll(**e, batch, &published);
  for (const char* nonsense : {"zzqxvw", "qwertyuiop", "blorf snazzle", "xkcdzz"}) {
    CAPTURE(nonsense);
    bus::SearchReply r = (*e)->Search({kSite, nonsense, 20, bus::SearchMode::kHybrid});
    CHECK(r.error.empty());
    CHECK(r.hits.empty());
    // Vector mode still answers with the nearest notes, as asked.
    CHECK(!(*e)->Search({kSite, nonsense, 20, bus::SearchMode::kVector}).hits.empty());
  }
  // A query made of a note's words finds that note first, in every mode.
  bus::NoteEvent ev = Event(gen, 42, 42, 1);
  std::string passage = ev.text.substr(ev.text.size() / 3, 200);
  for (bus::SearchMode mode : {bus::SearchMode::kHybrid, bus::SearchMode::kText}) {
    auto hits = (*e)->Search({kSite, passage, 5, mode}).hits;
    REQUIRE(!hits.empty());
    CHECK(hits[0].path == ev.path);
  }
}

TEST_CASE("config: --min-vector-score reaches the engine; a value outside 0..1 is refused with its name") {
  auto read = [](const char* value) {
    Flags flags("folio-search", "test");
    search::AddSearchFlags(&flags);
    const char* argv[] = {"folio-search", "--min-vector-score", value};
    REQUIRE(flags.Parse(3, argv).ok());
    return search::ReadSearchConfig(flags, ServiceBasics{});
  };
  auto ok = read("0.35");
  REQUIRE(ok.ok());
  CHECK(ok->engine.hybrid_min_vector_score == doctest::Approx(0.35));
  for (const char* bad : {"1.5", "-0.1", "x", "0.2x", ""}) {
    CAPTURE(std::string(bad));
    auto r = read(bad);
    REQUIRE(!r.ok());
    CHECK(r.status().message().find("--min-vector-score must be a number in 0..1") != std::string::npos);
  }
  Flags defaults("folio-search", "test");
  search::AddSearchFlags(&defaults);
  const char* argv[] = {"folio-search"};
  REQUIRE(defaults.Parse(1, argv).ok());
  CHECK(search::ReadSearchConfig(defaults, ServiceBasics{})->engine.hybrid_min_vector_score == doctest::Approx(0.2));
}

TEST_CASE("config: --language, --field-weights, --vector-weight and --feedback-weight reach the engine; bad values are refused by name") {
  auto read = ReadConfig;
  auto defaults = read({});
  REQUIRE(defaults.ok());
  CHECK(defaults->engine.language == "en");
  CHECK(defaults->engine.rank.weight[search::kTitle] == doctest::Approx(14));
  CHECK(defaults->engine.fusion_vector_weight == doctest::Approx(0.25));
  CHECK(defaults->engine.feedback_weight == 0);
  auto set = read({"--language", "de-AT", "--field-weights", "title:3,body:2", "--vector-weight", "0.5",
                   "--feedback-weight", "0.3"});
  REQUIRE(set.ok());
  CHECK(set->engine.language == "de");
  CHECK(set->engine.rank.weight[search::kTitle] == doctest::Approx(3));
  CHECK(set->engine.rank.weight[search::kBody] == doctest::Approx(2));
  CHECK(set->engine.rank.weight[search::kAliases] == doctest::Approx(5));  // untouched
  CHECK(set->engine.fusion_vector_weight == doctest::Approx(0.5));
  CHECK(set->engine.feedback_weight == doctest::Approx(0.3));
  struct Bad {
    std::vector<const char*> args;
    const char* says;
  };
  for (const Bad& b : std::vector<Bad>{{{"--language", "klingon"}, "--language"},
                                       {{"--field-weights", "titel:3"}, "--field-weights"},
                                       {{"--field-weights", "title:-1"}, "--field-weights"},
                                       {{"--field-weights", "title"}, "--field-weights"},
                                       {{"--vector-weight", "x"}, "--vector-weight"},
                                       {{"--vector-weight", "11"}, "--vector-weight"},
                                       {{"--feedback-weight", "2"}, "--feedback-weight"}}) {
    CAPTURE(b.says);
    auto r = read(b.args);
    REQUIRE(!r.ok());
    CHECK(r.status().message().find(b.says) != std::string::npos);
  }
}

TEST_CASE("config: --replica-id names the notes consumer; the default is the hostname made a valid name") {
  auto read = ReadConfig;
  auto a = read({"--replica-id", "search_a-1"});
  REQUIRE(a.ok());
  CHECK(a->replica_id == "search_a-1");
  CHECK(search::SearchDurable(a->replica_id) == "search-search_a-1");
  for (const char* bad : {"a.b", "a b", "a*", "x/y"}) {
    CAPTURE(std::string(bad));
    auto r = read({"--replica-id", bad});
    REQUIRE(!r.ok());
    CHECK(r.status().message().find("--replica-id") != std::string::npos);
  }
  CHECK(!read({"--replica-id", std::string(65, 'a').c_str()}).ok());
  auto d = read({});
  REQUIRE(d.ok());
  REQUIRE(!d->replica_id.empty());
  for (char ch : d->replica_id) CHECK((std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_'));
}

TEST_CASE("engine: a restored mark forgets the site's versions and sends every related list again") {
  NoteGen gen(5, 11);
  ThreadPool pool(2);
  testing::TempDir d;
  CountingEmbedder embedder(96);
  auto e = search::Engine::Open(Options(d.path(), 100000), &embedder, &pool);
  REQUIRE(e.ok());
  Lists published;
  std::vector<bus::NoteEvent> batch;
  for (uint64_t i = 0; i < 30; ++i) batch.push_back(Event(gen, i, i, 5));
  ApplyAll(**e, batch, &published);

  // Before the mark, an older version is a stale redelivery: skipped.
  search::ApplyStats stats;
  auto stale = (*e)->Apply(std::vector<bus::NoteEvent>{Event(gen, 0, 100, 3)}, &stats);
  REQUIRE(stale.ok());
  CHECK(stats.unchanged == 1);
  CHECK(stale->empty());

  // The mark, then a change at a version below the forgotten ones, in one
  // batch: every list of the site comes back, and the change applies.
  std::vector<bus::NoteEvent> restored{bus::RestoredEvent(kSite, 2), Event(gen, 0, 100, 3)};
  auto updates = (*e)->Apply(restored, &stats);
  REQUIRE(updates.ok());
  std::set<std::string> listed;
  for (const bus::RelatedUpdate& u : *updates) {
    CHECK(u.site == kSite);
    for (const bus::RelatedList& l : u.lists) listed.insert(l.path);
  }
  CHECK(listed.size() == 30);
  CHECK(stats.embedded_notes == 1);
  REQUIRE((*e)->MarkPublished(*updates).ok());
  // Its version is stored: the same event again is a no-op.
  updates = (*e)->Apply(std::vector<bus::NoteEvent>{Event(gen, 0, 100, 3)}, &stats);
  REQUIRE(updates.ok());
  CHECK(stats.unchanged == 1);
  CHECK(stats.embedded_notes == 0);

  // A mark for another site changes nothing here.
  updates = (*e)->Apply(std::vector<bus::NoteEvent>{bus::RestoredEvent("other", 1)}, &stats);
  REQUIRE(updates.ok());
  CHECK(updates->empty());
}
