// How a service reaches NATS at start: one attempt (Connect, then
// EnsureSchema) and the loop that retries it, with the service's own setup
// (a watcher, a consumer, responders), until everything is in place. Written
// once here for folio-ingest, folio-edge and folio-search.
//
// Ownership: the returned Bus belongs to the caller; whatever `setup`
// started on it must be destroyed before it (see bus.h).
// Threading: both functions block (up to BusOptions::connect_timeout_ms per
// server per attempt); call them from a thread that may wait (not an event
// loop that serves readers).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "folio/bus/bus.h"
#include "folio/core/service.h"
#include "folio/core/status.h"

namespace folio::bus {

// The options a service connects with: --nats, --nats-replicas,
// --nats-user and its password, --nats-ca (from `basics`), the client name shown by the server (the service's binary name)
// and its BusMetrics (may be null; not owned).
BusOptions BusOptionsFor(const ServiceBasics& basics, std::string name, BusMetrics* metrics);

// One attempt: Bus::Connect, then EnsureSchema. The error says which step
// failed, for logs and /readyz: "NATS not reachable at <url>: ..." or
// "JetStream setup failed: ..." (the code of the failing call).
Result<std::unique_ptr<Bus>> ConnectWithSchema(const BusOptions& options);

struct RetryPolicy {
  int64_t first_delay_ms = 1000;  // wait after the first failure
  int64_t max_delay_ms = 1000;    // the wait doubles after each failure, up to this
};

// Retries ConnectWithSchema and then `setup` (may be empty) on the new Bus
// until both succeed; returns that Bus. After each failure: `on_failure`
// (may be empty) with the error (ConnectWithSchema's, or setup's as it
// returned it; a Bus whose setup failed is closed), then `wait(delay_ms)`;
// when `wait` returns false (the service is stopping) gives up and returns
// nullptr. `setup` keeps what it starts on the Bus (it outlives the call).
using SetupFn = std::function<Status(Bus*)>;
using OnFailureFn = std::function<void(const Status&)>;
using WaitFn = std::function<bool(int64_t delay_ms)>;
std::unique_ptr<Bus> ConnectRetrying(const BusOptions& options, const SetupFn& setup, const OnFailureFn& on_failure,
                                     const WaitFn& wait, RetryPolicy policy = {});

}  // namespace folio::bus
