#include "search_backend.h"

#include <algorithm>
#include <iterator>
#include <type_traits>
#include <utility>

#include "folio/core/log.h"

namespace folio::edge {
namespace {

constexpr const char* kOutcomeNames[] = {"ok", "empty_query", "invalid", "overloaded",
                                         "unavailable", "timeout", "error"};

SearchOutcome OutcomeOf(const Result<bus::SearchReply>& r) {
  if (r.ok()) return r->error.empty() ? SearchOutcome::kOk : SearchOutcome::kError;
  switch (r.status().code()) {
    case Code::kDeadlineExceeded: return SearchOutcome::kTimeout;
    case Code::kUnavailable: return SearchOutcome::kUnavailable;
    default: return SearchOutcome::kError;
  }
}

}  // namespace

SearchBackend::SearchBackend(SearchOptions options, metrics::Registry* registry)
    : options_(options),
      latency_(&registry->NewHistogram("folio_edge_search_seconds",
                                       "Reader searches: time from acceptance to the search service's reply",
                                       {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5})),
      retries_(&registry->NewCounter("folio_edge_search_retries_total",
                                     "Reader searches sent a second time (first request unanswered or no responders)")),
      in_flight_gauge_(&registry->NewGauge("folio_edge_searches_in_flight", "Reader searches in flight")),
      pool_(options.threads == 0 ? 1 : options.threads) {
  static_assert(std::size(kOutcomeNames) == std::extent_v<decltype(outcomes_)>);
  for (size_t i = 0; i < std::size(kOutcomeNames); ++i) {
    outcomes_[i] = &registry->NewCounter("folio_edge_searches_total", "Reader searches by outcome",
                                         {{"outcome", kOutcomeNames[i]}});
  }
}

SearchBackend::~SearchBackend() = default;

void SearchBackend::SetBus(bus::Bus* bus) { bus_.store(bus, std::memory_order_release); }

void SearchBackend::Count(SearchOutcome outcome) { outcomes_[static_cast<size_t>(outcome)]->Increment(); }

bool SearchBackend::Start(bus::SearchQuery query, Done done) {
  size_t n = in_flight_.load();
  do {
    if (n >= options_.max_in_flight) {
      Count(SearchOutcome::kOverloaded);
      return false;
    }
  } while (!in_flight_.compare_exchange_weak(n, n + 1));
  in_flight_gauge_->Increment();
  auto accepted = std::chrono::steady_clock::now();
  pool_.Submit([this, query = std::move(query), done = std::move(done), accepted] {
    Result<bus::SearchReply> r = Call(query, accepted);
    latency_->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - accepted).count());
    Count(OutcomeOf(r));
    in_flight_.fetch_sub(1);
    in_flight_gauge_->Decrement();
    done(std::move(r));
  });
  return true;
}

Result<bus::SearchReply> SearchBackend::Call(const bus::SearchQuery& q,
                                             std::chrono::steady_clock::time_point accepted) {
  auto deadline = accepted + std::chrono::milliseconds(options_.timeout_ms);
  auto left_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
  };
  if (left_ms() <= 0) return Status(Code::kDeadlineExceeded, "search queued past its deadline");
  bus::Bus* b = bus_.load(std::memory_order_acquire);
  if (b == nullptr) return Status::Unavailable("not connected to NATS yet");
  const std::string request = bus::EncodeSearchQuery(q);
  int64_t first = options_.attempt_timeout_ms > 0 ? options_.attempt_timeout_ms : options_.timeout_ms / 2;
  auto data = b->Request(bus::kSearchQuerySubject, request, std::max<int64_t>(1, std::min(first, left_ms())));
  if (!data.ok() && (data.status().code() == Code::kDeadlineExceeded || data.status().code() == Code::kUnavailable) &&
      left_ms() > 0) {
    // The replica it went to may have died with it (or none was subscribed
    // for a moment): once more, within the deadline.
    retries_->Increment();
    data = b->Request(bus::kSearchQuerySubject, request, left_ms());
  }
  if (!data.ok()) return data.status();
  bus::SearchReply reply;
  if (Status s = bus::DecodeSearchReply(*data, &reply); !s.ok()) {
    // A bug on one side of the contract: rare, so worth a line.
    log::Warn("undecodable search reply", {{"error", s.message()}});
    return Status::Internal("undecodable search reply");
  }
  return reply;
}

}  // namespace folio::edge
