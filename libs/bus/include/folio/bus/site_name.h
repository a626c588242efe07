// Site names, the one naming rule every bus contract shares: page keys,
// site records, note events, search requests and related-notes updates all
// carry a site name, and every decoder rejects an invalid one. Pure function;
// thread-safe.
#pragma once

#include <string_view>

namespace folio::bus {

// True for [a-z0-9-]{1,63} not starting with '-'.
bool IsValidSiteName(std::string_view site);

}  // namespace folio::bus
