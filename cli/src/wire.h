// The folio-ingest API as the CLI speaks it. The contract itself (routes,
// request and reply shapes, their one encoder and decoder, limits, error
// codes) is libs/ingest_api, shared with the server; this file adapts it to
// the CLI: the manifest into plan.h's Manifest, the push body from the
// vault's settings, and HTTP failures into one-line user-facing errors
// through the one reverse map (http::StatusFromHttp).
//
// Routes (folio/ingest_api/*.h hold the shapes):
//   GET  /api/v1/manifest[?since=V]               manifest.h
//   POST /api/v1/push (Idempotency-Key)           push.h: a push reply
//   POST /api/v1/push?stage=ID&batch=N            push.h: a staged reply
//   POST /api/v1/push/commit?stage=ID (Idempotency-Key) push.h: a push reply
//   GET  /api/v1/export?after=URL                 export.h
//   errors: 4xx/5xx {"error":{"code","message"}}  error.h
//
// Pure functions; thread-safe. Unknown JSON fields are ignored.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "folio/core/status.h"
#include "folio/ingest_api/export.h"
#include "folio/ingest_api/limits.h"
#include "folio/ingest_api/push.h"
#include "plan.h"
#include "settings.h"

namespace folio::cli {

using ingest_api::kCommitPath;
using ingest_api::kExportPath;
using ingest_api::kIdempotencyKeyHeader;
using ingest_api::kManifestPath;
using ingest_api::kPushPath;

using ExportPage = ingest_api::ExportPage;
using NoteReport = ingest_api::NoteReport;
using OutgoingAttachment = ingest_api::OutgoingAttachment;
using OutgoingNote = ingest_api::OutgoingNote;
using PushReply = ingest_api::PushReply;
using StageReply = ingest_api::StageReply;

// The ingest API's decoders, their errors as kInvalidArgument naming what is
// malformed; ParseManifest fills plan.h's Manifest.
Result<Manifest> ParseManifest(std::string_view json);
Result<PushReply> ParsePushReply(std::string_view json);
Result<StageReply> ParseStageReply(std::string_view json);
Result<ExportPage> ParseExportPage(std::string_view json);

// The POST /api/v1/push body (ingest_api::EncodePushRequest), with
// "settings" only when `settings` is given and says something.
std::string BuildPushBody(std::span<const OutgoingNote> notes,
                          std::span<const OutgoingAttachment> attachments,
                          std::span<const std::string> deletes, const VaultSettings* settings = nullptr);

// The error for a non-200 answer to `what` ("manifest", "push") from
// `server`: the code is http::StatusFromHttp's (the body's "code", else the
// HTTP status), the message one line a user can act on, e.g.
// kUnauthenticated "the server rejected the token (check --token /
// FOLIO_TOKEN)". Uses the server's {"error":{"message"}} when present.
Status ErrorForResponse(std::string_view server, std::string_view what, int http_status,
                        std::string_view body);

// The wait an answer asks for in its Retry-After header (RFC 9110 10.2.3:
// delay-seconds, or an HTTP-date read against now_unix_s), in ms: 0 when
// the header is absent, malformed or in the past; at most a day.
int64_t RetryAfterMs(std::string_view value, int64_t now_unix_s);

// The "message" of an {"error":{...}} body on one line (at most 500 bytes),
// or "" if the body is not one.
std::string ErrorMessage(std::string_view body);

}  // namespace folio::cli
