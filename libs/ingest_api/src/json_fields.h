// Readers shared by the ingest API's decoders (private to libs/ingest_api).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "folio/core/json_decode.h"

namespace folio::ingest_api {

// "settings":{"strict_line_breaks":B}: other keys skipped (a newer server's).
Status DecodeSettings(const json::Decoder& d, json::element v, std::optional<bool>* strict_line_breaks);

}  // namespace folio::ingest_api
