// engine_internal.h: the Engine's private state and helpers shared by its
// source files (engine.cc: open, load, per-thread readers; engine_apply.cc:
// the write path; engine_related.cc: related lists; engine_query.cc: the read
// path). Not part of folio-search's contract: include it only from those.
//
// Ownership: an Engine owns its Sites (Engine::sites_) and each Site owns its
// indexes, docs and related lists; ApplyWork points into the events Apply was
// given and lives for one Apply. Threads: Site is read under the Engine's
// shared lock and changed only under its exclusive lock by the consumer
// thread (the one thread that calls Apply); the consumer may also read it
// without the lock, since no one else changes it. ReaderConn belongs to one
// querying thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine.h"
#include "folio/bus/note_schema.h"
#include "folio/bus/related_schema.h"
#include "folio/bus/search_schema.h"
#include "folio/sqlite/db.h"
#include "folio/vector/index.h"
#include "fulltext.h"
#include "store.h"
#include "vocabulary.h"

namespace folio::search {

using Clock = std::chrono::steady_clock;
inline double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Vector ids: a note's whole-note vector lives in Site::notes under its note
// id; chunk c (1..255) lives in Site::chunks under (note id << 8) | c.
constexpr size_t kMaxChunks = 255;
inline uint64_t ChunkId(int64_t note, int chunk) {
  return (static_cast<uint64_t>(note) << 8) | static_cast<uint64_t>(chunk);
}
inline int64_t NoteOfChunk(uint64_t id) { return static_cast<int64_t>(id >> 8); }

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

// A note's related list, best first: (note id, score).
using ScoredNotes = std::vector<std::pair<int64_t, float>>;

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
  std::unordered_map<int64_t, ScoredNotes> related;                    // last computed lists
  std::unordered_map<int64_t, std::unordered_set<int64_t>> listed_by;  // note -> lists naming it
  Vocabulary vocab;                         // the words of every note's fields (query.h)
  std::map<std::string, size_t> note_langs;  // notes per declared language ("" = the site's)

  // Replaces note id's list (an empty one drops it), keeping listed_by in step.
  void SetList(int64_t id, ScoredNotes list);
  // The score of id's k-th entry; -2 when its list has fewer (anything enters).
  float KthScore(int64_t id, size_t k) const;
};

struct Engine::ReaderConn {
  explicit ReaderConn(std::unique_ptr<sqlite::Db> d) : db(std::move(d)), fts(db.get()) {}
  std::unique_ptr<sqlite::Db> db;
  FullTextIndex fts;
};

struct TextChunk {
  std::string heading, anchor, text;
};

// One note of an Apply batch: its latest event, what the store held for it,
// and (filled step by step) its hash, chunks, vectors and note id.
struct Engine::ApplyWork {
  const bus::NoteEvent* e = nullptr;
  std::optional<StoredNote> stored;
  std::string hash;
  bool embed = false;
  std::vector<TextChunk> chunks;
  std::vector<StoredVector> vectors;
  int64_t id = 0;
  // The note's words the vocabulary gains and loses (CommitNote), and the
  // language they are stemmed in; the old declared language.
  std::vector<std::string> words_added, words_removed;
  std::string lang, old_lang;
  bool had_lang = false;  // the stored note counted in note_langs
};

// The lists one UpdateRelated call sets: targets (sorted) each with its fresh
// list; `merged` of them only gained entries (a merge, no search).
struct Engine::RelatedPlan {
  std::vector<int64_t> targets;
  std::unordered_map<int64_t, ScoredNotes> fresh;
  size_t merged = 0;
};

// Splits a long plain text into pieces of at most ~max_chars: first at the
// headings `sections` names, then (within a section) at line ends. None for a
// text of at most max_chars; at most kMaxChunks.
std::vector<TextChunk> ChunkText(std::string_view text, std::span<const bus::NoteSection> sections, size_t max_chars);

// The hash that says whether a note must be embedded again: the embedder,
// the chunk size and everything of the note that is embedded.
std::string ContentHash(std::string_view embedder_id, const bus::NoteEvent& e, size_t chunk_chars);

// The distinct words of a note's indexed fields (title, aliases, tags,
// path, text), sorted; and the NoteFields strings they come from.
std::vector<std::string> NoteWords(std::string_view title, std::string_view path, std::string_view text,
                                   const bus::NoteEvent& extra);
// "Folder/Sub/Note.md" -> "Folder Sub Note".
std::string PathWords(std::string_view path);
// A note's sections as the notes.sections column keeps them.
std::string EncodeSections(std::span<const bus::NoteSection> sections);

// Note id's list as published: the paths and scores of its entries.
// REQUIRES: id is in site.docs; the caller holds the Engine's lock.
bus::RelatedList PublishedList(const Engine::Site& site, int64_t id);

}  // namespace folio::search
