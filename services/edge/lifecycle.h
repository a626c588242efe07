// The edge's start-up and shutdown around its workers (worker.h):
// EdgeState (readiness, the stopping flag and the exit status), PublicPort
// (binds every worker's public listener, in turn, once the page replay is
// applied: issue 9) and StopWorkers (the SIGTERM sequence: issue 10).
//
// Ownership: the workers, the state and the OpsEndpoints are borrowed; they
// belong to main and outlive every worker's loop run.
// Threads: EdgeState may be used from any thread; PublicPort::OnReplayed
// from any thread (the KV watcher's); StopWorkers from any thread (it only
// posts to the workers' loops).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "folio/metrics/metrics.h"
#include "worker.h"

namespace folio::edge {

// What /readyz reports and how the edge exits.
class EdgeState {
 public:
  explicit EdgeState(std::string not_ready_why) : why_(std::move(not_ready_why)) {}

  std::atomic<bool> ready{false};     // every worker listens publicly
  std::atomic<bool> stopping{false};  // shutdown began
  std::atomic<int> exit_code{0};      // main's return value

  // Why the edge is not ready yet (shown by /readyz until ready).
  void SetNotReady(std::string why);
  // "" when ready; else "shutting down" or the last SetNotReady reason.
  std::string Readiness() const;

 private:
  mutable std::mutex mu_;
  std::string why_;  // GUARDED_BY(mu_)
};

// Binds the public listener of worker 0, then of the next one, each on its
// own loop (port 0 picks a port the others then share, SO_REUSEPORT), or
// hands each a copy of the systemd socket (`fds` non-empty); the edge is
// ready after the last. A worker that cannot listen sets exit_code 1 and
// calls `shutdown`. Nothing happens once state->stopping.
class PublicPort {
 public:
  // `pages` reports the pages held, for the "ready" log line.
  PublicPort(std::vector<Worker*> workers, std::string host, int port, std::vector<int> fds, EdgeState* state,
             std::function<void()> shutdown, std::function<size_t()> pages);

  // The initial replay is handed to the workers: once every worker has
  // applied everything posted so far, listen. Any thread.
  void OnReplayed();

 private:
  void ListenFrom(size_t i, int at_port);  // posts to worker i's loop

  std::vector<Worker*> workers_;
  std::string host_;
  int port_;
  std::vector<int> fds_;
  EdgeState* state_;
  std::function<void()> shutdown_;
  std::function<size_t()> pages_;
};

// SIGTERM: readiness turns first (ops->BeginDrain); every worker stops
// accepting, and only once all have does any drain its connections (a
// client told `Connection: close` reconnects at once, and must not land in
// a sibling's listener that is about to close and reset it); once every
// worker has drained, the admin server (on worker 0's loop, answering
// probes meanwhile) drains, and worker 0's loop stops last. The other
// workers' loops stop when they have drained. Any thread.
// REQUIRES: workers non-empty; ops runs on worker 0's loop.
void StopWorkers(const std::vector<Worker*>& workers, metrics::OpsEndpoints* ops);

}  // namespace folio::edge
