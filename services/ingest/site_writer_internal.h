// Constants and helpers shared by SiteWriter's .cc files (site_writer.cc,
// push_stages.cc, site_render.cc, site_related.cc). Not for use outside
// SiteWriter. Single-threaded like SiteWriter (writer thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "folio/core/time.h"

namespace folio::ingest::internal {

inline constexpr const char* kHtml = "text/html; charset=utf-8";
inline constexpr const char* kPageCache = "public, max-age=0, must-revalidate";
inline constexpr const char* kAssetCache = "public, max-age=31536000, immutable";

// KV key of the site's version marker in the pages bucket.
inline std::string MetaKey(std::string_view site) { return "_meta." + std::string(site); }

// "hash=1 meta=3 ...": milliseconds per phase of a push, for its log line.
class PhaseLog {
 public:
  explicit PhaseLog(std::string* out) : out_(out), start_(MonotonicUs()) {}
  void operator()(const char* name) {
    int64_t now = MonotonicUs();
    *out_ += std::string(out_->empty() ? "" : " ") + name + "=" + std::to_string((now - start_) / 1000);
    start_ = now;
  }

 private:
  std::string* out_;
  int64_t start_;
};

}  // namespace folio::ingest::internal
