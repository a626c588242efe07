// Refresher: runs a function now and then every interval on a thread of its
// own, for metrics whose source must not be read on an event loop (a
// statvfs, a JetStream API request) and so are Set periodically rather
// than read at scrape time (metrics.h, AddScrapedGauge).
//
// Ownership: owns its thread; the destructor stops it, waiting for a run in
// progress to return. `refresh` and whatever it touches must outlive the
// Refresher. Threading: `refresh` runs only on the Refresher's thread, one
// run at a time; construct and destroy on any one thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace folio::metrics {

class Refresher {
 public:
  // Starts the thread; the first run begins at once. `refresh` returns true
  // when it read its source (next run after interval_ms), false when it could
  // not (next run after min(interval_ms, kRetryMs): a source that is not
  // there yet at start shows within a second). REQUIRES: interval_ms > 0.
  static constexpr int64_t kRetryMs = 1'000;
  Refresher(int64_t interval_ms, std::function<bool()> refresh);
  ~Refresher();
  Refresher(const Refresher&) = delete;
  Refresher& operator=(const Refresher&) = delete;

 private:
  void Run();

  const int64_t interval_ms_;
  const std::function<bool()> refresh_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace folio::metrics
