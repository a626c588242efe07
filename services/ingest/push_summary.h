// What a push returns: PushSummary (with a NoteReport per note), and the
// PushKey a push is recorded under for its retries. Plain data: SiteWriter
// fills a summary on the writer thread and hands it over by value;
// handlers_push.cc writes it with libs/ingest_api's encoders (the writer
// never formats a reply).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace folio::ingest {

// One entry of a push's report: a pushed note or attachment, or a note
// this push re-rendered without it being pushed (its links now resolve
// elsewhere, say), with the warnings it has now.
struct NoteReport {
  enum class Kind { kPushed, kAttachment, kRerendered };
  Kind kind = Kind::kPushed;
  std::string path;
  std::string url;         // "" when it has none
  bool published = true;   // kPushed: false when its front matter says publish: false
  std::vector<std::string> warnings;
};

struct PushSummary {
  int64_t version = 0;
  size_t received = 0, changed = 0, rendered = 0, deleted = 0;  // notes and attachments
  size_t att_received = 0, att_changed = 0, att_deleted = 0;    // the attachments among them
  size_t listings = 0;     // generated pages (listings, feeds, redirects) re-rendered or removed
  int64_t rows = 0;        // SQLite rows the commit wrote (Commit::rows_written)
  bool published = false;  // false: committed, publish pending (retried)
  bool strict_line_breaks = false;  // the site's setting after the push
  bool settings_changed = false;    // this push changed it: every note page was re-rendered
  std::string phases;      // "hash=1 meta=3 ..." milliseconds per phase, for the log
  std::vector<NoteReport> notes;  // pushed notes, attachments, then re-rendered notes
};

// A push sent with an Idempotency-Key: its reply is recorded with the push
// (in the same transaction) so that a retry gets it again.
struct PushKey {
  std::string key;
  std::string body_sha256;
  // The reply's recorded part, as the API writes it (handlers_push.cc).
  std::string (*encode_reply)(const PushSummary&) = nullptr;
};

}  // namespace folio::ingest
