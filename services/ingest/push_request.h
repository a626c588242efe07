// Parsing and validation of POST /api/v1/push bodies (simdjson). Nothing is
// changed until a whole request validates: the first problem found is
// returned with the note it concerns.
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio::ingest {

struct PushLimits {
  size_t max_notes = 20'000;             // notes + deletions per push
  size_t max_note_bytes = 4u << 20;      // one note's content
};

struct PushNote {
  std::string path;
  std::string content;
};

struct PushRequest {
  std::vector<PushNote> notes;
  std::vector<std::string> deletes;
};

struct PushError {
  Status status;      // kInvalidArgument or kTooLarge
  std::string path;   // the note concerned, or "" for the request as a whole
};

// Parses `body` into *out. On failure returns false and fills *err.
bool ParsePushRequest(std::string_view body, const PushLimits& limits, PushRequest* out, PushError* err);

}  // namespace folio::ingest
