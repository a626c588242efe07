#include "folio/bus/connect.h"

#include <algorithm>
#include <utility>

namespace folio::bus {

BusOptions BusOptionsFor(const ServiceBasics& basics, std::string name, BusMetrics* metrics) {
  BusOptions o;
  o.url = basics.nats_url;
  o.name = std::move(name);
  o.replicas = basics.nats_replicas;
  o.user = basics.nats_user;
  o.password = basics.nats_password;
  o.ca_file = basics.nats_ca;
  o.metrics = metrics;
  return o;
}

Result<std::unique_ptr<Bus>> ConnectWithSchema(const BusOptions& options) {
  auto b = Bus::Connect(options);
  if (!b.ok()) {
    return Status(b.status().code(), "NATS not reachable at " + options.url + ": " + b.status().message());
  }
  if (Status s = (*b)->EnsureSchema(); !s.ok()) return Status(s.code(), "JetStream setup failed: " + s.message());
  return std::move(*b);
}

std::unique_ptr<Bus> ConnectRetrying(const BusOptions& options, const SetupFn& setup, const OnFailureFn& on_failure,
                                     const WaitFn& wait, RetryPolicy policy) {
  int64_t delay_ms = policy.first_delay_ms;
  for (;;) {
    auto b = ConnectWithSchema(options);
    Status s = b.status();
    if (s.ok() && setup) s = setup(b->get());
    if (s.ok()) return std::move(*b);
    if (on_failure) on_failure(s);
    if (!wait(delay_ms)) return nullptr;
    delay_ms = std::min(delay_ms * 2, policy.max_delay_ms);
  }
}

}  // namespace folio::bus
