// The notes contract: stream "notes", subject NotesSubject(site) =
// "notes.<site>", data one or more EncodeNoteEvent(NoteEvent) objects (JSON,
// schema 1), one per line. Ingest publishes an event per changed or deleted
// note, packed up to kMaxNoteEventsPerMessage to a message (with a
// Nats-Msg-Id naming the change); search consumes them with
// DecodeNoteEvents. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/site_name.h"
#include "folio/core/status.h"

namespace folio::bus {

inline constexpr std::string_view kNotesStream = "notes";
inline constexpr std::string_view kNotesSubjectPrefix = "notes.";  // + site
// The stream's size limit (issue 24), with discard "new": search replicas
// build their index from the whole stream, so a full stream refuses new
// events (ingest's outbox keeps them and retries) instead of dropping old
// ones a new replica needs; no age limit for the same reason. Alerts warn at
// 80 % (deploy/prometheus/alerts.yml, FolioJetStreamStreamNearLimit). Given
// to a stream created without a limit; one an operator set is kept, and an
// existing stream already past half of it gets none (JetStream would delete
// its oldest events to fit), with a warning.
inline constexpr int64_t kNotesMaxBytes = int64_t{2} << 30;  // 2 GiB
inline constexpr int kNoteEventSchema = 1;
// A message packs at most this many events, and more than one only while
// it stays under kMaxNoteBatchBytes (a single event may be larger).
inline constexpr size_t kMaxNoteEventsPerMessage = 64;
inline constexpr size_t kMaxNoteBatchBytes = 256 * 1024;

// "notes.<site>"
std::string NotesSubject(std::string_view site);

// A heading of a note, for consumers that split the text by section.
struct NoteSection {
  std::string heading;     // visible heading text
  std::string anchor;      // its id in the page (url#anchor)
  uint32_t offset = 0;     // byte offset in NoteEvent::text where the heading's line starts
};

// A link of a note to another note, for consumers that learn a note's other
// names from the words that point at it ("[[Graph view|connections]]").
struct NoteLink {
  std::string target;  // the target's vault path, "Folder/Note.md" (resolved links only)
  std::string text;    // the link's visible text when it differs from the target's name, else ""
};

// At most this many links (the first ones) and aliases travel per event.
inline constexpr size_t kMaxNoteEventLinks = 500;
inline constexpr size_t kMaxNoteEventAliases = 50;

// One changed or deleted note, for search and other consumers of "notes".
struct NoteEvent {
  std::string site;
  std::string path;        // vault path, "Folder/Note.md"
  std::string url;         // canonical URL path
  int64_t version = 0;     // push version
  bool deleted = false;    // deleted, unpublished or private (publish: private): title, tags, text ""
  std::string title;
  std::vector<std::string> tags;
  std::string text;        // plain text of the note (no markup)
  std::vector<NoteSection> sections;  // headings in text order (optional; "sections" in JSON)
  // Optional in JSON (absent from events of older ingests): the note's
  // frontmatter aliases, its resolved links to other notes, and its
  // language (frontmatter `lang`, "" = the site's).
  std::vector<std::string> aliases;
  std::vector<NoteLink> links;
  std::string lang;
  // Not a note but a mark in the site's history ("restored":true in JSON,
  // path, url, title and text ""): ingest was restored from a backup taken
  // at `version`, so the versions that follow restart below ones consumers
  // may have seen. A consumer forgets the versions it stored for the site
  // (later events apply whatever their version) and sends again what it
  // derived from them (search: every related list of the site, which the
  // restored ingest may hold older). Written by `folio-ingest restore` and
  // --restore-from-storage into the restored database's outbox.
  bool restored = false;
};

// The mark above for `site`, restored at `version`.
NoteEvent RestoredEvent(std::string_view site, int64_t version);

std::string EncodeNoteEvent(const NoteEvent& e);
// kInvalidArgument naming the field: malformed JSON, unknown schema, a
// missing or mistyped field, an invalid site name. Unknown fields are skipped.
Status DecodeNoteEvent(std::string_view json, NoteEvent* out);
// One message of the stream: its events, one JSON object per line (a lone
// object is one event; compact JSON holds no raw newline). Appends to *out
// only when every line decodes; else kInvalidArgument naming the line.
Status DecodeNoteEvents(std::string_view data, std::vector<NoteEvent>* out);

}  // namespace folio::bus
