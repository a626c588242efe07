// libs/bus's additions to core's JSON reader (folio/core/json_decode.h, the
// one reader every JSON codec uses): the site-name rule of the bus
// contracts. Pure; any thread. All errors are kInvalidArgument, worded like
// the core readers' ("note event: invalid site name \"X\"").
#pragma once

#include <string>

#include "folio/core/json_decode.h"
#include "schema_format.h"

namespace folio::bus {

static_assert(format::kMaxVaultPathSize == json::kMaxVaultPathBytes, "one vault-path bound for every JSON payload");

// Reads key "site": a string that IsValidSiteName accepts.
Status DecodeSite(const json::Decoder& d, json::element v, std::string* out);

}  // namespace folio::bus
