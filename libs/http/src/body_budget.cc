// The body budget (body_budget.h): BodyBudget's atomics, and what a
// Connection reserves from it. A request reserves after its AdmissionCheck and
// before its body is read (OnHeadersDone: the parser holds after the headers
// whenever a budget is set and the request has a body); a chunked buffered
// body reserves more after each read, by what it occupies in the buffer.
// One compare-and-swap per reservation; requests without a body reserve
// nothing, and a Server without a budget (the edge's) never gets here.
#include <cstdio>
#include <string>

#include "connection.h"

namespace folio::http {

namespace {

std::string Size(uint64_t bytes) {
  char out[32];
  if (bytes < (1u << 20)) {
    snprintf(out, sizeof out, "%llu bytes", static_cast<unsigned long long>(bytes));
  } else {
    snprintf(out, sizeof out, "%.1f MiB", static_cast<double>(bytes) / (1u << 20));
  }
  return out;
}

// The answer to a reservation of `bytes` that did not fit: 503 with
// Retry-After when waiting can help, 413 when the request alone is larger
// than the whole budget.
Response BudgetRefusal(const BodyBudget& budget, uint64_t bytes, Status* why) {
  if (bytes > budget.limit()) {
    *why = Status::TooLarge("this request's body needs " + Size(bytes) + ", more than the " + Size(budget.limit()) +
                            " this server holds for all request bodies together; send a smaller one");
    return Response::Error(*why);
  }
  *why = Status::Unavailable("the server is busy: request bodies in flight hold " + Size(budget.in_flight()) +
                             " of the " + Size(budget.limit()) + " it holds at once, and this request needs " +
                             Size(bytes) + " more; nothing of it was kept: retry after the seconds Retry-After gives");
  Response r = Response::Error(*why);
  r.headers.emplace_back("Retry-After", std::to_string(kBodyBudgetRetryAfterSeconds));
  return r;
}

}  // namespace

bool BodyBudget::TryReserve(uint64_t bytes) {
  uint64_t now = in_flight_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ || now > limit_ - bytes) {
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!in_flight_.compare_exchange_weak(now, now + bytes, std::memory_order_acq_rel, std::memory_order_relaxed));
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (now + bytes > peak && !peak_.compare_exchange_weak(peak, now + bytes, std::memory_order_relaxed)) {
  }
  return true;
}

// OnHeadersDone, for a request with a body. A Content-Length body reserves
// all of it at once (the buffer is sized for it then); a streamed one what
// the server and its reader hold; a chunked buffered one what it holds now.
bool Connection::ReserveBody() {
  if (budget_ == nullptr) return true;
  uint64_t length = parser_.body_remaining();  // nothing of the body parsed yet; 0: chunked
  uint64_t want;
  if (parser_.streaming()) {
    want = server_->options.stream_body_budget_bytes;
    if (length != 0 && length < want) want = length;
  } else if (length != 0) {
    want = length + kBodyPadding;
  } else {
    body_grows_ = true;
    want = buf_.end - buf_.start;
  }
  return TakeBudget(want);
}

bool Connection::TakeBudget(uint64_t bytes) {
  if (budget_->TryReserve(bytes)) {
    body_reserved_ += bytes;
    return true;
  }
  Status why;
  Response answer = BudgetRefusal(*budget_, bytes, &why);
  RespondError(std::move(answer), why);
  return false;
}

bool Connection::CoverGrowingBody() {
  if (!body_grows_) return true;
  uint64_t held = buf_.end - buf_.start;
  return held <= body_reserved_ || TakeBudget(held - body_reserved_);
}

void Connection::ReleaseBody() {
  body_grows_ = false;
  if (body_reserved_ != 0) budget_->Release(std::exchange(body_reserved_, 0));
}

}  // namespace folio::http
