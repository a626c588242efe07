// Parsing and validation of POST /api/v1/push bodies (simdjson). Nothing is
// changed until a whole request validates: the first problem found is
// returned with the note it concerns.
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio::ingest {

struct PushLimits {
  size_t max_notes = 20'000;             // notes + attachments + deletions per push
  size_t max_note_bytes = 4u << 20;      // one note's content
  // One attachment, decoded. Pages and assets travel as one NATS message
  // each (1 MiB by default) until the storage service holds assets.
  size_t max_attachment_bytes = (1u << 20) - (16u << 10);
};

struct PushNote {
  std::string path;
  std::string content;
};

struct PushAttachment {
  std::string path;   // vault path of a non-note file, "Media/pic.png"
  std::string data;   // decoded bytes
  std::string sha256{};  // of data; set by UploadAttachments (blob_upload.h), "" until then
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

// Body: {"notes":[{"path","content"}], "attachments":[{"path","data"(base64)}],
// "delete":[paths of notes or attachments], "settings":{"strict_line_breaks":bool}}.
// An unknown key in "settings", or a value that is not a bool, is refused.
// Parses `body` into *out. On failure returns false and fills *err.
// `padded`: at least kPushBodyPadding readable bytes follow `body` in memory
// (as they do a body the HTTP server buffered), so it is parsed in place;
// otherwise the JSON parser copies it first.
bool ParsePushRequest(std::string_view body, const PushLimits& limits, PushRequest* out, PushError* err,
                      bool padded = false);

// What ParsePushRequest's JSON parser may read past the end of a padded body.
inline constexpr size_t kPushBodyPadding = 64;

}  // namespace folio::ingest
