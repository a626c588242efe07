// Row encodings shared by the Store's files (store*.cc); not for other code.
// Lists of vault paths, hosts or warnings are stored as one TEXT column,
// one item a line (vault paths and hosts hold no control characters).
// Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/related_schema.h"

namespace folio::ingest::store_internal {

// notes.published of a `publish: private` note (0 = unpublished, 1 =
// public). A build from before private notes reads it as published.
inline constexpr int64_t kPublishedPrivate = 2;

// Items joined with '\n'; "" for none.
std::string Join(const std::vector<std::string>& v);
// The lines of s (Join's inverse); none for "".
std::vector<std::string> Split(std::string_view s);

// related.list: one "path\tscore" line per entry, best first.
std::string EncodeRelatedList(const std::vector<bus::RelatedEntry>& entries);
// EncodeRelatedList's inverse; a line without a score gets score 0.
std::vector<bus::RelatedEntry> DecodeRelatedList(std::string_view s);

}  // namespace folio::ingest::store_internal
