// SearchBackend: the edge's side of the "search.query" request, shared by
// every worker. Bus::Request blocks, so each search runs on this backend's
// own small thread pool, never on a loop thread; the caller's Done callback
// (on a pool thread) posts the result back to its loop. The backend bounds
// how many searches are in flight, applies one deadline from acceptance to
// reply (time queued counts), and keeps the search metrics.
//
// Retry (issue 23): search runs as replicas in a queue group, and a request
// NATS handed to a replica that then died is never answered. So a request
// gets attempt_timeout_ms at first; on no reply in that time, or no
// responders, it is sent once more (NATS picks a replica again) with what is
// left of timeout_ms. Never more than two requests per search, and never past
// its deadline. A reply carrying an error is not retried.
//
// Ownership: main owns it; it borrows the Bus (SetBus) and the Registry,
// which must outlive it. Threading: every method is thread-safe. The
// destructor runs what is queued and joins the pool, so whatever the Done
// callbacks touch (the workers' loops) must still exist then.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "folio/bus/bus.h"
#include "folio/bus/search_schema.h"
#include "folio/core/status.h"
#include "folio/core/thread_pool.h"
#include "folio/metrics/metrics.h"

namespace folio::edge {

struct SearchOptions {
  size_t threads = 8;          // pool threads making bus requests (default 8)
  size_t max_in_flight = 64;   // searches accepted and not yet answered; past it Start fails: 503 (default 64)
  int64_t timeout_ms = 2'000;  // from acceptance to the reply, queueing included (default 2000)
  // The first request's own timeout; the retry gets the rest of timeout_ms
  // (default 0 = timeout_ms / 2).
  int64_t attempt_timeout_ms = 0;
};

// What became of one reader's search; the label of folio_edge_searches_total.
enum class SearchOutcome {
  kOk,           // the search service answered with hits (possibly none)
  kEmptyQuery,   // no q: the empty search page, no request made
  kInvalid,      // bad parameters: 400, no request made
  kOverloaded,   // max_in_flight reached: 503, no request made
  kUnavailable,  // not connected, or no search service answered: 503
  kTimeout,      // no reply within timeout_ms: 504
  kError,        // the service answered with an error, or undecodable bytes
};

class SearchBackend {
 public:
  // Called once per accepted search, on a pool thread. On failure: kUnavailable
  // (no bus yet, or no responders twice), kDeadlineExceeded (timeout), kInternal
  // (a reply that does not decode). A reply carrying an error is OK here.
  using Done = std::function<void(Result<bus::SearchReply>)>;

  SearchBackend(SearchOptions options, metrics::Registry* registry);
  ~SearchBackend();
  SearchBackend(const SearchBackend&) = delete;
  SearchBackend& operator=(const SearchBackend&) = delete;

  // The connection to use from now on (nullptr: none; searches then fail
  // kUnavailable). REQUIRES: *bus outlives this backend.
  void SetBus(bus::Bus* bus);

  // Accepts a search and runs it on the pool; `done` is then called exactly
  // once. Returns false (done is not called; counted as kOverloaded) when
  // max_in_flight searches are already in flight.
  bool Start(bus::SearchQuery query, Done done);

  // Counts an outcome decided by the caller (kEmptyQuery, kInvalid...).
  void Count(SearchOutcome outcome);

  size_t in_flight() const { return in_flight_.load(); }
  const SearchOptions& options() const { return options_; }

 private:
  Result<bus::SearchReply> Call(const bus::SearchQuery& q, std::chrono::steady_clock::time_point accepted);

  const SearchOptions options_;
  std::atomic<bus::Bus*> bus_{nullptr};
  std::atomic<size_t> in_flight_{0};
  metrics::Counter* outcomes_[7];  // by SearchOutcome
  metrics::Histogram* latency_;    // seconds from acceptance to reply, every request made
  metrics::Counter* retries_;      // second requests sent (folio_edge_search_retries_total)
  metrics::Gauge* in_flight_gauge_;
  ThreadPool pool_;  // last: joined first, while everything above still exists
};

}  // namespace folio::edge
