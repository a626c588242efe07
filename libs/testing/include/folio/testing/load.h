// HttpLoad: a small closed-loop HTTP/1.1 load generator for fault tests
// (restarts, handovers, NATS outages under reader traffic). Each of N
// connections runs on its own thread: connect, send GET (keep-alive) for the
// next path of a rotating list, read the whole response, repeat; it
// reconnects after a response that says "Connection: close" (and, with
// requests_per_connection, after asking for one itself).
//
// What counts as what, strictly (as wrk counts):
//  - a response: any complete HTTP response, counted by status code;
//  - an error: a request that was sent (or could not be sent on an open
//    connection) and got no complete response: reset, EOF, timeout, garbage;
//  - a connect error: no connection could be made (refused, timeout).
// A server that closes an idle keep-alive connection just as the next
// request goes out therefore costs an error: that is the point.
//
// Only Content-Length bodies are read (folio never sends chunked); a
// response without one (other than HEAD/1xx/204/304) is an error.
//
// Threading: Start/Stop/Snapshot from one thread (the test's); the
// connection threads are owned by the object and joined by Stop (and the
// destructor).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace folio::testing {

struct LoadOptions {
  int port = 0;                         // 127.0.0.1:<port>; required
  std::vector<std::string> paths;       // request targets, taken in turn; required
  std::string host_header = "localhost";  // Host: sent with every request
  int connections = 4;                  // threads, each one connection at a time
  int pause_us = 0;                     // sleep between requests per connection (0 = flat out)
  int timeout_ms = 5000;                // connect, send and whole-response timeout
  bool accept_gzip = false;             // send Accept-Encoding: gzip
  int requests_per_connection = 0;      // the Nth request of a connection says Connection: close,
                                        // so new connections keep being made (0 = never)
};

struct LoadStats {
  uint64_t requests = 0;                // complete responses
  std::map<int, uint64_t> by_status;    // status code -> responses
  uint64_t errors = 0;                  // requests without a complete response
  uint64_t connect_errors = 0;          // connections that could not be made
  uint64_t reconnects = 0;              // new connections after the first per thread
  std::vector<std::string> samples;     // the first few errors, described, for messages

  uint64_t Count(int status) const {
    auto it = by_status.find(status);
    return it == by_status.end() ? 0 : it->second;
  }
  // "12034 responses (200: 12000, 404: 34), 0 errors, 0 connect errors; ..."
  std::string Describe() const;
};

class HttpLoad {
 public:
  explicit HttpLoad(LoadOptions options);
  ~HttpLoad();  // Stop()
  HttpLoad(const HttpLoad&) = delete;
  HttpLoad& operator=(const HttpLoad&) = delete;

  void Start();
  // Stops every connection (a request in flight finishes or times out) and
  // returns the totals. Idempotent.
  LoadStats Stop();
  // Totals so far, while running.
  LoadStats Snapshot() const;
  // Blocks until at least n more responses (any status) were counted than
  // when called, or timeout_ms passes; returns whether they were.
  bool WaitForResponses(uint64_t n, int timeout_ms) const;

 private:
  void Run(int index);
  void Record(int status, bool error, bool connect_error, bool reconnect, const std::string& what);

  LoadOptions options_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  LoadStats stats_;  // GUARDED_BY(mu_)
};

}  // namespace folio::testing
