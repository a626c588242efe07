// The parameters of the reader-facing
// GET /_/search?q=&mode=&k=&fragment=1&format=json, parsed and validated from
// the raw query string. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "folio/bus/search_schema.h"
#include "folio/core/status.h"

namespace folio::edge {

inline constexpr int kDefaultSearchK = 20;
inline constexpr int kMaxSearchResults = 50;  // the largest k a reader may ask for

// The shape of the answer: the whole page, only its results element
// (fragment=1, for the search page's live results), or JSON (format=json,
// for the header's search box on every page).
enum class SearchFormat : uint8_t { kPage, kFragment, kJson };

struct SearchParams {
  std::string q;          // percent-decoded ('+' = space), trimmed; "" = no search
  bus::SearchMode mode = bus::SearchMode::kHybrid;
  int k = kDefaultSearchK;
  SearchFormat format = SearchFormat::kPage;  // format=json wins over fragment=1
};

// Parses `query` (the raw text after '?'). The first occurrence of a
// parameter wins; unknown parameters are ignored. format is set even when
// the result is an error (so the error goes out in the shape asked for).
// kInvalidArgument, with a message fit to show the reader, when: an escape
// is malformed, q is over bus::kMaxQueryBytes bytes or not valid UTF-8 once
// decoded, mode is not hybrid|vector|text, format is not html|json, or k is
// not an integer in
// 1..kMaxSearchResults. Missing (or empty) mode and k take the defaults.
Status ParseSearchParams(std::string_view query, SearchParams* out);

}  // namespace folio::edge
