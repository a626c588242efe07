// SearchStore: folio-search's state on disk, one SQLite database in --data
// (search.db, WAL). It holds what a restart needs so nothing is embedded
// twice: every note's metadata and plain text, its vectors (the note's and
// its chunks'), the full-text index, and each note's related list with
// whether it has been published.
//
//   notes(id, site, path, url, title, text, hash, version, related_dirty)
//   vectors(note_id, chunk, heading, anchor, vec)    vec = dim little-endian f32
//   related(note_id, list, published)                list = "id:score id:score ..."
//   meta(key, value)                                 e.g. "embedder" -> Describe()
//   links(site, source, target, text)                a note's links that carry a text
//   notes.extra     the note's event without its text (EncodeNoteEvent): tags,
//                   sections, aliases, links, lang, for a restart or re-embedding
//   notes.sections  "offset anchor" lines, for a hit's section link
//   fts (FullTextIndex)
//
// Ownership: SearchStore owns its writer connection. Threading: one thread
// (the consumer) uses a SearchStore; query threads open their own read
// connections with OpenReader (WAL lets them read while the writer writes).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/note_schema.h"
#include "folio/core/status.h"
#include "folio/sqlite/db.h"

namespace folio::search {

struct StoredNote {
  int64_t id = 0;
  std::string site;
  std::string path;
  std::string url;
  std::string title;
  std::string hash;      // of what was embedded (embedder, title, tags, text)
  int64_t version = 0;   // push version of the last event applied
};

struct StoredVector {
  int chunk = 0;          // 0 = the whole note; 1.. = chunks in order
  std::string heading;    // chunk's heading ("" for the note or text before the first heading)
  std::string anchor;     // heading id for url#anchor ("" if none)
  std::vector<float> v;
};

class SearchStore {
 public:
  // Opens (creating) <dir>/search.db. kUnavailable if the file cannot be opened.
  static Result<std::unique_ptr<SearchStore>> Open(const std::string& dir);
  // A read-only connection for query threads.
  static Result<std::unique_ptr<sqlite::Db>> OpenReader(const std::string& dir);

  sqlite::Db* db() { return db_.get(); }

  Result<std::string> GetMeta(std::string_view key);  // "" if absent
  Status SetMeta(std::string_view key, std::string_view value);

  Result<std::optional<StoredNote>> FindNote(std::string_view site, std::string_view path);
  // Inserts or updates by (site, path); returns the note id (stable across updates).
  Result<int64_t> UpsertNote(const StoredNote& n, std::string_view text);
  Status DeleteNote(int64_t id);  // with its vectors and related list
  Status ReplaceVectors(int64_t id, const std::vector<StoredVector>& vectors);
  Status SetRelatedDirty(int64_t id, bool dirty);
  // The site's ingest was restored from a backup (bus::NoteEvent::restored):
  // every note of the site gets version 0 (later events apply whatever
  // their version) and every related list of the site is unpublished
  // again (sent again, as a restored ingest may hold older ones).
  Status ForgetSiteVersions(std::string_view site);

  // Every note, then every vector (chunk order within a note), for loading.
  Status ForEachNote(const std::function<void(const StoredNote&)>& fn);
  Status ForEachVector(const std::function<void(int64_t note_id, const StoredVector&)>& fn);
  Status ForEachText(const std::function<void(int64_t id, std::string_view site, std::string_view text)>& fn);
  Result<std::vector<int64_t>> RelatedDirtyNotes();

  // Related lists: the last computed list of each note.
  Status SetRelated(int64_t id, std::string_view list, bool published);
  Status MarkRelatedPublished(std::span<const int64_t> ids);
  Status ForEachRelated(const std::function<void(int64_t id, std::string_view list, bool published)>& fn);

  // The fields a notes event carries besides the text (see the file comment).
  Status SetNoteFields(int64_t id, std::string_view extra, std::string_view sections);
  // Replaces the links of note `source` (only those with a text are kept);
  // returns the targets whose link texts may have changed (old and new).
  Result<std::vector<std::string>> ReplaceLinks(std::string_view site, std::string_view source,
                                                std::span<const bus::NoteLink> links);
  struct Fields {
    std::string title, text, extra;
  };
  Result<Fields> ReadFields(int64_t id);  // empty fields if absent
  // The distinct texts of links to `target` (at most 200).
  Result<std::vector<std::string>> LinkTexts(std::string_view site, std::string_view target);
  Status ForEachNoteFields(const std::function<void(int64_t id, std::string_view site, std::string_view path,
                                                    std::string_view title, std::string_view text,
                                                    std::string_view extra)>& fn);

 private:
  explicit SearchStore(std::unique_ptr<sqlite::Db> db) : db_(std::move(db)) {}
  // The prepared statement in `slot` (prepared on first use), reset.
  Result<sqlite::Stmt*> Cached(int slot, std::string_view sql);

  std::unique_ptr<sqlite::Db> db_;
  std::array<std::optional<sqlite::Stmt>, 24> stmts_;  // destroyed before db_
};

// Encoding of a related list in the related table.
std::string EncodeRelatedList(const std::vector<std::pair<int64_t, float>>& list);
std::vector<std::pair<int64_t, float>> DecodeRelatedList(std::string_view s);

// Set (to "1") when the index was rebuilt empty by an upgrade: the notes
// stream must be read again from its start (Engine::NeedsReplay).
inline constexpr std::string_view kReplayNotesKey = "replay_notes";

// What a search hit shows of a note: its text and its sections column.
struct NoteForHit {
  std::string text;
  std::string sections;
};
Result<NoteForHit> ReadNoteForHit(sqlite::Db* reader, int64_t id);
// A note's title and extra column (its headings, aliases, tags), from a
// read connection; empty if absent.
Result<std::pair<std::string, std::string>> ReadTitleAndExtra(sqlite::Db* reader, int64_t id);

// The plain text of a note from a read connection ("" if absent).
Result<std::string> ReadNoteText(sqlite::Db* reader, int64_t id);

}  // namespace folio::search
