// The ingest API's routes, headers and limits: the constants folio-ingest
// enforces and every client (the CLI, the Obsidian plugin) plans around.
// Change them here and in README.md together; a client learns the limits a
// server actually applies from its manifest ("limits", manifest.h).
// Constants and a plain struct; any thread.
//
// Versioning: the routes carry /v1; new fields are added, never renamed,
// and readers skip keys they do not know, so old clients keep working
// against newer servers and the other way round.
// Errors: a request over one of these limits is refused whole with
// kTooLarge (413; a malformed key or stage ID: kInvalidArgument, 400), in
// the error body of error.h naming the note concerned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace folio::ingest_api {

inline constexpr std::string_view kManifestPath = "/api/v1/manifest";  // GET, ?since=V for a delta
inline constexpr std::string_view kPushPath = "/api/v1/push";          // POST, ?stage=ID&batch=N to stage
inline constexpr std::string_view kCommitPath = "/api/v1/push/commit"; // POST ?stage=ID
inline constexpr std::string_view kExportPath = "/api/v1/export";      // GET ?after=URL
inline constexpr std::string_view kIdempotencyKeyHeader = "Idempotency-Key";

// One note's content, in bytes (4 MiB): folio-ingest's default cap and what
// a client assumes of a server whose manifest does not say.
inline constexpr size_t kMaxNoteBytes = size_t{4} << 20;
// Notes + attachments + deletions in one push (or one commit).
inline constexpr size_t kMaxPushItems = 20'000;
// One attachment, decoded. Pages and assets travel as one NATS message
// each (1 MiB by default) until the storage service holds assets.
inline constexpr size_t kMaxAttachmentBytes = (size_t{1} << 20) - (size_t{16} << 10);
// An Idempotency-Key: 1 to this many of A-Z a-z 0-9 '-' '_'.
inline constexpr size_t kMaxIdempotencyKeyBytes = 128;
// A stage ID: 1 to this many of A-Z a-z 0-9 '-' '_'; batch numbers are
// 0..kMaxStageBatch-1.
inline constexpr size_t kMaxStageIdBytes = 64;
inline constexpr int64_t kMaxStageBatch = 1'000'000;
// Export: ?after= at most this many bytes; at most kExportPageUrls URLs an answer.
inline constexpr size_t kMaxExportAfterBytes = 4096;
inline constexpr int kExportPageUrls = 1000;
// What DecodePushRequest's JSON parser may read past the end of a padded body.
inline constexpr size_t kPushBodyPadding = 64;

// What one server accepts (folio-ingest's flags may set them).
struct PushLimits {
  size_t max_notes = kMaxPushItems;                   // notes + attachments + deletions per push
  size_t max_note_bytes = kMaxNoteBytes;              // one note's content
  size_t max_attachment_bytes = kMaxAttachmentBytes;  // one attachment, decoded
};

}  // namespace folio::ingest_api
