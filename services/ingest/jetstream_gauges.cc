#include "jetstream_gauges.h"

#include <string>
#include <utility>

#include "folio/bus/note_schema.h"
#include "folio/core/log.h"

namespace folio::ingest {

namespace {

constexpr int64_t kRequestTimeoutMs = 5'000;

}  // namespace

JetStreamGauges::JetStreamGauges(metrics::Registry* registry, bus::BusOptions options, int64_t interval_ms)
    : registry_(registry),
      options_(std::move(options)),
      up_(registry->NewGauge("folio_jetstream_up", "1 when the last read of JetStream's usage succeeded")),
      storage_(registry->NewGauge("folio_jetstream_account_storage_bytes",
                                  "JetStream file storage used by the account")),
      memory_(registry->NewGauge("folio_jetstream_account_memory_bytes",
                                 "JetStream memory storage used by the account")),
      max_storage_(registry->NewGauge("folio_jetstream_account_max_storage_bytes",
                                      "The account's JetStream file storage limit; -1: none (the server's"
                                      " max_file_store bounds it)")) {
  options_.metrics = nullptr;
  options_.name += "-metrics";
  refresher_ = std::make_unique<metrics::Refresher>(interval_ms, [this] { return Refresh(); });
}

JetStreamGauges::~JetStreamGauges() { refresher_.reset(); }  // the thread goes before the Bus

bool JetStreamGauges::Refresh() {
  if (bus_ == nullptr) {
    Result<std::unique_ptr<bus::Bus>> b = bus::Bus::Connect(options_);
    if (!b.ok()) {
      up_.Set(0);
      return false;
    }
    bus_ = std::move(*b);
  }
  Result<std::vector<bus::Bus::StreamUsage>> streams = bus_->ListStreamUsage(kRequestTimeoutMs);
  Result<bus::Bus::AccountUsage> account = bus_->GetAccountUsage(kRequestTimeoutMs);
  if (!streams.ok() || !account.ok()) {
    up_.Set(0);
    if (!failing_) {  // retried every second: news only once (a NATS outage is FolioBusDisconnected's)
      log::Warn("cannot read JetStream usage",
                {{"error", (!streams.ok() ? streams.status() : account.status()).message()}});
    }
    failing_ = true;
    return false;
  }
  failing_ = false;
  bool schema = false;
  for (const bus::Bus::StreamUsage& u : *streams) {
    schema = schema || u.name == bus::kNotesStream;
    const metrics::Labels l = {{"stream", u.name}};
    registry_->NewGauge("folio_jetstream_stream_messages", "Messages stored in a JetStream stream", l)
        .Set(static_cast<double>(u.messages));
    registry_->NewGauge("folio_jetstream_stream_bytes", "Bytes stored in a JetStream stream", l)
        .Set(static_cast<double>(u.bytes));
    registry_->NewGauge("folio_jetstream_stream_max_bytes", "A JetStream stream's size limit; -1: none", l)
        .Set(static_cast<double>(u.max_bytes));
    registry_->NewGauge("folio_jetstream_stream_max_age_seconds", "A JetStream stream's age limit; 0: none", l)
        .Set(static_cast<double>(u.max_age_seconds));
  }
  storage_.Set(static_cast<double>(account->storage_bytes));
  memory_.Set(static_cast<double>(account->memory_bytes));
  max_storage_.Set(static_cast<double>(account->max_storage_bytes));
  up_.Set(1);
  return schema;  // not yet: ingest's BusLink has not set up its streams; look again in a second
}

}  // namespace folio::ingest
