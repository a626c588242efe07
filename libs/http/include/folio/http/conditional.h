// Conditional and ranged GETs (RFC 9110 §13.1.2 If-None-Match, §14.2 Range):
// the header parsing every folio server that serves bytes shares (the edge's
// pages and assets, storage's blobs and objects). Pure functions over views
// the caller owns; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace folio::http {

// True if an If-None-Match value matches `etag`: a comma-separated list of
// entity tags compared weakly (a "W/" prefix ignored), or "*". An empty
// `etag` matches nothing.
bool EtagMatches(std::string_view if_none_match, std::string_view etag);

// What a Range header asks of a body of `size` bytes.
struct ByteRange {
  enum class Kind {
    kWhole,          // absent or malformed (or several ranges): send the whole body, 200
    kPart,           // bytes first..last (inclusive) of the body: 206 with Content-Range
    kUnsatisfiable,  // a well-formed range outside the body: 416 with "bytes */size"
  };
  Kind kind = Kind::kWhole;
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive; kPart only, clamped to size - 1
};

// Parses one "bytes=a-b", "bytes=a-" or "bytes=-n" (the last n bytes).
// Never fails: what it cannot use it reports as kWhole, as RFC 9110 allows a
// server to ignore Range.
ByteRange ParseRange(std::string_view header, uint64_t size);

}  // namespace folio::http
