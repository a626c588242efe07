// JetStreamGauges: what NATS JetStream stores, on folio-ingest's /metrics
// (issue 24; Debian ships no NATS exporter, and the streams folio creates
// have size limits worth watching):
//   folio_jetstream_stream_messages{stream}        (gauge)
//   folio_jetstream_stream_bytes{stream}           (gauge)
//   folio_jetstream_stream_max_bytes{stream}       (gauge: limit; -1 none)
//   folio_jetstream_stream_max_age_seconds{stream} (gauge: limit; 0 none)
//   folio_jetstream_account_storage_bytes          (gauge: file storage used)
//   folio_jetstream_account_memory_bytes           (gauge: memory storage used)
//   folio_jetstream_account_max_storage_bytes      (gauge: the account's
//       limit; -1 none, then the server's max_file_store bounds it)
//   folio_jetstream_up (gauge: 1 when the last refresh read all of it)
// for every stream of the account (the pages bucket is KV_pages). Read with
// the JetStream API (bus::Bus::ListStreamUsage, GetAccountUsage) over a
// connection of its own, every interval on a metrics::Refresher thread,
// never on the writer or HTTP loop; every second until it can connect and
// the notes stream exists (ingest's BusLink creates the streams).
//
// Ownership: borrows the registry (outlives this object); owns its thread
// and its Bus. Threading: construct and destroy on one thread.
#pragma once

#include <cstdint>
#include <memory>

#include "folio/bus/bus.h"
#include "folio/metrics/metrics.h"
#include "folio/metrics/refresher.h"

namespace folio::ingest {

class JetStreamGauges {
 public:
  static constexpr int64_t kDefaultIntervalMs = 30'000;
  // `options`: how to reach NATS (bus::BusOptionsFor); its metrics pointer
  // is ignored (this connection is not the service's bus).
  JetStreamGauges(metrics::Registry* registry, bus::BusOptions options, int64_t interval_ms = kDefaultIntervalMs);
  ~JetStreamGauges();
  JetStreamGauges(const JetStreamGauges&) = delete;
  JetStreamGauges& operator=(const JetStreamGauges&) = delete;

 private:
  bool Refresh();  // the refresher's thread; true if everything was read

  metrics::Registry* registry_;
  bus::BusOptions options_;
  std::unique_ptr<bus::Bus> bus_;  // the refresher's thread only
  bool failing_ = false;           // the refresher's thread only: log a failure once
  metrics::Gauge &up_, &storage_, &memory_, &max_storage_;
  std::unique_ptr<metrics::Refresher> refresher_;
};

}  // namespace folio::ingest
