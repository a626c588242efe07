#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "engine.h"
#include "engine_internal.h"
#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/sqlite/transaction.h"

namespace folio::search {
namespace {

// Apply swaps a batch into the indexes in slices of about this many vectors
// under the exclusive lock (~10-50 ms of HNSW inserts on two cores).
constexpr size_t kSwapVectors = 256;

// The latest event per (site, path).
std::map<std::pair<std::string, std::string>, const bus::NoteEvent*> LatestEvents(
    std::span<const bus::NoteEvent> events) {
  std::map<std::pair<std::string, std::string>, const bus::NoteEvent*> latest;
  for (const bus::NoteEvent& e : events) {
    auto& slot = latest[{e.site, e.path}];
    if (!slot || slot->version <= e.version) slot = &e;
  }
  return latest;
}

// The end of the slice of work that starts at `begin`: at least one note, and
// more while they add up to at most kSwapVectors vectors.
template <typename Work>
size_t SliceEnd(const std::vector<Work>& work, size_t begin) {
  size_t end = begin, slice_vectors = 0;
  while (end < work.size() && (end == begin || slice_vectors + work[end].vectors.size() <= kSwapVectors)) {
    slice_vectors += work[end++].vectors.size();
  }
  return end;
}

}  // namespace

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

Result<std::vector<bus::RelatedUpdate>> Engine::Apply(std::span<const bus::NoteEvent> events, ApplyStats* stats) {
  *stats = ApplyStats{};
  stats->events = events.size();
  std::vector<bus::RelatedUpdate> updates;
  // A restored mark splits the batch: the events before it apply over the
  // old versions, the mark forgets them, the events after it apply over that.
  size_t from = 0;
  for (size_t i = 0; i <= events.size(); ++i) {
    if (i < events.size() && !events[i].restored) continue;
    if (i > from) {
      if (Status s = ApplyNotes(events.subspan(from, i - from), stats, &updates); !s.ok()) return s;
    }
    if (i < events.size()) {
      if (Status s = ApplyRestored(events[i], &updates); !s.ok()) return s;
    }
    from = i + 1;
  }
  return updates;
}

Status Engine::ApplyNotes(std::span<const bus::NoteEvent> events, ApplyStats* stats,
                          std::vector<bus::RelatedUpdate>* updates) {
  auto work = PlanApply(events, stats);
  if (!work.ok()) return work.status();

  auto t_embed = Clock::now();
  if (Status s = EmbedWork(&*work, stats); !s.ok()) return s;
  stats->embed_ms += MsSince(t_embed);

  auto t_commit = Clock::now();
  if (Status s = CommitWork(&*work); !s.ok()) return s;
  stats->commit_ms += MsSince(t_commit);

  ChangedNotes changed = SwapIn(&*work, stats);

  auto t_related = Clock::now();
  for (auto& [site, ids] : changed) {
    if (Status s = UpdateRelated(site, ids, false, updates, stats); !s.ok()) return s;
  }
  stats->related_ms += MsSince(t_related);
  return Status::Ok();
}

Status Engine::ApplyRestored(const bus::NoteEvent& mark, std::vector<bus::RelatedUpdate>* updates) {
  // Stored first: a crash after it leaves the lists unpublished, sent
  // again by PendingUpdates.
  if (Status s = store_->ForgetSiteVersions(mark.site); !s.ok()) return s;
  bus::RelatedUpdate all;
  all.site = mark.site;
  {
    std::shared_lock lock(mu_);
    if (const Site* site = FindSite(mark.site)) {
      std::vector<int64_t> ids;
      ids.reserve(site->docs.size());
      for (const auto& [id, doc] : site->docs) ids.push_back(id);
      std::sort(ids.begin(), ids.end());  // the same order on every replica
      for (int64_t id : ids) all.lists.push_back(PublishedList(*site, id));
    }
  }
  log::Info("the site's ingest was restored from a backup: versions forgotten, related lists sent again",
            {{"site", mark.site}, {"version", std::to_string(mark.version)}, {"lists", std::to_string(all.lists.size())}});
  if (all.lists.empty()) return Status::Ok();
  for (bus::RelatedUpdate& part : bus::SplitRelatedUpdate(all)) updates->push_back(std::move(part));
  return Status::Ok();
}

Result<std::vector<Engine::ApplyWork>> Engine::PlanApply(std::span<const bus::NoteEvent> events, ApplyStats* stats) {
  const auto latest = LatestEvents(events);
  std::vector<ApplyWork> work;
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
    ApplyWork w;
    w.e = e;
    w.stored = std::move(*stored);
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
  return work;
}

// Embeds outside any lock and transaction: note texts and chunk texts.
Status Engine::EmbedWork(std::vector<ApplyWork>* work, ApplyStats* stats) {
  std::vector<std::string> texts;
  std::vector<std::pair<size_t, int>> owner;  // text -> (work index, chunk number)
  for (size_t i = 0; i < work->size(); ++i) {
    ApplyWork& w = (*work)[i];
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
  auto vecs = EmbedTexts(texts);
  if (!vecs.ok()) return vecs.status();
  for (size_t t = 0; t < texts.size(); ++t) {
    auto [wi, chunk] = owner[t];
    ApplyWork& w = (*work)[wi];
    StoredVector v;
    v.chunk = chunk;
    if (chunk > 0) {
      v.heading = w.chunks[chunk - 1].heading;
      v.anchor = w.chunks[chunk - 1].anchor;
    }
    v.v = std::move((*vecs)[t]);
    w.vectors.push_back(std::move(v));
  }
  return Status::Ok();
}

// Batches run on the pool (both embedders may be called from many threads;
// a remote one then has a few requests in flight).
Result<std::vector<std::vector<float>>> Engine::EmbedTexts(const std::vector<std::string>& texts) {
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
  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  for (size_t t = 0; t < texts.size(); ++t) out.push_back(std::move(vecs[t / batch][t % batch]));
  return out;
}

// Commit: notes, vectors, full text, links, and mark their related lists
// dirty; then the link texts of the notes whose incoming links changed.
Status Engine::CommitWork(std::vector<ApplyWork>* work) {
  auto tx = sqlite::Transaction::Begin(store_->db());
  if (!tx.ok()) return tx.status();
  std::map<std::string, std::vector<std::string>> targets;  // site -> notes whose link texts may change
  for (ApplyWork& w : *work) {
    if (Status s = DiffWords(&w); !s.ok()) return s;  // before the row changes
    if (Status s = CommitNote(&w); !s.ok()) return s;  // tx rolls back
    auto changed = store_->ReplaceLinks(w.e->site, w.e->path, w.e->deleted ? std::span<const bus::NoteLink>() : w.e->links);
    if (!changed.ok()) return changed.status();
    auto& t = targets[w.e->site];
    t.insert(t.end(), changed->begin(), changed->end());
  }
  for (auto& [site, paths] : targets) {
    if (Status s = UpdateAnchors(site, paths); !s.ok()) return s;
  }
  return tx->Commit();
}

Status Engine::CommitNote(ApplyWork* w) {
  const bus::NoteEvent& e = *w->e;
  if (e.deleted) {
    w->id = w->stored->id;
    if (Status s = store_->DeleteNote(w->id); !s.ok()) return s;
    return fts_->Remove(w->id);
  }
  StoredNote n{0, e.site, e.path, e.url, e.title, w->hash, e.version};
  auto id = store_->UpsertNote(n, e.text);
  if (!id.ok()) return id.status();
  w->id = *id;
  if (w->embed) {
    if (Status s = store_->ReplaceVectors(w->id, w->vectors); !s.ok()) return s;
    if (Status s = store_->SetRelatedDirty(w->id, true); !s.ok()) return s;
  }
  bus::NoteEvent extra = e;
  extra.text.clear();
  if (Status s = store_->SetNoteFields(w->id, bus::EncodeNoteEvent(extra), EncodeSections(e.sections)); !s.ok()) {
    return s;
  }
  std::string aliases, headings, tags;
  for (const std::string& a : e.aliases) aliases.append(a).append("\n");
  for (const bus::NoteSection& h : e.sections) headings.append(h.heading).append("\n");
  for (const std::string& t : e.tags) tags.append(t).append("\n");
  auto anchors = Anchors(e.site, e.path, e.title);
  if (!anchors.ok()) return anchors.status();
  std::string path = PathWords(e.path);
  return fts_->Upsert(w->id, e.site, NoteFields{e.title, aliases, *anchors, headings, tags, path, e.text});
}

// Swaps into memory a slice of about kSwapVectors vectors at a time, so
// queries wait for one slice at most, never for the whole batch. Apply is
// the only writer, so what it reads under the shared lock stays valid until
// it takes the exclusive one.
Engine::ChangedNotes Engine::SwapIn(std::vector<ApplyWork>* work, ApplyStats* stats) {
  ChangedNotes changed;
  std::vector<Site*> site_of(work->size());
  {
    std::unique_lock lock(mu_);
    for (size_t i = 0; i < work->size(); ++i) site_of[i] = SiteFor((*work)[i].e->site);
  }
  for (size_t begin = 0, end = 0; begin < work->size(); begin = end) {
    end = SliceEnd(*work, begin);
    SwapSlice(std::span(*work).subspan(begin, end - begin), std::span<Site* const>(site_of).subspan(begin, end - begin),
              &changed, stats);
  }
  return changed;
}

namespace {

// The vectors of `slice` by the index they go to.
template <typename Work>
RowsByIndex GatherRows(std::span<Work> slice, std::span<Engine::Site* const> site_of) {
  RowsByIndex rows;
  for (size_t i = 0; i < slice.size(); ++i) {
    for (const StoredVector& v : slice[i].vectors) {
      if (v.chunk == 0) {
        rows[&site_of[i]->notes].Add(static_cast<uint64_t>(slice[i].id), v.v);
      } else {
        rows[&site_of[i]->chunks].Add(ChunkId(slice[i].id, v.chunk), v.v);
      }
    }
  }
  return rows;
}

}  // namespace

void Engine::SwapSlice(std::span<ApplyWork> slice, std::span<Site* const> site_of, ChangedNotes* changed,
                       ApplyStats* stats) {
  RowsByIndex rows = GatherRows(slice, site_of);
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
  for (size_t i = 0; i < slice.size(); ++i) {
    ApplyWork& w = slice[i];
    const bus::NoteEvent& e = *w.e;
    Site* site = site_of[i];
    Doc& doc = site->docs[w.id];
    if (e.deleted || w.embed) {
      for (size_t c = 1; c <= doc.chunks.size(); ++c) site->chunks.Remove(ChunkId(w.id, static_cast<int>(c)));
      doc.chunks.clear();
      (*changed)[site].insert(w.id);
    }
    for (const std::string& word : w.words_removed) site->vocab.Remove(word);
    for (const std::string& word : w.words_added) site->vocab.Add(word, w.lang.empty() ? options_.language : w.lang);
    if (w.had_lang) {
      auto it = site->note_langs.find(w.old_lang);
      if (it != site->note_langs.end() && --it->second == 0) site->note_langs.erase(it);
    }
    if (!e.deleted) ++site->note_langs[e.lang];
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
  CountVectors();
}

}  // namespace folio::search
