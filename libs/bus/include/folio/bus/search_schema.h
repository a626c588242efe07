// The search contract: core NATS request/reply (no stream) on
//   "search.query"    EncodeSearchQuery   -> EncodeSearchReply (JSON, schema 1)
//   "search.related"  EncodeRelatedQuery  -> EncodeSearchReply (JSON, schema 1)
// The edge sends queries; search answers both with a Responder. Pure
// functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/related_schema.h"  // kMaxRelatedK bounds a related query
#include "folio/bus/site_name.h"
#include "folio/core/status.h"

namespace folio::bus {

inline constexpr std::string_view kSearchQuerySubject = "search.query";
inline constexpr std::string_view kSearchRelatedSubject = "search.related";
inline constexpr int kSearchSchema = 1;
inline constexpr size_t kMaxQueryBytes = 1024;  // longer query text is rejected
inline constexpr int kMaxSearchK = 100;         // largest k a query may ask for

enum class SearchMode : uint8_t { kHybrid, kVector, kText };
// "hybrid", "vector", "text"
std::string_view SearchModeName(SearchMode m);
// Inverse of SearchModeName; false for anything else.
bool ParseSearchMode(std::string_view name, SearchMode* out);

// search.query request: {"schema":1,"site":"docs","q":"...","k":10,"mode":"hybrid"}
struct SearchQuery {
  std::string site;
  std::string q;          // valid UTF-8, 1..kMaxQueryBytes bytes
  int k = 10;             // 1..kMaxSearchK
  SearchMode mode = SearchMode::kHybrid;
};

// search.related request: {"schema":1,"site":"docs","path":"a/b.md","k":10}
struct RelatedQuery {
  std::string site;
  std::string path;       // vault path of the note
  int k = 10;             // 1..kMaxRelatedK
};

struct SearchHit {
  std::string path;       // vault path, "Folder/Note.md"
  std::string url;        // canonical URL path
  std::string title;
  std::string snippet;    // HTML-escaped text; matched terms wrapped in <mark>..</mark>
  double score = 0;       // higher is better; scale depends on the mode
};

// Reply to either request:
// {"schema":1,"error":"","code":"ok","hits":[...],"took_us":123}
// error is empty on success, otherwise a message for the user (and hits empty).
// code says what kind of failure it is, protocol-neutral: each reader maps it
// to its own wire (http::HttpStatusFor, http::UpstreamHttpStatusFor).
struct SearchReply {
  std::string error;
  Code code = Code::kOk;  // kOk iff error is empty (kInvalidArgument, kNotFound, kUnavailable, ...)
  std::vector<SearchHit> hits;
  int64_t took_us = 0;
};

std::string EncodeSearchQuery(const SearchQuery& q);
// kInvalidArgument naming the field: malformed JSON, unknown schema, invalid
// site, empty/oversized/non-UTF-8 q, k outside 1..kMaxSearchK, unknown mode.
// Missing k/mode take the defaults.
Status DecodeSearchQuery(std::string_view json, SearchQuery* out);
std::string EncodeRelatedQuery(const RelatedQuery& q);
// As DecodeSearchQuery; path is a non-empty UTF-8 vault path, k 1..kMaxRelatedK.
Status DecodeRelatedQuery(std::string_view json, RelatedQuery* out);
// A score that is not finite is written as 0.
std::string EncodeSearchReply(const SearchReply& r);
// kInvalidArgument naming the field. A reply without "code" but with the
// older "error_status" still decodes (README.md).
Status DecodeSearchReply(std::string_view json, SearchReply* out);

}  // namespace folio::bus
