// RequestMetrics: the http::RequestObserver every service's routers report
// to (OpsEndpoints mounts it): the histogram
//   folio_http_request_duration_seconds{route, code}
// where route is the route class (observer.h) and code the HTTP status.
//
// The hot path (the edge serves pages in microseconds): the series of each
// (route class, status) pair is resolved once, under a mutex, and cached in
// a table of atomic pointers; afterwards a request costs a scan of the few
// class names, one atomic load and Histogram::Observe. Route classes beyond
// kMaxClasses count as "other".
//
// Ownership: owned by metrics::Registry, which outlives the Servers.
// Threading: OnRequestDone from any thread, concurrently.
#pragma once

#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "folio/http/observer.h"

namespace folio::metrics {

class RequestMetrics final : public http::RequestObserver {
 public:
  static constexpr int kMaxClasses = 16;
  static constexpr int kMinStatus = 100;
  static constexpr int kMaxStatus = 599;

  // Buckets in seconds: 100 µs (an edge page hit) to 10 s (a large push).
  static std::vector<double> Buckets();

  explicit RequestMetrics(prometheus::Registry* registry);
  void OnRequestDone(std::string_view route_class, int status, double seconds) override;

 private:
  int ClassIndex(std::string_view route_class);
  prometheus::Histogram* Resolve(int cls, int status);

  prometheus::Family<prometheus::Histogram>* family_;
  std::mutex mu_;  // guards adding class names and resolving series
  std::array<std::string, kMaxClasses> names_;  // [0] = "other"; written once under mu_
  std::atomic<int> n_names_{0};
  std::array<std::array<std::atomic<prometheus::Histogram*>, kMaxStatus - kMinStatus + 1>, kMaxClasses> series_{};
};

}  // namespace folio::metrics
