#include "engine.h"

#include <memory>
#include <thread>

#include "engine_internal.h"
#include "folio/core/log.h"

namespace folio::search {

void Engine::Site::SetList(int64_t id, ScoredNotes list) {
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

float Engine::Site::KthScore(int64_t id, size_t k) const {
  auto it = related.find(id);
  if (it == related.end() || it->second.size() < k) return -2.0f;  // list not full: anything enters
  return it->second.back().second;
}

std::string NoteEmbedText(const bus::NoteEvent& e) {
  std::string s;
  s.reserve(e.title.size() * 2 + e.text.size() + 64);
  s.append(e.title).append("\n").append(e.title).append("\n");
  for (const std::string& t : e.tags) s.append(t).append(" ");
  s.append("\n").append(e.text);
  return s;
}

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

Engine::Site* Engine::FindSite(std::string_view site) const {
  auto it = sites_.find(site);
  return it == sites_.end() ? nullptr : it->second.get();
}

void Engine::CountVectors() {
  size_t notes = 0, vectors = 0;
  for (const auto& [name, site] : sites_) {
    notes += site->notes.size();
    vectors += site->notes.size() + site->chunks.size();
  }
  notes_count_ = notes;
  vectors_count_ = vectors;
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
  LoadWords();
  auto replay = store_->GetMeta(kReplayNotesKey);
  if (!replay.ok()) return replay.status();
  needs_replay_ = *replay == "1";
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
  Status s = store_->ForEachNoteFields([&](int64_t, std::string_view site, std::string_view path, std::string_view title,
                                           std::string_view text, std::string_view extra) {
    bus::NoteEvent e;
    if (!extra.empty()) (void)bus::DecodeNoteEvent(extra, &e);  // tags, sections, aliases, links, lang
    e.site = site;
    e.path = path;
    e.title = title;
    e.text = text;
    e.deleted = false;
    events.push_back(std::move(e));
  });
  if (!s.ok()) return s;
  std::unordered_map<std::string, size_t> index_of;
  for (size_t i = 0; i < events.size(); ++i) index_of[events[i].site + '\n' + events[i].path] = i;
  s = store_->ForEachNote([&](const StoredNote& n) {
    auto it = index_of.find(n.site + '\n' + n.path);
    if (it == index_of.end()) return;
    events[it->second].url = n.url;
    events[it->second].version = n.version;
  });
  if (!s.ok()) return s;
  // Force: clear the stored hashes so Apply embeds everything.
  if (Status x = store_->db()->Exec("UPDATE notes SET hash = '', version = version - 1"); !x.ok()) return x;
  ApplyStats stats;
  auto updates = Apply(events, &stats);
  return updates.ok() ? Status::Ok() : updates.status();
}
Engine::ReaderConn* Engine::Reader() {
  std::lock_guard lock(readers_mu_);
  auto me = std::this_thread::get_id();
  for (size_t i = 0; i < reader_threads_.size(); ++i) {
    if (reader_threads_[i] == me) return readers_[i].get();
  }
  auto db = SearchStore::OpenReader(options_.data_dir);
  if (!db.ok()) return nullptr;
  if (Status s = FullTextIndex::RegisterRanking(db->get()); !s.ok()) {
    log::Error("search: a read connection cannot rank", {{"error", s.message()}});
    return nullptr;
  }
  readers_.push_back(std::make_unique<ReaderConn>(std::move(*db)));
  reader_threads_.push_back(me);
  return readers_.back().get();
}

}  // namespace folio::search
