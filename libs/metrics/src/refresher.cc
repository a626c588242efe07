#include "folio/metrics/refresher.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace folio::metrics {

Refresher::Refresher(int64_t interval_ms, std::function<bool()> refresh)
    : interval_ms_(interval_ms), refresh_(std::move(refresh)), thread_([this] { Run(); }) {}

Refresher::~Refresher() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Refresher::Run() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    l.unlock();
    bool read = refresh_();
    l.lock();
    int64_t wait_ms = read ? interval_ms_ : std::min(interval_ms_, kRetryMs);
    cv_.wait_for(l, std::chrono::milliseconds(wait_ms), [this] { return stop_; });
  }
}

}  // namespace folio::metrics
