// Loop: one libuv event loop and the thread that runs it.
//
// Ownership: the creator owns the Loop; it must outlive every Server, Timer
// and posted task on it. Threading: Run() is called by exactly one thread
// (the "loop thread"); every other member except Post() and Stop() must be
// called on that thread. Post() and Stop() are safe from any thread; they
// hand work to the loop through a mutex-guarded queue plus one uv_async.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace folio::http {

class Loop {
 public:
  Loop();
  ~Loop();  // REQUIRES: Run() has returned (or never ran)
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // Runs until Stop(); returns after handles are closed.
  void Run();
  // Thread-safe. Makes Run() return once pending callbacks finish.
  void Stop();
  // Thread-safe. Runs fn on the loop thread, in submission order.
  void Post(std::function<void()> fn);

  // Loop thread only. Calls fn every `interval_ms` (first after interval_ms)
  // until the Loop stops. Returns an id for CancelTimer.
  uint64_t Every(uint64_t interval_ms, std::function<void()> fn);
  // Loop thread only. Calls fn once after delay_ms.
  uint64_t After(uint64_t delay_ms, std::function<void()> fn);
  void CancelTimer(uint64_t id);
  // Loop thread only. Calls fn on the loop thread when the process gets
  // `signum` (e.g. SIGTERM, SIGINT).
  void OnSignal(int signum, std::function<void()> fn);

  // Loop time in ms (uv_now): cached per iteration, cheap.
  uint64_t NowMs() const;

  struct Impl;
  Impl* impl() { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace folio::http
