// Constants and helpers shared by the writer's parts (site_writer.cc,
// site_related.cc, page_renderer.cc, site_listings.cc, push_commit.cc,
// outbox_publisher.cc). Not for use outside them. Includes none of them.
// Threads: AddPage on ingest's writer thread; the rest is pure.
#pragma once

#include <time.h>

#include <cstdint>
#include <cstdio>
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
inline void AddPage(Commit* c, std::string url, PageHead head, std::string_view body) {
  if (c->access > head.access) head.access = c->access;
  PageRecordOut rec = MakePageRecord(head, body);
  if (!rec.warning.empty()) log::Warn("generated page too large for the bus", {{"url", url}, {"error", rec.warning}});
  c->AddPage(std::move(url), std::move(rec.record));
}

// "hash=0.1 meta=3.2 ...": milliseconds per phase of a push, for its log
// line and reply, and (with `cpu`) the same in CPU time of the calling
// thread (the writer's own work; the render pool's threads not counted), so
// a loaded machine's waits do not read as cost.
class PhaseLog {
 public:
  explicit PhaseLog(std::string* out, std::string* cpu = nullptr)
      : out_(out), cpu_(cpu), start_(MonotonicUs()), cpu_start_(ThreadCpuUs()) {}
  void operator()(const char* name) {
    const int64_t now = MonotonicUs(), cpu_now = ThreadCpuUs();
    Append(out_, name, now - start_);
    if (cpu_) Append(cpu_, name, cpu_now - cpu_start_);
    start_ = now;
    cpu_start_ = cpu_now;
  }

 private:
  static int64_t ThreadCpuUs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
  }
  static void Append(std::string* out, const char* name, int64_t us) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", static_cast<double>(us) / 1000.0);
    *out += std::string(out->empty() ? "" : " ") + name + "=" + ms;
  }

  std::string* out_;
  std::string* cpu_;
  int64_t start_;
  int64_t cpu_start_;
};

}  // namespace folio::ingest::internal
