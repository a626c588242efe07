// Constants shared by SiteWriter's .cc files (site_writer.cc, site_render.cc,
// site_related.cc). Not for use outside SiteWriter.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace folio::ingest::internal {

inline constexpr const char* kHtml = "text/html; charset=utf-8";
inline constexpr const char* kPageCache = "public, max-age=0, must-revalidate";
// NATS's default max payload is 1 MiB; keep room for headers and the subject.
inline constexpr size_t kMaxPublishedPage = (1u << 20) - 8192;

// KV key of the site's version marker in the pages bucket.
inline std::string MetaKey(std::string_view site) { return "_meta." + std::string(site); }

}  // namespace folio::ingest::internal
