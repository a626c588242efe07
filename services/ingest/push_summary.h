// What a push returns: PushSummary (with a NoteReport per note), and the
// PushKey a push is recorded under for its retries. Plain data: SiteWriter
// fills a summary on the writer thread and hands it over by value. Its wire
// form is libs/ingest_api's PushReply (ReplyOf): handlers_push.cc encodes
// it as the answer, and SiteWriter records RecordedReply(summary) with a
// keyed push, so neither passes the other a format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "folio/ingest_api/push.h"

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
  std::string phases;      // "hash=0.1 meta=3.2 ..." milliseconds per phase, for the log and reply
  std::string phases_cpu;  // the same in the writer thread's CPU time, for the log
  std::vector<NoteReport> notes;  // pushed notes, attachments, then re-rendered notes
};

// A push sent with an Idempotency-Key: its reply is recorded with the push
// (in the same transaction) so that a retry gets it again.
struct PushKey {
  std::string key;
  std::string body_sha256;
};

// The summary as the API's push reply (every field a retry gets again).
ingest_api::PushReply ReplyOf(const PushSummary& sum);
// The recorded part of the reply: ingest_api::EncodePushReplyRecord(ReplyOf(sum)).
std::string RecordedReply(const PushSummary& sum);

}  // namespace folio::ingest
