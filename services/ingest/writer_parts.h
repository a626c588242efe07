// Constants and helpers shared by the writer's parts (site_writer.cc,
// site_related.cc, page_renderer.cc, site_listings.cc, push_commit.cc,
// outbox_publisher.cc). Not for use outside them. Includes none of them.
// Threads: AddPage on ingest's writer thread; the rest is pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "folio/core/log.h"
#include "folio/core/time.h"
#include "page_record.h"
#include "store.h"

namespace folio::ingest::internal {

inline constexpr const char* kHtml = "text/html; charset=utf-8";
inline constexpr const char* kPageCache = "public, max-age=0, must-revalidate";
inline constexpr const char* kAssetCache = "public, max-age=31536000, immutable";
// The type of the page Start publishes for the bundled mermaid (its body a
// blob in storage: bundled_mermaid.h, SiteOptions::mermaid_blob).
inline constexpr std::string_view kMermaidContentType = "text/javascript; charset=utf-8";

// KV key of the site's version marker in the pages bucket.
inline std::string MetaKey(std::string_view site) { return "_meta." + std::string(site); }

// A generated or fixed page (not a note's): its record and outbox put.
inline void AddPage(Commit* c, std::string url, const PageHead& head, std::string_view body) {
  PageRecordOut rec = MakePageRecord(head, body);
  if (!rec.warning.empty()) log::Warn("generated page too large for the bus", {{"url", url}, {"error", rec.warning}});
  c->AddPage(std::move(url), std::move(rec.record));
}

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
