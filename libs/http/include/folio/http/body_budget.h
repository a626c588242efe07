// BodyBudget: a bound on the bytes of request bodies that the Servers of one
// process hold at once, so that many large uploads together cannot take the
// process's memory (issue 22: 16 pushes of 70 MiB took ingest from 45 MiB
// to 843 MiB). Several Servers on several loops share one (each is given it
// in ServerOptions::body_budget).
//
// What a request reserves, once its headers are complete, after its route's
// AdmissionCheck admitted it (server.h) and before a byte of its body is read:
//   - a buffered body with Content-Length: that length plus kBodyPadding;
//   - a buffered chunked body: the bytes it occupies in the connection's
//     buffer so far, then more after each read, as it grows;
//   - a streamed body (Router::HandleStreaming): what the server and the
//     reader hold of it at most, ServerOptions::stream_body_budget_bytes
//     (or its Content-Length when smaller), however long the body is.
// A reservation that does not fit is answered 503 with `Retry-After` and the
// JSON error body (bytes in flight, the limit, what to do), and the
// connection closes without reading the body (or the rest of it); one that
// could never fit (more than the limit) gets 413. A reservation is released
// once the answer is written whole, or when the connection is gone and no
// handler holds its request any more (the memory it counts is free then).
//
// The bound covers the server's buffers only: a handler that copies a body
// must count the copy itself (or not copy: request views stay valid while
// its Responder is alive and unanswered, server.h).
//
// Ownership: owned by the caller (a service's main); it must outlive every
// Server given it and every Responder and AdmissionGate of theirs.
// Threading: every method may be called from any thread (atomics only).
#pragma once

#include <atomic>
#include <cstdint>

namespace folio::http {

// Seconds a 503 of the body budget asks the client to wait (Retry-After).
inline constexpr int kBodyBudgetRetryAfterSeconds = 1;

class BodyBudget {
 public:
  // REQUIRES: limit_bytes > 0.
  explicit BodyBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}
  BodyBudget(const BodyBudget&) = delete;
  BodyBudget& operator=(const BodyBudget&) = delete;

  // Takes `bytes` if in_flight() + bytes <= limit(); otherwise takes
  // nothing, counts one refusal and returns false.
  [[nodiscard]] bool TryReserve(uint64_t bytes);
  // Gives back bytes taken by TryReserve. REQUIRES: they were taken and
  // not given back yet.
  void Release(uint64_t bytes) { in_flight_.fetch_sub(bytes, std::memory_order_acq_rel); }

  uint64_t limit() const { return limit_; }
  uint64_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  // The highest in_flight() since the budget was made.
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  // Reservations refused (each answered 503 or 413).
  uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> in_flight_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<uint64_t> refusals_{0};
};

}  // namespace folio::http
