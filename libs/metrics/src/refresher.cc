#include "folio/metrics/refresher.h"

#include <chrono>
#include <utility>

namespace folio::metrics {

Refresher::Refresher(int64_t interval_ms, std::function<void()> refresh)
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
    refresh_();
    l.lock();
    cv_.wait_for(l, std::chrono::milliseconds(interval_ms_), [this] { return stop_; });
  }
}

}  // namespace folio::metrics
