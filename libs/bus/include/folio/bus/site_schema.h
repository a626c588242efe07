// The site-records contract: KV bucket "pages" (page_schema.h), key
// SiteKey(site) = "_site.<site>", value EncodeSiteRecord(SiteRecord) (JSON,
// schema 1). Ingest writes one per site, at start and when a site is added,
// and deletes it when the site is removed; edges watch them to pick the site
// of a request by its Host header (hosts.h). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/site_name.h"
#include "folio/core/status.h"

namespace folio::bus {

inline constexpr std::string_view kSiteKeyPrefix = "_site.";  // + site
inline constexpr int kSiteRecordSchema = 1;
inline constexpr size_t kMaxSiteHosts = 64;

// "_site.<site>"; REQUIRES: IsValidSiteName(site).
std::string SiteKey(std::string_view site);
// Inverse of SiteKey; false for any other key (page keys included).
bool ParseSiteKey(std::string_view key, std::string* site);

// Which host names one site answers, published by ingest so that edges can
// pick the site of a request by its Host header. Deleting the key withdraws
// the hosts.
struct SiteRecord {
  std::string site;                // IsValidSiteName
  std::vector<std::string> hosts;  // each NormalizeHost-canonical (hosts.h); at most kMaxSiteHosts
  std::string title;               // shown on pages; may be empty
};

// {"schema":1,"site":"a","hosts":["a.example"],"title":"A"}
std::string EncodeSiteRecord(const SiteRecord& r);
// kInvalidArgument on malformed JSON, a missing field, an unknown schema, an
// invalid site name, or a host that is not canonical. Unknown fields are skipped.
Status DecodeSiteRecord(std::string_view json, SiteRecord* out);

}  // namespace folio::bus
