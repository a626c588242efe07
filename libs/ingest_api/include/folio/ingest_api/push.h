// POST /api/v1/push, POST /api/v1/push?stage=ID&batch=N and
// POST /api/v1/push/commit?stage=ID: the request body, the push reply and
// the staged batch's reply, with the one encoder and the one decoder of
// each that folio-ingest (services/ingest) and the CLI (cli/src/wire.cc)
// both call. The Obsidian plugin (clients/obsidian/src/api.ts) checks the
// same golden fixtures (tests/fixtures/api/*.json).
// Pure functions on values the caller owns; any thread.
//
// Wire shape (compact JSON, JsonWriter; readers skip unknown keys):
//   request  {"notes":[{"path","content"}],
//             "attachments":[{"path","data" (standard base64)}],   (only when some)
//             "delete":["path" of a note (.md) or an attachment],
//             "settings":{"strict_line_breaks":B}}                  (only when known)
//            header Idempotency-Key: 1..128 of [A-Za-z0-9_-] (limits.h), the
//            same on every retry; a commit's body may be empty.
//   reply    {"version","received","changed","rendered","listings","deleted",
//             "attachments_received","attachments_changed","attachments_deleted",
//             "notes":[{"path","url",("published":false|"attachment":true|
//                       "rerendered":true),"warnings":[...]}],
//             "settings":{"strict_line_breaks":B},("settings_changed":true),
//             "published":B,"took_ms":N,("phases_ms":"hash=1 meta=3 ..."),
//             ("replayed":true)}
//            Everything up to "settings_changed" is the record a retry with
//            the same key gets again (EncodePushReplyRecord); the rest is
//            appended per answer (EncodePushReply). received, changed and
//            deleted count notes and attachments; attachments_* the
//            attachments among them.
//   staged   {"stage","batch","received","batches","bytes","expires_in_ms"};
//            a server without staging answers a staged batch with a push
//            reply (no "stage").
// Errors: the error body of error.h; a request that does not decode is
// kInvalidArgument (400) or kTooLarge (413), naming the note concerned.
// Versioning: keys are only ever added; a reader defaults what an older
// server leaves out (attachments_* -1, settings unset).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "folio/ingest_api/limits.h"

namespace folio::ingest_api {

// ---- Request, as the server reads it ----

struct PushNote {
  std::string path;
  std::string content;
};

struct PushAttachment {
  std::string path;   // vault path of a non-note file, "Media/pic.png"
  std::string data;   // decoded bytes
  std::string sha256{};  // not on the wire: set by the server once stored (ingest's blob_upload.h)
};

// Site settings a push may carry (the vault's own Obsidian settings); each
// unset one leaves the site's value as it is.
struct PushSettings {
  std::optional<bool> strict_line_breaks;  // Obsidian's "strictLineBreaks" (.obsidian/app.json)
};

struct PushRequest {
  std::vector<PushNote> notes;
  std::vector<PushAttachment> attachments;
  std::vector<std::string> deletes;              // notes (.md)
  std::vector<std::string> delete_attachments;   // everything else
  PushSettings settings;
};

struct PushError {
  Status status;      // kInvalidArgument or kTooLarge
  std::string path;   // the note concerned, or "" for the request as a whole
};

// Parses and validates `body` into *out: paths (CheckVaultPath), notes end
// in .md and attachments do not, sizes and counts within `limits`, no path
// twice, UTF-8 content, base64 data. An unknown key in "settings", or a
// value that is not a bool, is refused. Nothing is kept unless the whole
// request validates: on failure returns false and fills *err with the
// first problem. `padded`: at least kPushBodyPadding readable bytes follow
// `body` in memory (as they do a body the HTTP server buffered), so it is
// parsed in place; otherwise the JSON parser copies it first.
bool DecodePushRequest(std::string_view body, const PushLimits& limits, PushRequest* out, PushError* err,
                       bool padded = false);

// ---- Request, as a client writes it ----

struct OutgoingNote {
  std::string path;     // vault-relative
  std::string content;  // REQUIRES: valid UTF-8
};

struct OutgoingAttachment {
  std::string path;    // vault-relative
  std::string base64;  // Base64Encode of the file bytes
};

// The request body. "notes" and "delete" are always present; "attachments"
// only when `attachments` is not empty, so that a body without attachments
// is what servers older than attachments expect; "settings" only when
// strict_line_breaks is set.
std::string EncodePushRequest(std::span<const OutgoingNote> notes, std::span<const OutgoingAttachment> attachments,
                              std::span<const std::string> deletes, std::optional<bool> strict_line_breaks = {});

// ---- Reply ----

struct NoteReport {
  std::string path, url;
  std::vector<std::string> warnings;  // "dangling link [[X]]"
  bool published = true;    // false: a pushed note left unpublished ("published":false)
  bool attachment = false;  // an attachment ("attachment":true)
  bool rerendered = false;  // not pushed, re-rendered for a link that changed ("rerendered":true)
};

struct PushReply {
  // The record (what a replay gets again).
  int64_t version = 0, received = 0, changed = 0, rendered = 0, listings = 0, deleted = 0;
  // The attachments among received, changed, deleted; -1 from servers that do not say.
  int64_t attachments_received = -1, attachments_changed = -1, attachments_deleted = -1;
  std::vector<NoteReport> notes;
  std::optional<bool> strict_line_breaks;  // "settings": the site's after the push; unset if not sent
  bool settings_changed = false;           // this push changed the site's settings
  // Per answer.
  bool published = false;  // the pages are on the bus (false: queued to publish)
  int64_t took_ms = 0;
  std::string phases;      // "phases_ms": server ms per phase; "" if not sent (a replay)
  bool replayed = false;   // a retry answered from the record
};

// The record part, as a JSON object; the server stores it with the key.
std::string EncodePushReplyRecord(const PushReply& r);
// The reply: `record` (EncodePushReplyRecord's, maybe stored long ago) and
// r's per-answer fields.
std::string EncodePushReply(std::string_view record, const PushReply& r);
inline std::string EncodePushReply(const PushReply& r) { return EncodePushReply(EncodePushReplyRecord(r), r); }
// kInvalidArgument ("push reply: field \"version\" must be an integer") when
// it is not a JSON object or a known key has the wrong type.
Result<PushReply> DecodePushReply(std::string_view json);

// ---- Staged batch ----

struct StageReply {
  bool staged = false;  // "stage" present; false: a server without staging applied it (`applied`)
  std::string stage;
  int64_t batch = 0, received = 0, batches = 0, bytes = 0, expires_in_ms = 0;
  PushReply applied;
};

// {"stage","batch","received","batches","bytes","expires_in_ms"}. REQUIRES: r.staged.
std::string EncodeStageReply(const StageReply& r);
// A staged reply, or (no "stage") a push reply in `applied`. kInvalidArgument as DecodePushReply.
Result<StageReply> DecodeStageReply(std::string_view json);

}  // namespace folio::ingest_api
