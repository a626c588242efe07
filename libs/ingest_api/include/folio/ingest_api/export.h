// GET /api/v1/export?after=URL: every URL a site publishes, in bounded pages
// (byte order), for `folio export`. One encoder (folio-ingest), one decoder
// (the CLI). Pure; any thread.
//
// Wire shape: {"urls":["/","/a",...],"next":"/a"}; "next" is "" on the last
// page, else the value of ?after= for the next one. At most kExportPageUrls
// URLs an answer; ?after= of more than kMaxExportAfterBytes is
// kInvalidArgument (400, error.h). Versioning: keys are only added.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio::ingest_api {

struct ExportPage {
  std::vector<std::string> urls;
  std::string next;  // "" on the last page
};

std::string EncodeExportPage(const ExportPage& page);
// kInvalidArgument when it is not JSON, a key has the wrong type, or
// "urls" is missing (a server older than folio export).
Result<ExportPage> DecodeExportPage(std::string_view json);

}  // namespace folio::ingest_api
