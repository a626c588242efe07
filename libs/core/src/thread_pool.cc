#include "folio/core/thread_pool.h"

#include <atomic>

#include "folio/core/service.h"

namespace folio {

ThreadPool::ThreadPool(size_t threads) {
  if (threads == 0) threads = AvailableCpus();
  for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { Run(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::Submit(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

void ThreadPool::Run() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      fn = std::move(queue_.front());
      queue_.pop_front();
    }
    fn();
  }
}

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  // Items are claimed from a shared counter (balanced for uneven items). Every
  // drain, including the caller's, checks out under `m` as its last act, so no
  // helper touches these locals after the caller returns.
  std::atomic<size_t> next{0};
  std::mutex m;
  std::condition_variable cv;
  size_t helpers = std::min(workers_.size(), n - 1);
  size_t running = helpers + 1;
  auto drain = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
    std::lock_guard<std::mutex> l(m);
    if (--running == 0) cv.notify_all();
  };
  for (size_t i = 0; i < helpers; ++i) Submit(drain);
  drain();
  std::unique_lock<std::mutex> l(m);
  cv.wait(l, [&] { return running == 0; });
}

void ParallelChunks(size_t n, size_t parts, const std::function<void(size_t, size_t)>& fn) {
  if (parts > n) parts = n;
  if (parts <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(parts - 1);
  for (size_t k = 1; k < parts; ++k) {
    threads.emplace_back([&fn, n, parts, k] { fn(n * k / parts, n * (k + 1) / parts); });
  }
  fn(0, n / parts);
  for (auto& t : threads) t.join();
}

}  // namespace folio
