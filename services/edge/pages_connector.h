// PagesConnector: the edge's link to NATS. A side thread connects, retrying
// until NATS answers (bus::ConnectRetrying), starts the watcher of the KV
// bucket "pages" (entries to the page feed, the end of the replay to the
// public port) and hands the connection to the search backend. Each failure
// is logged and becomes the edge's not-ready reason (EdgeState); the thread
// gives up when the edge stops.
//
// Ownership: owns the thread, the Bus and the KvWatcher, and the bus and lag
// metrics (registered in the borrowed registry at construction). The state
// and the search backend are borrowed: the state outlives this object; the
// search backend is destroyed between Join and Close (its pool uses the Bus).
// Threads: construct, Start, Join and Close on the main thread.
#pragma once

#include <memory>
#include <thread>

#include "folio/bus/bus.h"
#include "folio/core/service.h"
#include "folio/metrics/metrics.h"
#include "lifecycle.h"
#include "search_backend.h"

namespace folio::edge {

class PagesConnector {
 public:
  // Registers the bus metrics, folio_edge_bus_lag and
  // folio_edge_applied_revision in `registry`.
  PagesConnector(const ServiceBasics& basics, metrics::Registry* registry);
  ~PagesConnector();  // joins the thread if still running

  // Starts the thread. `on_entry` and `on_replayed` run on the watcher's
  // thread. REQUIRES: called once.
  void Start(bus::KvWatcher::OnEntry on_entry, bus::KvWatcher::OnReplayed on_replayed, SearchBackend* search,
             EdgeState* state);
  // Waits for the thread (it returns once connected, or once state->stopping).
  void Join();
  // Stops the watcher, then closes the connection. REQUIRES: Join called.
  void Close();

 private:
  const ServiceBasics& basics_;
  bus::BusMetrics bus_metrics_;  // outlives bus_
  bus::KvWatcherMetrics lag_metrics_;
  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<bus::KvWatcher> watcher_;
  std::thread thread_;
};

}  // namespace folio::edge
