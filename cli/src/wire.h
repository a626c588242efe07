// The folio-ingest push API as the CLI speaks it: request bodies, response
// parsing (simdjson), and the mapping of HTTP failures to one-line errors.
//
//   GET  /api/v1/manifest  -> {"version":N,"notes":[{"path","sha256","url"}],
//                              "attachments":[{"path","sha256","url"}]}
//                              ("attachments" is absent on older servers; newer
//                              ones add "site":NAME and "limits", and
//                              "settings":{"strict_line_breaks":B}; newer still
//                              "site_url":URL and, per note, "warnings":[..])
//   GET  /api/v1/manifest?since=V -> the same fields for what was written after V,
//                              plus "since":V, "deleted":["path"], "note_count",
//                              "attachment_count"; or {"version","since","too_old":true}
//                              Both, from servers with storage: "missing_attachments":
//                              ["path"], attachments (of the whole site) whose bytes
//                              storage cannot serve; the CLI sends them again (issue 23)
//   POST /api/v1/push      (header Idempotency-Key: 32 random hex digits)
//                          {"notes":[{"path","content"}],
//                           "attachments":[{"path","data" (standard base64)}],
//                           "delete":["path" of a note or an attachment],
//                           "settings":{"strict_line_breaks":B} (only when known)}
//                          -> {"version","received","changed","rendered","deleted",
//                              "took_ms","notes":[{"path","url","warnings":[..]}]}
//                              (+ "attachments_received", "attachments_changed",
//                              "attachments_deleted": the attachments among
//                              received, changed and deleted, from newer servers)
//                              (+ "replayed":true when a retry found the push
//                              committed under its key already)
//                              (+ "phases_ms":"hash=1 meta=3 ..." from servers
//                              that report the server time of each phase)
//                              (+ "settings":{"strict_line_breaks":B}, the
//                              site's after the push, and "settings_changed":true
//                              when this push changed it, from newer servers)
//   POST /api/v1/push?stage=ID&batch=N   (a batch of a staged push)
//                          the push body -> {"stage","batch","received",
//                              "batches","bytes","expires_in_ms"}; servers
//                              without staging apply it as a push and answer
//                              a push reply (no "stage")
//   POST /api/v1/push/commit?stage=ID    (header Idempotency-Key) empty body,
//                          or a push body (the CLI: only "settings")
//                          -> a push reply: every staged batch applied as
//                              one push
//   errors: 4xx/5xx        {"error":{"code":"...","message":"..."}}
//
// Pure functions; thread-safe. Unknown JSON fields are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "plan.h"
#include "settings.h"

namespace folio::cli {

inline constexpr std::string_view kManifestPath = "/api/v1/manifest";
inline constexpr std::string_view kPushPath = "/api/v1/push";
inline constexpr std::string_view kCommitPath = "/api/v1/push/commit";
inline constexpr std::string_view kIdempotencyKeyHeader = "Idempotency-Key";

struct NoteReport {
  std::string path, url;
  std::vector<std::string> warnings;  // "dangling link [[X]]"
};

struct PushReply {
  // received, changed and deleted count notes and attachments together.
  int64_t version = 0, received = 0, changed = 0, rendered = 0, deleted = 0, took_ms = 0;
  // The attachments among them; -1 from servers that do not say.
  int64_t attachments_received = -1, attachments_changed = -1, attachments_deleted = -1;
  std::string phases;  // "phases_ms": server ms per phase; "" if not sent
  std::optional<bool> strict_line_breaks;  // "settings": the site's after the push; unset if not sent
  bool settings_changed = false;           // this push changed the site's settings
  std::vector<NoteReport> notes;
};

// The answer to a staged batch: stored (staged), or, from a server without
// staging, applied as a push (its reply in `applied`).
struct StageReply {
  bool staged = false;
  int64_t batches = 0, bytes = 0;  // the stage's, when staged
  PushReply applied;
};

struct OutgoingNote {
  std::string path;     // vault-relative
  std::string content;  // REQUIRES: valid UTF-8
};

struct OutgoingAttachment {
  std::string path;    // vault-relative
  std::string base64;  // Base64Encode of the file bytes
};

// Fails with kInvalidArgument naming what is malformed.
Result<Manifest> ParseManifest(std::string_view json);
Result<PushReply> ParsePushReply(std::string_view json);
Result<StageReply> ParseStageReply(std::string_view json);

// GET /api/v1/export?after=URL: one bounded page of the site's URLs (byte
// order); `next` is "" on the last page, else the next call's `after`.
inline constexpr std::string_view kExportPath = "/api/v1/export";
struct ExportPage {
  std::vector<std::string> urls;
  std::string next;
};
Result<ExportPage> ParseExportPage(std::string_view json);

// The POST /api/v1/push body. "notes" and "delete" are always present;
// "attachments" only when `attachments` is not empty, so that a body without
// attachments is what servers older than attachments expect; "settings"
// only when `settings` is given and not empty.
std::string BuildPushBody(std::span<const OutgoingNote> notes,
                          std::span<const OutgoingAttachment> attachments,
                          std::span<const std::string> deletes, const VaultSettings* settings = nullptr);

// The error for a non-200 answer to `what` ("manifest", "push") from `server`,
// e.g. kUnauthenticated "the server rejected the token (check --token /
// FOLIO_TOKEN)". Uses the server's {"error":{"message"}} when present.
Status ErrorForResponse(std::string_view server, std::string_view what, int http_status,
                        std::string_view body);

// The wait an answer asks for in its Retry-After header (RFC 9110 10.2.3:
// delay-seconds, or an HTTP-date read against now_unix_s), in ms: 0 when
// the header is absent, malformed or in the past; at most a day.
int64_t RetryAfterMs(std::string_view value, int64_t now_unix_s);

// The "message" of an {"error":{...}} body, or "" if the body is not one.
std::string ErrorMessage(std::string_view body);

}  // namespace folio::cli
