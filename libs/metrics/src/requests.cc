#include "folio/metrics/requests.h"

#include <algorithm>

namespace folio::metrics {

std::vector<double> RequestMetrics::Buckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

RequestMetrics::RequestMetrics(prometheus::Registry* registry)
    : family_(&prometheus::BuildHistogram()
                   .Name("folio_http_request_duration_seconds")
                   .Help("HTTP requests by route class and status: seconds from the first byte read to the "
                         "last byte written")
                   .Register(*registry)) {
  names_[0] = std::string(http::kOtherRouteClass);
  n_names_.store(1, std::memory_order_release);
}

int RequestMetrics::ClassIndex(std::string_view route_class) {
  int n = n_names_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (names_[i] == route_class) return i;
  }
  std::lock_guard<std::mutex> l(mu_);
  n = n_names_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (names_[i] == route_class) return i;
  }
  if (n == kMaxClasses) return 0;
  names_[n] = std::string(route_class);
  n_names_.store(n + 1, std::memory_order_release);
  return n;
}

prometheus::Histogram* RequestMetrics::Resolve(int cls, int status) {
  std::lock_guard<std::mutex> l(mu_);
  std::atomic<prometheus::Histogram*>& slot = series_[cls][status - kMinStatus];
  prometheus::Histogram* h = slot.load(std::memory_order_relaxed);
  if (h == nullptr) {
    h = &family_->Add({{"route", names_[cls]}, {"code", std::to_string(status)}}, Buckets());
    slot.store(h, std::memory_order_release);
  }
  return h;
}

void RequestMetrics::OnRequestDone(std::string_view route_class, int status, double seconds) {
  int cls = ClassIndex(route_class);
  status = std::clamp(status, kMinStatus, kMaxStatus);
  prometheus::Histogram* h = series_[cls][status - kMinStatus].load(std::memory_order_acquire);
  if (h == nullptr) h = Resolve(cls, status);
  h->Observe(seconds);
}

}  // namespace folio::metrics
