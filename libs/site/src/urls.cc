#include "folio/site/urls.h"

#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/markdown/slug.h"

namespace folio::site {

std::string DayOf(int64_t unix_ms) { return unix_ms > 0 ? Iso8601Ms(unix_ms).substr(0, 10) : ""; }

std::string FolderUrl(std::string_view folder) {
  std::string url = markdown::UrlForNotePath(std::string(folder) + "/index.md");
  return url;
}

std::string TagUrl(std::string_view tag) { return std::string(markdown::kTagUrlPrefix) + AsciiLower(tag); }

std::string SitemapShardUrl(size_t i) { return "/sitemap-" + std::to_string(i) + ".xml"; }

std::string TreeUrl(std::string_view folder_url) { return std::string(markdown::kTreePrefix) + std::string(folder_url); }

std::string GraphChunkUrl(size_t i) { return std::string(markdown::kGraphChunkPrefix) + std::to_string(i) + ".json"; }

}  // namespace folio::site
