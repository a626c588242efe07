#include "engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/core/text.h"
#include "fulltext.h"
#include "snippet.h"

namespace folio::search {
namespace {

using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Vector ids: a note's whole-note vector lives in Site::notes under its note
// id; chunk c (1..255) lives in Site::chunks under (note id << 8) | c.
constexpr size_t kMaxChunks = 255;

// Apply swaps a batch into the indexes in slices of about this many vectors
// under the exclusive lock (~10-50 ms of HNSW inserts on two cores).
constexpr size_t kSwapVectors = 256;
uint64_t ChunkId(int64_t note, int chunk) { return (static_cast<uint64_t>(note) << 8) | static_cast<uint64_t>(chunk); }
int64_t NoteOfChunk(uint64_t id) { return static_cast<int64_t>(id >> 8); }

// Vectors gathered for one index's UpsertMany: ids[i] has row i of data.
struct Rows {
  std::vector<uint64_t> ids;
  std::vector<float> data;
  void Add(uint64_t id, std::span<const float> v) {
    ids.push_back(id);
    data.insert(data.end(), v.begin(), v.end());
  }
};
using RowsByIndex = std::map<vector::AutoIndex*, Rows>;

struct TextChunk {
  std::string heading, anchor, text;
};

// Splits a long plain text into pieces of at most ~max_chars: first at the
// headings `sections` names, then (within a section) at line ends.
std::vector<TextChunk> ChunkText(std::string_view text, std::span<const bus::NoteSection> sections, size_t max_chars) {
  std::vector<TextChunk> out;
  if (text.size() <= max_chars) return out;
  struct Span {
    size_t begin, end;
    const bus::NoteSection* section;
  };
  std::vector<Span> spans;
  size_t pos = 0;
  const bus::NoteSection* current = nullptr;
  for (const bus::NoteSection& s : sections) {
    size_t off = std::min<size_t>(s.offset, text.size());
    if (off < pos) continue;  // out of order: ignore
    if (off > pos) spans.push_back({pos, off, current});
    pos = off;
    current = &s;
  }
  spans.push_back({pos, text.size(), current});
  for (const Span& sp : spans) {
    size_t b = sp.begin;
    while (b < sp.end && out.size() < kMaxChunks) {
      size_t e = sp.end;
      if (e - b > max_chars) {
        size_t cut = text.rfind('\n', b + max_chars);
        if (cut == std::string_view::npos || cut <= b) cut = text.rfind(' ', b + max_chars);
        if (cut == std::string_view::npos || cut <= b) cut = b + max_chars;
        while (cut > b && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
        if (cut <= b) cut = b + max_chars;
        e = cut;
      }
      std::string_view piece = text.substr(b, e - b);
      size_t first = piece.find_first_not_of(" \t\r\n");
      if (first != std::string_view::npos) {
        TextChunk c;
        if (sp.section) {
          c.heading = sp.section->heading;
          c.anchor = sp.section->anchor;
        }
        c.text = c.heading.empty() ? std::string(piece.substr(first)) : c.heading + "\n" + std::string(piece.substr(first));
        out.push_back(std::move(c));
      }
      b = e;
    }
  }
  return out;
}

std::string ContentHash(std::string_view embedder_id, const bus::NoteEvent& e, size_t chunk_chars) {
  std::string h;
  h.reserve(e.text.size() + 256);
  h.append(embedder_id).append("\x1f").append(std::to_string(chunk_chars)).append("\x1f");
  h.append(e.title).append("\x1f");
  for (const std::string& t : e.tags) h.append(t).append("\x1e");
  h.append("\x1f");
  for (const bus::NoteSection& s : e.sections) h.append(s.heading).append("\x1e").append(s.anchor).append("\x1e").append(std::to_string(s.offset)).append("\x1e");
  h.append("\x1f").append(e.text);
  return Sha256Hex(h);
}

// A note's related list from the hits of its own vector: itself and notes
// scoring under min_score left out, at most k.
std::vector<std::pair<int64_t, float>> RelatedFromHits(const std::vector<vector::Hit>& hits, int64_t self, size_t k,
                                                       float min_score) {
  std::vector<std::pair<int64_t, float>> out;
  for (const vector::Hit& h : hits) {
    if (static_cast<int64_t>(h.id) == self || h.score < min_score) continue;
    if (out.size() == k) break;
    out.emplace_back(static_cast<int64_t>(h.id), h.score);
  }
  return out;
}

// For each of ids, the k best hits of its note vector in `index` (none if
// it has no vector): blocks of queries run on the pool through SearchMany,
// which scans an exact index once per block. The caller holds the lock that
// keeps `index` unchanged.
std::vector<std::vector<vector::Hit>> SearchNotes(const vector::AutoIndex& index, const std::vector<int64_t>& ids,
                                                  size_t k, ThreadPool* pool) {
  constexpr size_t kBlock = 64;
  std::vector<std::vector<vector::Hit>> out(ids.size());
  const size_t blocks = (ids.size() + kBlock - 1) / kBlock;
  auto run = [&](size_t b) {
    std::vector<float> rows;
    std::vector<size_t> at;
    for (size_t i = b * kBlock; i < std::min(ids.size(), (b + 1) * kBlock); ++i) {
      auto v = index.Get(static_cast<uint64_t>(ids[i]));
      if (v.empty()) continue;
      rows.insert(rows.end(), v.begin(), v.end());
      at.push_back(i);
    }
    auto hits = index.SearchMany(rows, k);
    for (size_t j = 0; j < at.size() && j < hits.size(); ++j) out[at[j]] = std::move(hits[j]);
  };
  if (pool && blocks > 1) {
    pool->ParallelFor(blocks, run);
  } else {
    for (size_t b = 0; b < blocks; ++b) run(b);
  }
  return out;
}

bool SameNotes(const std::vector<std::pair<int64_t, float>>& a, const std::vector<std::pair<int64_t, float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].first != b[i].first) return false;
  }
  return true;
}

}  // namespace

struct Doc {
  std::string path, url, title;
  std::vector<std::pair<std::string, std::string>> chunks;  // chunk c -> (heading, anchor) at [c-1]
};

struct Engine::Site {
  Site(size_t dim, const vector::AutoOptions& note_options, const vector::AutoOptions& chunk_options)
      : notes(dim, note_options), chunks(dim, chunk_options) {}
  vector::AutoIndex notes;   // whole-note vectors by note id
  vector::AutoIndex chunks;  // chunk vectors by ChunkId
  std::unordered_map<int64_t, Doc> docs;
  std::unordered_map<std::string, int64_t> by_path;
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, float>>> related;  // last computed lists
  std::unordered_map<int64_t, std::unordered_set<int64_t>> listed_by;          // note -> lists naming it

  void SetList(int64_t id, std::vector<std::pair<int64_t, float>> list) {
    auto it = related.find(id);
    if (it != related.end()) {
      for (const auto& [other, score] : it->second) {
        auto lb = listed_by.find(other);
        if (lb != listed_by.end()) {
          lb->second.erase(id);
          if (lb->second.empty()) listed_by.erase(lb);
        }
      }
    }
    for (const auto& [other, score] : list) listed_by[other].insert(id);
    if (list.empty()) {
      if (it != related.end()) related.erase(it);
    } else {
      related[id] = std::move(list);
    }
  }
  float KthScore(int64_t id, size_t k) const {
    auto it = related.find(id);
    if (it == related.end() || it->second.size() < k) return -2.0f;  // list not full: anything enters
    return it->second.back().second;
  }
};

std::string NoteEmbedText(const bus::NoteEvent& e) {
  std::string s;
  s.reserve(e.title.size() * 2 + e.text.size() + 64);
  s.append(e.title).append("\n").append(e.title).append("\n");
  for (const std::string& t : e.tags) s.append(t).append(" ");
  s.append("\n").append(e.text);
  return s;
}

struct Engine::ReaderConn {
  explicit ReaderConn(std::unique_ptr<sqlite::Db> d) : db(std::move(d)), fts(db.get()) {}
  std::unique_ptr<sqlite::Db> db;
  FullTextIndex fts;
};

Engine::Engine(EngineOptions options, vector::Embedder* embedder, ThreadPool* pool, std::unique_ptr<SearchStore> store)
    : options_(std::move(options)), embedder_(embedder), pool_(pool), store_(std::move(store)),
      fts_(std::make_unique<FullTextIndex>(store_->db())) {
  embedder_id_ = embedder_->Describe() + "/" + std::to_string(embedder_->dim());
}

Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::Open(EngineOptions options, vector::Embedder* embedder, ThreadPool* pool) {
  auto store = SearchStore::Open(options.data_dir);
  if (!store.ok()) return store.status();
  std::unique_ptr<Engine> e(new Engine(std::move(options), embedder, pool, std::move(*store)));
  if (Status s = e->Load(); !s.ok()) return s;
  return e;
}

Engine::Site* Engine::SiteFor(const std::string& site) {
  auto it = sites_.find(site);
  if (it != sites_.end()) return it->second.get();
  vector::AutoOptions o;
  o.threshold = options_.hnsw_threshold;
  o.hnsw.ef_search = options_.hnsw_ef_search;
  vector::AutoOptions chunks = o;
  chunks.hnsw.ef_construction = options_.chunk_ef_construction;
  auto s = std::make_unique<Site>(embedder_->dim(), o, chunks);
  Site* raw = s.get();
  sites_.emplace(site, std::move(s));
  return raw;
}

Status Engine::Load() {
  auto t0 = Clock::now();
  auto stored_id = store_->GetMeta("embedder");
  if (!stored_id.ok()) return stored_id.status();
  std::unique_lock lock(mu_);
  std::unordered_map<int64_t, Site*> site_of;
  size_t notes = 0, vectors = 0;
  Status s = store_->ForEachNote([&](const StoredNote& n) {
    Site* site = SiteFor(n.site);
    site->docs[n.id] = Doc{n.path, n.url, n.title, {}};
    site->by_path[n.path] = n.id;
    site_of[n.id] = site;
    ++notes;
  });
  if (!s.ok()) return s;
  const bool same_embedder = *stored_id == embedder_id_;
  if (same_embedder) {
    // Collected per index and inserted in bulk: an HNSW index is then built
    // on every CPU instead of one vector at a time.
    RowsByIndex rows;
    s = store_->ForEachVector([&](int64_t note_id, const StoredVector& v) {
      auto it = site_of.find(note_id);
      if (it == site_of.end() || v.v.size() != embedder_->dim()) return;
      Site* site = it->second;
      if (v.chunk == 0) {
        rows[&site->notes].Add(static_cast<uint64_t>(note_id), v.v);
      } else {
        rows[&site->chunks].Add(ChunkId(note_id, v.chunk), v.v);
      }
      if (v.chunk > 0) {
        auto& chunks = site->docs[note_id].chunks;
        if (chunks.size() < static_cast<size_t>(v.chunk)) chunks.resize(v.chunk);
        chunks[v.chunk - 1] = {v.heading, v.anchor};
      }
      ++vectors;
    });
    if (!s.ok()) return s;
    for (auto& [index, r] : rows) {
      if (Status st = index->UpsertMany(r.ids, r.data); !st.ok()) {
        return Status(st.code(), "stored vectors in " + options_.data_dir + " are damaged: " + st.message());
      }
    }
    s = store_->ForEachRelated([&](int64_t id, std::string_view list, bool) {
      auto it = site_of.find(id);
      if (it != site_of.end()) it->second->SetList(id, DecodeRelatedList(list));
    });
    if (!s.ok()) return s;
  }
  notes_count_ = notes;
  vectors_count_ = vectors;
  lock.unlock();
  log::Info("search index loaded", {{"notes", std::to_string(notes)}, {"vectors", std::to_string(vectors)},
                                    {"sites", std::to_string(sites_.size())},
                                    {"ms", std::to_string(static_cast<int64_t>(MsSince(t0)))}});
  if (!same_embedder && notes > 0) {
    log::Warn("the embedder changed; embedding every stored note again",
              {{"was", *stored_id}, {"now", embedder_id_}});
    if (Status r = Reembed(); !r.ok()) return r;
  }
  if (*stored_id != embedder_id_) return store_->SetMeta("embedder", embedder_id_);
  return Status::Ok();
}

// Builds events from the stored notes and applies them again with a fresh
// hash, so that every note is embedded by the current embedder.
Status Engine::Reembed() {
  std::vector<bus::NoteEvent> events;
  std::unordered_map<int64_t, size_t> index_of;
  Status s = store_->ForEachNote([&](const StoredNote& n) {
    index_of[n.id] = events.size();
    bus::NoteEvent e;
    e.site = n.site;
    e.path = n.path;
    e.url = n.url;
    e.title = n.title;
    e.version = n.version;
    events.push_back(std::move(e));
  });
  if (!s.ok()) return s;
  s = store_->ForEachText([&](int64_t id, std::string_view, std::string_view text) {
    auto it = index_of.find(id);
    if (it != index_of.end()) events[it->second].text = text;
  });
  if (!s.ok()) return s;
  // Force: clear the stored hashes so Apply embeds everything.
  if (Status x = store_->db()->Exec("UPDATE notes SET hash = '', version = version - 1"); !x.ok()) return x;
  ApplyStats stats;
  auto updates = Apply(events, &stats);
  return updates.ok() ? Status::Ok() : updates.status();
}

Result<std::vector<bus::RelatedUpdate>> Engine::Apply(std::span<const bus::NoteEvent> events, ApplyStats* stats) {
  *stats = ApplyStats{};
  stats->events = events.size();
  // The latest event per (site, path) wins.
  std::map<std::pair<std::string, std::string>, const bus::NoteEvent*> latest;
  for (const bus::NoteEvent& e : events) {
    auto& slot = latest[{e.site, e.path}];
    if (!slot || slot->version <= e.version) slot = &e;
  }

  struct Work {
    const bus::NoteEvent* e;
    std::optional<StoredNote> stored;
    std::string hash;
    bool embed = false;
    std::vector<TextChunk> chunks;
    std::vector<StoredVector> vectors;
    int64_t id = 0;
  };
  std::vector<Work> work;
  work.reserve(latest.size());
  for (const auto& [key, e] : latest) {
    auto stored = store_->FindNote(e->site, e->path);
    if (!stored.ok()) return stored.status();
    if (*stored && (*stored)->version > e->version) {
      ++stats->unchanged;  // stale redelivery
      continue;
    }
    if (e->deleted && !*stored) {
      ++stats->unchanged;
      continue;
    }
    Work w{e, std::move(*stored), "", false, {}, {}, 0};
    if (!e->deleted) {
      w.hash = ContentHash(embedder_id_, *e, options_.chunk_chars);
      w.embed = !w.stored || w.stored->hash != w.hash;
      if (!w.embed && w.stored->url == e->url && w.stored->title == e->title && w.stored->version == e->version) {
        ++stats->unchanged;
        continue;
      }
      if (!w.embed) ++stats->unchanged;
    }
    work.push_back(std::move(w));
  }

  // Embed (outside any lock and transaction): note texts and chunk texts.
  auto t_embed = Clock::now();
  std::vector<std::string> texts;
  std::vector<std::pair<size_t, int>> owner;  // text -> (work index, chunk number)
  for (size_t i = 0; i < work.size(); ++i) {
    Work& w = work[i];
    if (!w.embed) continue;
    ++stats->embedded_notes;
    texts.push_back(NoteEmbedText(*w.e));
    owner.emplace_back(i, 0);
    w.chunks = ChunkText(w.e->text, w.e->sections, options_.chunk_chars);
    for (size_t c = 0; c < w.chunks.size(); ++c) {
      texts.push_back(w.chunks[c].text);
      owner.emplace_back(i, static_cast<int>(c + 1));
    }
  }
  stats->embedded_texts = texts.size();
  // Batches run on the pool (both embedders may be called from many threads;
  // a remote one then has a few requests in flight).
  const size_t batch = std::max<size_t>(options_.embed_batch, 1);
  const size_t batches = (texts.size() + batch - 1) / batch;
  std::vector<std::vector<std::vector<float>>> vecs(batches);
  std::vector<Status> embed_status(batches);
  auto embed = [&](size_t b) {
    const size_t from = b * batch, n = std::min(batch, texts.size() - from);
    std::vector<std::string_view> in(texts.begin() + from, texts.begin() + from + n);
    embed_status[b] = embedder_->Embed(in, &vecs[b]);
  };
  if (pool_ && batches > 1) {
    pool_->ParallelFor(batches, embed);
  } else {
    for (size_t b = 0; b < batches; ++b) embed(b);
  }
  for (const Status& st : embed_status) {
    if (!st.ok()) return st;
  }
  for (size_t t = 0; t < texts.size(); ++t) {
    auto [wi, chunk] = owner[t];
    StoredVector v;
    v.chunk = chunk;
    if (chunk > 0) {
      v.heading = work[wi].chunks[chunk - 1].heading;
      v.anchor = work[wi].chunks[chunk - 1].anchor;
    }
    v.v = std::move(vecs[t / batch][t % batch]);
    work[wi].vectors.push_back(std::move(v));
  }
  stats->embed_ms = MsSince(t_embed);

  // Commit: notes, vectors, full text, and mark their related lists dirty.
  auto t_commit = Clock::now();
  sqlite::Db* db = store_->db();
  if (Status s = db->Begin(); !s.ok()) return s;
  FullTextIndex& fts = *fts_;
  auto fail = [&](Status s) -> Status {
    db->Rollback();
    return s;
  };
  for (Work& w : work) {
    const bus::NoteEvent& e = *w.e;
    if (e.deleted) {
      w.id = w.stored->id;
      if (Status s = store_->DeleteNote(w.id); !s.ok()) return fail(s);
      if (Status s = fts.Remove(w.id); !s.ok()) return fail(s);
      continue;
    }
    StoredNote n{0, e.site, e.path, e.url, e.title, w.hash, e.version};
    auto id = store_->UpsertNote(n, e.text);
    if (!id.ok()) return fail(id.status());
    w.id = *id;
    if (w.embed) {
      if (Status s = store_->ReplaceVectors(w.id, w.vectors); !s.ok()) return fail(s);
      if (Status s = store_->SetRelatedDirty(w.id, true); !s.ok()) return fail(s);
    }
    std::string body = e.text;
    for (const std::string& t : e.tags) body.append("\n#").append(t);
    if (Status s = fts.Upsert(w.id, e.site, e.title, body); !s.ok()) return fail(s);
  }
  if (Status s = db->Commit(); !s.ok()) return fail(s);
  stats->commit_ms = MsSince(t_commit);

  // Swap into memory, a slice of about kSwapVectors vectors at a time, so
  // queries wait for one slice at most, never for the whole batch. Apply is
  // the only writer, so what it reads under the shared lock stays valid
  // until it takes the exclusive one.
  std::map<Site*, std::unordered_set<int64_t>> changed;
  std::vector<Site*> site_of(work.size());
  {
    std::unique_lock lock(mu_);
    for (size_t i = 0; i < work.size(); ++i) site_of[i] = SiteFor(work[i].e->site);
  }
  for (size_t begin = 0, end = 0; begin < work.size(); begin = end) {
    size_t slice_vectors = 0;
    while (end < work.size() && (end == begin || slice_vectors + work[end].vectors.size() <= kSwapVectors)) {
      slice_vectors += work[end++].vectors.size();
    }
    RowsByIndex rows;
    for (size_t i = begin; i < end; ++i) {
      for (const StoredVector& v : work[i].vectors) {
        if (v.chunk == 0) {
          rows[&site_of[i]->notes].Add(static_cast<uint64_t>(work[i].id), v.v);
        } else {
          rows[&site_of[i]->chunks].Add(ChunkId(work[i].id, v.chunk), v.v);
        }
      }
    }
    // An index about to switch to HNSW gets its graph built here, under the
    // shared lock, instead of inside the exclusive one.
    std::map<vector::AutoIndex*, vector::AutoIndex::Prepared> prepared;
    {
      std::shared_lock lock(mu_);
      for (auto& [index, r] : rows) {
        if (index->WouldSwitch(r.ids.size())) prepared[index] = index->PrepareHnsw();
      }
    }
    std::unique_lock lock(mu_);
    for (auto& [index, p] : prepared) index->AdoptHnsw(std::move(p));
    for (size_t i = begin; i < end; ++i) {
      Work& w = work[i];
      const bus::NoteEvent& e = *w.e;
      Site* site = site_of[i];
      Doc& doc = site->docs[w.id];
      if (e.deleted || w.embed) {
        for (size_t c = 1; c <= doc.chunks.size(); ++c) site->chunks.Remove(ChunkId(w.id, static_cast<int>(c)));
        doc.chunks.clear();
        changed[site].insert(w.id);
      }
      if (e.deleted) {
        ++stats->deleted;
        site->notes.Remove(static_cast<uint64_t>(w.id));
        site->by_path.erase(doc.path);
        site->docs.erase(w.id);
        continue;
      }
      for (const StoredVector& v : w.vectors) {
        if (v.chunk > 0) {
          if (doc.chunks.size() < static_cast<size_t>(v.chunk)) doc.chunks.resize(v.chunk);
          doc.chunks[v.chunk - 1] = {v.heading, v.anchor};
        }
      }
      doc.path = e.path;
      doc.url = e.url;
      doc.title = e.title;
      site->by_path[e.path] = w.id;
    }
    for (auto& [index, r] : rows) {
      if (Status st = index->UpsertMany(r.ids, r.data); !st.ok()) {
        log::Error("search: vectors not indexed", {{"error", st.message()}});
      }
    }
    size_t notes = 0, vectors = 0;
    for (const auto& [name, site] : sites_) {
      notes += site->notes.size();
      vectors += site->notes.size() + site->chunks.size();
    }
    notes_count_ = notes;
    vectors_count_ = vectors;
  }

  // Related lists.
  auto t_related = Clock::now();
  std::vector<bus::RelatedUpdate> updates;
  for (auto& [site, ids] : changed) {
    if (Status s = UpdateRelated(site, ids, false, &updates, stats); !s.ok()) return s;
  }
  stats->related_ms = MsSince(t_related);
  return updates;
}

Status Engine::UpdateRelated(Site* site, const std::unordered_set<int64_t>& changed, bool all,
                             std::vector<bus::RelatedUpdate>* out, ApplyStats* stats) {
  const size_t k = options_.related_k;
  const float min_score = options_.related_min_score;
  std::string site_name;
  std::vector<int64_t> targets;
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, float>>> fresh;
  size_t merged = 0;  // lists that only gained entries (merged, not searched)
  {
    std::shared_lock lock(mu_);
    for (const auto& [name, s] : sites_) {
      if (s.get() == site) site_name = name;
    }
    const size_t n = site->docs.size();
    // A large batch changes most lists anyway: recompute all of them.
    all = all || changed.size() * 4 >= n;
    // Lists to compute from scratch, and lists that only gain entries: a
    // list that names no changed note, which a changed note c now beats the
    // k-th entry of, is exactly its old entries plus those c merged (no
    // other note's score against it changed).
    std::unordered_set<int64_t> affected;
    std::unordered_map<int64_t, std::vector<std::pair<int64_t, float>>> gains;
    auto gain = [&](int64_t m, int64_t c, float score) { gains[m].emplace_back(c, score); };
    if (all) {
      for (const auto& [id, doc] : site->docs) affected.insert(id);
    } else {
      std::vector<int64_t> live;  // changed notes that still exist
      for (int64_t c : changed) {
        // Lists that name c (it may leave them, or its score changed).
        auto lb = site->listed_by.find(c);
        if (lb != site->listed_by.end()) affected.insert(lb->second.begin(), lb->second.end());
        if (site->docs.count(c) == 0) continue;  // deleted
        affected.insert(c);
        live.push_back(c);
      }
      // Lists that a changed note c now enters: those of notes m for which c
      // beats m's k-th entry.
      if (!site->notes.is_hnsw()) {
        // Exact index: c is scored against every note (one pass over the
        // vectors for the whole batch), so no such list is missed.
        std::vector<std::span<const float>> cv;
        std::vector<int64_t> cid;
        for (int64_t c : live) {
          auto v = site->notes.Get(static_cast<uint64_t>(c));
          if (!v.empty()) cv.push_back(v), cid.push_back(c);
        }
        site->notes.ForEach([&](uint64_t id, std::span<const float> row) {
          const auto m = static_cast<int64_t>(id);
          if (affected.count(m)) return;  // computed from scratch anyway
          const float kth = std::max(site->KthScore(m, k), min_score);
          for (size_t j = 0; j < cv.size(); ++j) {
            float score = vector::Score(cv[j], row);
            if (score >= min_score && score > kth && cid[j] != m) gain(m, cid[j], score);
          }
        });
      } else {
        // HNSW (large sites): probe c's nearest neighbours. A list whose
        // owner is not among them (asymmetric neighbourhoods) can be missed
        // until it is next recomputed.
        const size_t probe = std::max<size_t>(100, 10 * k);
        std::vector<std::vector<vector::Hit>> near = SearchNotes(site->notes, live, probe, pool_);
        for (size_t i = 0; i < live.size(); ++i) {
          for (const vector::Hit& h : near[i]) {
            int64_t m = static_cast<int64_t>(h.id);
            if (m == live[i] || h.score < min_score || affected.count(m)) continue;
            if (h.score > site->KthScore(m, k)) gain(m, live[i], h.score);
          }
        }
      }
    }
    targets.assign(affected.begin(), affected.end());
    std::sort(targets.begin(), targets.end());
    std::vector<std::vector<vector::Hit>> hits = SearchNotes(site->notes, targets, k + 1, pool_);
    for (size_t i = 0; i < targets.size(); ++i) {
      if (site->docs.count(targets[i]) == 0) continue;
      fresh[targets[i]] = RelatedFromHits(hits[i], targets[i], k, min_score);
    }
    for (auto& [m, entries] : gains) {
      auto old = site->related.find(m);
      if (old != site->related.end()) entries.insert(entries.end(), old->second.begin(), old->second.end());
      std::sort(entries.begin(), entries.end(), [](const auto& x, const auto& y) {
        return x.second != y.second ? x.second > y.second : x.first < y.first;  // Search's order
      });
      if (entries.size() > k) entries.resize(k);
      fresh[m] = std::move(entries);
      targets.push_back(m);
    }
    merged = gains.size();
    std::sort(targets.begin(), targets.end());
  }
  stats->related_merged += merged;
  stats->related_recomputed += targets.size() - merged;

  // Which lists changed (by their sequence of notes: the pages show titles).
  std::vector<int64_t> changed_lists;
  for (int64_t id : targets) {
    if (site->docs.count(id) == 0) continue;
    auto old = site->related.find(id);
    static const std::vector<std::pair<int64_t, float>> kEmpty;
    const auto& before = old == site->related.end() ? kEmpty : old->second;
    if (!SameNotes(before, fresh[id])) changed_lists.push_back(id);
  }

  sqlite::Db* db = store_->db();
  if (Status s = db->Begin(); !s.ok()) return s;
  for (int64_t id : targets) {
    if (site->docs.count(id) == 0) continue;
    bool publish = std::binary_search(changed_lists.begin(), changed_lists.end(), id);
    // Unchanged lists keep their published flag; scores are refreshed.
    if (publish) {
      if (Status s = store_->SetRelated(id, EncodeRelatedList(fresh[id]), false); !s.ok()) {
        db->Rollback();
        return s;
      }
    }
    if (changed.count(id)) {
      if (Status s = store_->SetRelatedDirty(id, false); !s.ok()) {
        db->Rollback();
        return s;
      }
    }
  }
  if (Status s = db->Commit(); !s.ok()) {
    db->Rollback();
    return s;
  }

  bus::RelatedUpdate update;
  update.site = site_name;
  {
    std::unique_lock lock(mu_);
    for (int64_t id : changed) {
      if (site->docs.count(id) == 0) site->SetList(id, {});  // deleted: drop its list
    }
    for (int64_t id : targets) {
      if (site->docs.count(id) == 0) continue;
      site->SetList(id, std::move(fresh[id]));
    }
    for (int64_t id : changed_lists) {
      bus::RelatedList list;
      list.path = site->docs[id].path;
      auto it = site->related.find(id);
      if (it != site->related.end()) {
        for (const auto& [other, score] : it->second) {
          auto doc = site->docs.find(other);
          if (doc != site->docs.end()) list.related.push_back({doc->second.path, score});
        }
      }
      update.lists.push_back(std::move(list));
    }
  }
  stats->related_changed += changed_lists.size();
  if (!update.lists.empty()) {
    for (bus::RelatedUpdate& part : bus::SplitRelatedUpdate(update)) out->push_back(std::move(part));
  }
  return Status::Ok();
}

Result<std::vector<bus::RelatedUpdate>> Engine::PendingUpdates() {
  std::vector<bus::RelatedUpdate> out;
  // Notes whose vectors changed but whose lists were not recomputed (a crash
  // between the two commits): recompute now.
  auto dirty = store_->RelatedDirtyNotes();
  if (!dirty.ok()) return dirty.status();
  if (!dirty->empty()) {
    std::map<Site*, std::unordered_set<int64_t>> by_site;
    {
      std::shared_lock lock(mu_);
      for (int64_t id : *dirty) {
        for (const auto& [name, site] : sites_) {
          if (site->docs.count(id)) by_site[site.get()].insert(id);
        }
      }
    }
    ApplyStats stats;
    for (auto& [site, ids] : by_site) {
      if (Status s = UpdateRelated(site, ids, false, &out, &stats); !s.ok()) return s;
    }
  }
  // Lists stored but not confirmed published.
  std::vector<int64_t> unpublished;
  Status s = store_->ForEachRelated([&](int64_t id, std::string_view, bool published) {
    if (!published) unpublished.push_back(id);
  });
  if (!s.ok()) return s;
  std::map<std::string, bus::RelatedUpdate> by_site;
  {
    std::shared_lock lock(mu_);
    for (int64_t id : unpublished) {
      for (const auto& [name, site] : sites_) {
        auto doc = site->docs.find(id);
        if (doc == site->docs.end()) continue;
        bus::RelatedUpdate& u = by_site[name];
        u.site = name;
        bus::RelatedList list;
        list.path = doc->second.path;
        auto it = site->related.find(id);
        if (it != site->related.end()) {
          for (const auto& [other, score] : it->second) {
            auto od = site->docs.find(other);
            if (od != site->docs.end()) list.related.push_back({od->second.path, score});
          }
        }
        u.lists.push_back(std::move(list));
      }
    }
  }
  for (auto& [name, u] : by_site) {
    // Skip lists Apply/UpdateRelated above already queued.
    for (bus::RelatedUpdate& part : bus::SplitRelatedUpdate(u)) out.push_back(std::move(part));
  }
  return out;
}

Status Engine::MarkPublished(const std::vector<bus::RelatedUpdate>& updates) {
  std::vector<int64_t> ids;
  {
    std::shared_lock lock(mu_);
    for (const bus::RelatedUpdate& u : updates) {
      auto site = sites_.find(u.site);
      if (site == sites_.end()) continue;
      for (const bus::RelatedList& l : u.lists) {
        auto it = site->second->by_path.find(l.path);
        if (it != site->second->by_path.end()) ids.push_back(it->second);
      }
    }
  }
  sqlite::Db* db = store_->db();
  if (Status s = db->Begin(); !s.ok()) return s;
  if (Status s = store_->MarkRelatedPublished(ids); !s.ok()) {
    db->Rollback();
    return s;
  }
  return db->Commit();
}

Engine::ReaderConn* Engine::Reader() {
  std::lock_guard lock(readers_mu_);
  auto me = std::this_thread::get_id();
  for (size_t i = 0; i < reader_threads_.size(); ++i) {
    if (reader_threads_[i] == me) return readers_[i].get();
  }
  auto db = SearchStore::OpenReader(options_.data_dir);
  if (!db.ok()) return nullptr;
  readers_.push_back(std::make_unique<ReaderConn>(std::move(*db)));
  reader_threads_.push_back(me);
  return readers_.back().get();
}

namespace {

constexpr double kRrfK = 60;  // reciprocal rank fusion constant (Cormack et al.)

struct Candidate {
  int64_t id = 0;
  double score = 0;
  int chunk = 0;  // best chunk for vector hits (0 = whole note)
};

}  // namespace

bus::SearchReply Engine::Search(const bus::SearchQuery& q) {
  auto t0 = Clock::now();
  bus::SearchReply reply;
  const size_t k = static_cast<size_t>(std::clamp(q.k, 1, bus::kMaxSearchK));
  const size_t depth = std::max<size_t>(k * 3, 30);  // candidates per ranking before fusion

  std::vector<Candidate> vec_hits, text_hits;
  if (q.mode != bus::SearchMode::kText) {
    std::vector<std::vector<float>> qv;
    std::string_view text = q.q;
    if (Status s = embedder_->Embed(std::span<const std::string_view>(&text, 1), &qv); !s.ok()) {
      reply.error = "the embedder is unavailable: " + s.message();
      reply.code = Code::kUnavailable;
      return reply;
    }
    std::shared_lock lock(mu_);
    auto it = sites_.find(q.site);
    if (it != sites_.end()) {
      Site* site = it->second.get();
      std::unordered_map<int64_t, Candidate> best;
      for (const vector::Hit& h : site->notes.Search(qv[0], depth)) {
        auto& c = best[static_cast<int64_t>(h.id)];
        c.id = static_cast<int64_t>(h.id);
        if (h.score > c.score) c.score = h.score, c.chunk = 0;
      }
      for (const vector::Hit& h : site->chunks.Search(qv[0], depth)) {
        int64_t note = NoteOfChunk(h.id);
        auto& c = best[note];
        c.id = note;
        if (h.score > c.score) c.score = h.score, c.chunk = static_cast<int>(h.id & 0xFF);
      }
      for (auto& [id, c] : best) {
        if (c.score > 0) vec_hits.push_back(c);
      }
      std::sort(vec_hits.begin(), vec_hits.end(), [](const Candidate& a, const Candidate& b) {
        return a.score != b.score ? a.score > b.score : a.id < b.id;
      });
      if (vec_hits.size() > depth) vec_hits.resize(depth);
    }
  }
  ReaderConn* reader = Reader();
  if (!reader) {
    reply.error = "the search database cannot be read";
    reply.code = Code::kUnavailable;
    return reply;
  }
  if (q.mode != bus::SearchMode::kVector) {
    auto hits = reader->fts.Search(q.site, q.q, depth);
    if (!hits.ok()) {
      reply.error = "full-text search failed: " + hits.status().message();
      reply.code = Code::kInternal;
      return reply;
    }
    for (const TextHit& h : *hits) text_hits.push_back({h.doc_id, h.score, 0});
  }

  std::vector<Candidate> ranked;
  if (q.mode == bus::SearchMode::kVector) {
    ranked = std::move(vec_hits);
  } else if (q.mode == bus::SearchMode::kText) {
    ranked = std::move(text_hits);
  } else {
    std::unordered_map<int64_t, Candidate> fused;
    for (size_t r = 0; r < vec_hits.size(); ++r) {
      auto& c = fused[vec_hits[r].id];
      c.id = vec_hits[r].id;
      c.chunk = vec_hits[r].chunk;
      c.score += 1.0 / (kRrfK + static_cast<double>(r + 1));
    }
    for (size_t r = 0; r < text_hits.size(); ++r) {
      auto& c = fused[text_hits[r].id];
      c.id = text_hits[r].id;
      c.score += 1.0 / (kRrfK + static_cast<double>(r + 1));
    }
    for (auto& [id, c] : fused) ranked.push_back(c);
    std::sort(ranked.begin(), ranked.end(), [](const Candidate& a, const Candidate& b) {
      return a.score != b.score ? a.score > b.score : a.id < b.id;
    });
  }
  if (ranked.size() > k) ranked.resize(k);

  std::shared_lock lock(mu_);
  auto it = sites_.find(q.site);
  if (it == sites_.end()) {
    reply.took_us = static_cast<int64_t>(MsSince(t0) * 1000);
    return reply;
  }
  Site* site = it->second.get();
  for (const Candidate& c : ranked) {
    auto doc = site->docs.find(c.id);
    if (doc == site->docs.end()) continue;  // deleted meanwhile
    bus::SearchHit hit;
    hit.path = doc->second.path;
    hit.url = doc->second.url;
    hit.title = doc->second.title;
    hit.score = c.score;
    if (c.chunk > 0 && static_cast<size_t>(c.chunk) <= doc->second.chunks.size()) {
      const std::string& anchor = doc->second.chunks[c.chunk - 1].second;
      if (!anchor.empty()) hit.url += "#" + anchor;
    }
    auto text = ReadNoteText(reader->db.get(), c.id);
    if (text.ok()) hit.snippet = MakeSnippet(*text, q.q);
    reply.hits.push_back(std::move(hit));
  }
  reply.took_us = static_cast<int64_t>(MsSince(t0) * 1000);
  return reply;
}

bus::SearchReply Engine::Related(const bus::RelatedQuery& q) {
  auto t0 = Clock::now();
  bus::SearchReply reply;
  std::shared_lock lock(mu_);
  auto it = sites_.find(q.site);
  Site* site = it == sites_.end() ? nullptr : it->second.get();
  auto id = site ? site->by_path.find(q.path) : decltype(site->by_path.end()){};
  if (!site || id == site->by_path.end()) {
    reply.error = "no note " + q.path + " in site " + q.site;
    reply.code = Code::kNotFound;
    return reply;
  }
  auto list = site->related.find(id->second);
  if (list != site->related.end()) {
    for (const auto& [other, score] : list->second) {
      if (reply.hits.size() >= static_cast<size_t>(q.k)) break;
      auto doc = site->docs.find(other);
      if (doc == site->docs.end()) continue;
      reply.hits.push_back({doc->second.path, doc->second.url, doc->second.title, "", score});
    }
  }
  reply.took_us = static_cast<int64_t>(MsSince(t0) * 1000);
  return reply;
}

}  // namespace folio::search
