// search-bench: folio-search's Engine in-process on a temp data dir, fed and
// queried the way the service does it. A benchmark driver, not a test.
//
//   search-bench [--notes N] [--quick] [--dim D] [--queries Q] [--changes C]
//                [--pin CPU] [--csv FILE]
//
// 1. Generates N synthetic notes (default 10,000; --quick 2,000): title,
//    a tag, 200-2000 words from topic vocabularies with headings (the model
//    of folio/testing/synthetic_notes.h, shared with vector-bench).
// 2. Embedder alone: the built-in HashedEmbedder (stop-word IDF, as
//    folio-search sets it) over every note's embed text, one thread.
// 3. Import: the notes as NoteEvent JSON in batches of 256, each decoded,
//    Apply()'d, its related updates encoded and MarkPublished() (the
//    consumer's work minus NATS). Reports embed, commit and related time,
//    and (a probe thread timing Related() lookups) how long Apply's write
//    lock keeps queries waiting.
// 4. One changed note, C times (default 20): Apply of one event (embed the
//    note and its chunks, commit, update the related lists it touches).
// 5. Queries, one thread, one at a time (on --pin CPU if given): Search in
//    text, vector and hybrid modes (1-4 word queries), and Related() lookups.
//    For comparison, a related list computed per page view by brute force
//    (exact top-10 cosine over the note vectors, what trip2g does).
// The engine's thread pool (related lists) uses every CPU, as in the service.
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "engine.h"
#include "folio/bus/note_schema.h"
#include "folio/bus/search_schema.h"
#include "folio/core/log.h"
#include "folio/core/memory.h"
#include "folio/core/thread_pool.h"
#include "folio/testing/synthetic_notes.h"
#include "folio/vector/embedder.h"
#include "folio/vector/index.h"

using namespace folio;
using folio::testing::NoteGen;
using folio::testing::Pin;
using folio::testing::SynthNote;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kBatch = 256;  // folio-search's --batch default
constexpr char kSite[] = "bench";

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "search-bench: %s: %s\n", what.c_str(), s.message().c_str());
  std::exit(1);
}


std::string Slug(std::string_view s) {
  std::string out;
  for (char c : s) out += c == ' ' ? '-' : static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return out;
}

// The event ingest would publish for note i.
bus::NoteEvent MakeEvent(const NoteGen& gen, size_t i) {
  SynthNote n = gen.Note(i);
  bus::NoteEvent e;
  e.site = kSite;
  e.path = n.tag + "/" + n.title + " " + std::to_string(i) + ".md";
  e.url = "/" + n.tag + "/" + Slug(n.title) + "-" + std::to_string(i);
  e.version = 1;
  e.title = std::move(n.title);
  e.tags = {n.tag};
  for (auto& [h, off] : n.headings) e.sections.push_back({h, Slug(h), static_cast<uint32_t>(off)});
  e.text = std::move(n.body);
  return e;
}

// ---- Measurement.


struct Latency {
  double p50_us = 0, p99_us = 0, qps = 0;
};

template <typename Fn>
Latency Measure(size_t n, int cpu, Fn&& fn) {
  Pin pin(cpu);
  for (size_t i = 0; i < std::min<size_t>(n, 20); ++i) fn(i);  // warm up
  std::vector<double> t(n);
  auto start = Clock::now();
  for (size_t i = 0; i < n; ++i) {
    auto a = Clock::now();
    fn(i);
    t[i] = Seconds(a, Clock::now()) * 1e6;
  }
  double total = Seconds(start, Clock::now());
  std::sort(t.begin(), t.end());
  return {t[n / 2], t[std::min(n - 1, n * 99 / 100)], static_cast<double>(n) / total};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double RssMb() { return static_cast<double>(ResidentBytes()) / (1024.0 * 1024.0); }

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/search-bench-XXXXXX";
    if (!mkdtemp(tmpl.data())) Die("mkdtemp", Status::Unavailable(std::strerror(errno)));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Options {
  size_t notes = 10000, dim = 384, queries = 1000, changes = 20;
  int cpu = -1;
  std::string csv;
};

// Everything one run reports (and writes as one CSV row).
struct Report {
  size_t notes = 0, dim = 0, texts = 0, lists = 0, merged_lists = 0, changed_lists = 0;
  double note_mb = 0, publish_mb = 0, embedder_s = 0;
  double import_s = 0, apply_s = 0, embed_s = 0, commit_s = 0, related_s = 0, publish_s = 0;
  double stall_s = 0, stall_max_ms = 0;  // queries waiting for Apply's write lock during the import
  double last_batch_related_ms = 0, one_ms = 0, one_embed_ms = 0, one_related_ms = 0, one_lists = 0;
  Latency text, vec, hybrid, related, brute;
  // Hybrid queries the way readers also type them (issue 27): with a typo
  // (one letter of each word of 6+ letters dropped), and as a question
  // ("how do i ... in the ...": common words around the topic words).
  Latency typo, natural;
  double rss_mb = 0;  // growth of this process's RSS over the import (the engine's memory)
};

// Step 2: the embedder alone, one thread; returns the note vectors for the
// brute-force comparison.
std::vector<float> BenchEmbedder(const std::vector<bus::NoteEvent>& events, const Options& o, Report* r) {
  vector::HashedEmbedder e(o.dim);
  e.SetIdf(vector::StopWordIdf(), vector::kStopWordIdfName);
  std::vector<std::string> texts;
  for (const auto& ev : events) texts.push_back(search::NoteEmbedText(ev));
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<std::vector<float>> out;
  Pin pin(o.cpu);
  auto t0 = Clock::now();
  if (Status s = e.Embed(views, &out); !s.ok()) Die("embed", s);
  r->embedder_s = Seconds(t0, Clock::now());
  std::vector<float> flat;
  flat.reserve(events.size() * o.dim);
  for (const auto& v : out) flat.insert(flat.end(), v.begin(), v.end());
  return flat;
}

// The consumer's work for one batch minus NATS: decode, Apply, encode the
// related updates, MarkPublished.
search::ApplyStats ApplyBatch(search::Engine* engine, const std::vector<std::string>& json, Report* r) {
  std::vector<bus::NoteEvent> events(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    if (Status s = bus::DecodeNoteEvent(json[i], &events[i]); !s.ok()) Die("decode", s);
  }
  search::ApplyStats stats;
  auto t0 = Clock::now();
  auto updates = engine->Apply(events, &stats);
  if (!updates.ok()) Die("apply", updates.status());
  if (r) r->apply_s += Seconds(t0, Clock::now());
  t0 = Clock::now();
  size_t bytes = 0;
  for (const auto& u : *updates) bytes += bus::EncodeRelatedUpdate(u).size();
  if (Status s = engine->MarkPublished(*updates); !s.ok()) Die("mark published", s);
  if (r) {
    r->publish_s += Seconds(t0, Clock::now());
    r->publish_mb += static_cast<double>(bytes) / 1e6;
  }
  return stats;
}

// Runs Related() lookups every millisecond on another thread until Finish():
// a lookup is a few microseconds, so its latency is the wait for the engine's
// lock, i.e. how long Apply's write lock stalls queries.
class StallProbe {
 public:
  StallProbe(search::Engine* engine, std::string path)
      : thread_([this, engine, path] {
          while (!stop_) {
            auto t0 = Clock::now();
            (void)engine->Related({kSite, path, 10});
            us_.push_back(Seconds(t0, Clock::now()) * 1e6);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        }) {}
  ~StallProbe() {
    if (thread_.joinable()) Finish();
  }
  // Stops the thread; returns {seconds spent in stalls over 100 ms, longest stall in ms}.
  std::pair<double, double> Finish() {
    stop_ = true;
    thread_.join();
    double total = 0, longest = 0;
    for (double us : us_) {
      if (us > 100e3) total += us / 1e6;
      longest = std::max(longest, us / 1e3);
    }
    return {total, longest};
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<double> us_;
  std::thread thread_;  // last: starts after the members it uses
};

void Import(search::Engine* engine, const std::vector<bus::NoteEvent>& events, Report* r) {
  std::vector<std::vector<std::string>> batches;
  for (size_t b = 0; b < events.size(); b += kBatch) {
    auto& batch = batches.emplace_back();
    for (size_t i = b; i < std::min(events.size(), b + kBatch); ++i) batch.push_back(bus::EncodeNoteEvent(events[i]));
  }
  StallProbe probe(engine, events[0].path);
  auto t0 = Clock::now();
  for (const auto& batch : batches) {
    search::ApplyStats st = ApplyBatch(engine, batch, r);
    r->texts += st.embedded_texts;
    r->embed_s += st.embed_ms / 1e3;
    r->commit_s += st.commit_ms / 1e3;
    r->related_s += st.related_ms / 1e3;
    r->lists += st.related_recomputed;
    r->merged_lists += st.related_merged;
    r->changed_lists += st.related_changed;
    r->last_batch_related_ms = st.related_ms;
  }
  r->import_s = Seconds(t0, Clock::now());
  std::tie(r->stall_s, r->stall_max_ms) = probe.Finish();
}

// Step 4: one edited note per Apply, o.changes times.
void OneChanged(search::Engine* engine, const NoteGen& gen, const std::vector<bus::NoteEvent>& events,
                const Options& o, Report* r) {
  std::vector<double> total, embed, related, lists;
  for (size_t c = 0; c < o.changes; ++c) {
    bus::NoteEvent e = events[(c * 7919 + 13) % events.size()];
    e.version = 2 + static_cast<int64_t>(c);
    e.text += "\n\n" + gen.Query(100000 + c) + " " + gen.Query(200000 + c) + ".";
    auto t0 = Clock::now();
    search::ApplyStats st = ApplyBatch(engine, {bus::EncodeNoteEvent(e)}, nullptr);
    total.push_back(Seconds(t0, Clock::now()) * 1e3);
    embed.push_back(st.embed_ms);
    related.push_back(st.related_ms);
    lists.push_back(static_cast<double>(st.related_recomputed + st.related_merged));
  }
  r->one_ms = Median(total);
  r->one_embed_ms = Median(embed);
  r->one_related_ms = Median(related);
  r->one_lists = Median(lists);
}

void Queries(search::Engine* engine, const NoteGen& gen, const std::vector<bus::NoteEvent>& events,
             const std::vector<float>& vectors, const Options& o, Report* r) {
  std::vector<bus::SearchQuery> qs(o.queries);
  for (size_t i = 0; i < qs.size(); ++i) qs[i] = {kSite, gen.Query(i), 10, bus::SearchMode::kHybrid};
  size_t empty = 0;
  auto run = [&](bus::SearchMode mode) {
    return Measure(qs.size(), o.cpu, [&](size_t i) {
      bus::SearchQuery q = qs[i];
      q.mode = mode;
      empty += engine->Search(q).hits.empty();
    });
  };
  r->text = run(bus::SearchMode::kText);
  r->vec = run(bus::SearchMode::kVector);
  r->hybrid = run(bus::SearchMode::kHybrid);
  std::vector<bus::SearchQuery> plain = qs;
  for (size_t i = 0; i < qs.size(); ++i) {
    std::string typo, word;
    std::string q = plain[i].q + " ";
    for (char c : q) {
      if (c != ' ') {
        word.push_back(c);
        continue;
      }
      if (word.size() >= 6) word.erase(word.size() / 2, 1);
      if (!typo.empty()) typo.push_back(' ');
      typo += word;
      word.clear();
    }
    qs[i].q = typo;
  }
  r->typo = run(bus::SearchMode::kHybrid);
  for (size_t i = 0; i < qs.size(); ++i) qs[i].q = "how do i use " + plain[i].q + " in the notes";
  r->natural = run(bus::SearchMode::kHybrid);
  qs = plain;
  if (empty > qs.size() / 10) std::fprintf(stderr, "search-bench: warning: %zu queries found nothing\n", empty);
  const size_t n = events.size();
  r->related = Measure(std::max<size_t>(o.queries * 10, 1000), o.cpu, [&](size_t i) {
    bus::RelatedQuery q{kSite, events[(i * 7919) % n].path, 10};
    if (engine->Related(q).hits.empty() && i == 0) std::fprintf(stderr, "search-bench: empty related list\n");
  });
  vector::ExactIndex exact(o.dim);
  for (size_t i = 0; i < n; ++i) {
    if (Status s = exact.Upsert(i, std::span<const float>(&vectors[i * o.dim], o.dim)); !s.ok()) Die("upsert", s);
  }
  r->brute = Measure(std::min<size_t>(o.queries, 500), o.cpu, [&](size_t i) {
    (void)exact.Search(std::span<const float>(&vectors[((i * 7919) % n) * o.dim], o.dim), 11);
  });
}

void Print(const Report& r) {
  auto line = [](const char* what, const Latency& l) {
    std::printf("  %-34s p50 %8.1f us  p99 %8.1f us  %8.0f q/s\n", what, l.p50_us, l.p99_us, l.qps);
  };
  std::printf("notes %zu (%.1f MB of text), dim %zu\n", r.notes, r.note_mb, r.dim);
  std::printf("embedder alone (1 thread)           %.2f s: %.0f notes/s, %.1f MB/s\n", r.embedder_s,
              static_cast<double>(r.notes) / r.embedder_s, r.note_mb / r.embedder_s);
  std::printf("import (batches of %zu)             %.2f s: %.0f notes/s\n", kBatch, r.import_s,
              static_cast<double>(r.notes) / r.import_s);
  std::printf("  embed (%zu texts: notes + chunks)  %.2f s\n", r.texts, r.embed_s);
  std::printf("  commit (SQLite + FTS5)             %.2f s\n", r.commit_s);
  std::printf("  rest of Apply (lookups, hashing, index inserts under the write lock)  %.2f s\n",
              r.apply_s - r.embed_s - r.commit_s - r.related_s);
  std::printf("  related lists (%zu searched, %zu merged, %zu changed)  %.2f s (last batch %.0f ms)\n", r.lists,
              r.merged_lists, r.changed_lists, r.related_s, r.last_batch_related_ms);
  std::printf("  encode updates (%.1f MB) + MarkPublished  %.2f s\n", r.publish_mb, r.publish_s);
  std::printf("  queries blocked by Apply's write lock: longest %.0f ms, %.1f s in blocks > 100 ms\n",
              r.stall_max_ms, r.stall_s);
  std::printf("one changed note (median)           %.1f ms (embed %.1f ms, related %.1f ms, %.0f lists)\n", r.one_ms,
              r.one_embed_ms, r.one_related_ms, r.one_lists);
  line("Search text", r.text);
  line("Search vector", r.vec);
  line("Search hybrid", r.hybrid);
  line("Search hybrid, typos", r.typo);
  line("Search hybrid, questions", r.natural);
  line("Related() lookup", r.related);
  line("brute-force related per view", r.brute);
  std::printf("RSS growth over the import           %.0f MB\n", r.rss_mb);
}

void WriteCsv(const std::string& path, const Report& r) {
  bool fresh = !std::filesystem::exists(path);
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) return std::perror(path.c_str());
  if (fresh) {
    std::fprintf(f, "date,notes,dim,note_mb,embedder_notes_per_s,embedder_mb_per_s,import_s,embed_s,texts,commit_s,"
                    "related_s,related_lists,other_apply_s,publish_s,one_changed_ms,one_embed_ms,one_related_ms,"
                    "text_p50_us,text_p99_us,text_qps,vector_p50_us,vector_p99_us,vector_qps,"
                    "hybrid_p50_us,hybrid_p99_us,hybrid_qps,related_p50_us,related_p99_us,related_qps,"
                    "brute_p50_us,brute_p99_us,rss_mb,stall_s,stall_max_ms,typo_p50_us,typo_p99_us,"
                    "question_p50_us,question_p99_us\n");
  }
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  double n = static_cast<double>(r.notes);
  std::fprintf(f, "%s,%zu,%zu,%.1f,%.0f,%.2f,%.3f,%.3f,%zu,%.3f,%.3f,%zu,%.3f,%.3f,%.2f,%.2f,%.2f,", date, r.notes,
               r.dim, r.note_mb, n / r.embedder_s, r.note_mb / r.embedder_s, r.import_s, r.embed_s, r.texts,
               r.commit_s, r.related_s, r.lists, r.apply_s - r.embed_s - r.commit_s - r.related_s, r.publish_s,
               r.one_ms, r.one_embed_ms, r.one_related_ms);
  for (const Latency* l : {&r.text, &r.vec, &r.hybrid, &r.related}) {
    std::fprintf(f, "%.1f,%.1f,%.0f,", l->p50_us, l->p99_us, l->qps);
  }
  std::fprintf(f, "%.1f,%.1f,%.0f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n", r.brute.p50_us, r.brute.p99_us, r.rss_mb,
               r.stall_s, r.stall_max_ms, r.typo.p50_us, r.typo.p99_us, r.natural.p50_us, r.natural.p99_us);
  std::fclose(f);
}

int Usage() {
  std::fprintf(stderr,
               "usage: search-bench [--notes N] [--quick] [--dim D] [--queries Q] [--changes C] [--pin CPU]"
               " [--csv FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool quick = false, notes_set = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has = i + 1 < argc;
    auto num = [&] { return static_cast<size_t>(std::strtoul(argv[++i], nullptr, 10)); };
    if (a == "--quick") {
      quick = true;
    } else if (a == "--notes" && has) {
      o.notes = num(), notes_set = true;
    } else if (a == "--dim" && has) {
      o.dim = num();
    } else if (a == "--queries" && has) {
      o.queries = num();
    } else if (a == "--changes" && has) {
      o.changes = num();
    } else if (a == "--pin" && has) {
      o.cpu = std::atoi(argv[++i]);
    } else if (a == "--csv" && has) {
      o.csv = argv[++i];
    } else {
      return Usage();
    }
  }
  if (quick) {
    if (!notes_set) o.notes = 2000;
    o.queries = std::min<size_t>(o.queries, 200);
    o.changes = std::min<size_t>(o.changes, 5);
  }
  if (o.notes < 10 || o.dim < 8 || o.queries < 10 || o.changes < 1) return Usage();
  log::Configure(log::Level::kWarn, log::Format::kText);

  Report r;
  r.notes = o.notes;
  r.dim = o.dim;
  NoteGen gen(std::max<size_t>(o.notes / 200, 16), 42);
  std::vector<bus::NoteEvent> events(o.notes);
  for (size_t i = 0; i < o.notes; ++i) {
    events[i] = MakeEvent(gen, i);
    r.note_mb += static_cast<double>(events[i].text.size()) / 1e6;
  }
  std::vector<float> vectors = BenchEmbedder(events, o, &r);

  TempDir dir;
  ThreadPool pool(0);
  vector::HashedEmbedder embedder(o.dim);
  embedder.SetIdf(vector::StopWordIdf(), vector::kStopWordIdfName);
  search::EngineOptions eo;
  eo.data_dir = dir.path();
  auto engine = search::Engine::Open(eo, &embedder, &pool);
  if (!engine.ok()) Die("open", engine.status());
  double rss0 = RssMb();
  Import(engine->get(), events, &r);
  r.rss_mb = RssMb() - rss0;
  OneChanged(engine->get(), gen, events, o, &r);
  Queries(engine->get(), gen, events, vectors, o, &r);
  Print(r);
  if (!o.csv.empty()) WriteCsv(o.csv, r);
  return 0;
}
