// ThreadPool: a fixed set of worker threads for CPU work (rendering, hashing).
//
// Owner: the service's main. Submit() and ParallelFor() may be called from
// any thread except a pool worker (ParallelFor from a worker would deadlock
// once every worker waits). The destructor drains queued work and joins.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace folio {

class ThreadPool {
 public:
  // threads == 0 means AvailableCpus() (service.h).
  explicit ThreadPool(size_t threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> fn);
  // Runs fn(i) for i in [0, n) across the workers and the calling thread;
  // returns when all are done. fn must not throw.
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);
  size_t size() const { return workers_.size(); }

 private:
  void Run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // GUARDED_BY(mu_)
  bool stop_ = false;                        // GUARDED_BY(mu_)
  std::vector<std::thread> workers_;
};

// Runs fn(begin, end) over [0, n) split into at most `parts` contiguous
// chunks of about equal size, the first on the calling thread and the others
// on threads started for the call; returns when all are done. For a
// command-line tool's one-off bursts (the CLI parsing its index); services
// keep a ThreadPool. parts 0 or 1, or n < 2: one call on this thread.
// fn must not throw.
void ParallelChunks(size_t n, size_t parts, const std::function<void(size_t begin, size_t end)>& fn);

}  // namespace folio
