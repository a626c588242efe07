#include "pages_connector.h"

#include <chrono>
#include <utility>

#include "folio/bus/connect.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/site_schema.h"
#include "folio/core/log.h"

namespace folio::edge {

PagesConnector::PagesConnector(const ServiceBasics& basics, metrics::Registry* registry)
    : basics_(basics),
      bus_metrics_(registry),
      lag_metrics_{&registry->NewGauge("folio_edge_bus_lag",
                                       "Messages of the pages stream (KV_pages) not yet applied by this edge"),
                   &registry->NewGauge("folio_edge_applied_revision",
                                       "Revision of the last pages entry this edge applied")} {}

PagesConnector::~PagesConnector() { Join(); }

void PagesConnector::Start(bus::KvWatcher::OnEntry on_entry, bus::KvWatcher::OnReplayed on_replayed,
                           SearchBackend* search, EdgeState* state) {
  thread_ = std::thread([this, on_entry = std::move(on_entry), on_replayed = std::move(on_replayed), search, state] {
    bus::BusOptions o = bus::BusOptionsFor(basics_, "folio-edge", &bus_metrics_);
    // With its NATS user it may only read (issue 24): ingest and search make
    // the schema, and a try would be a permissions violation. Without users
    // (a server for development or tests) it makes it as before.
    o.create_schema = basics_.nats_user.empty();
    auto watch = [&](bus::Bus* b) -> Status {
      state->SetNotReady("replaying the pages bucket");
      auto w = bus::KvWatcher::Start(b, bus::kPagesBucket, on_entry, on_replayed, lag_metrics_);
      if (!w.ok()) return Status(w.status().code(), "cannot watch the pages bucket: " + w.status().message());
      watcher_ = std::move(*w);
      search->SetBus(b);
      return Status::Ok();
    };
    auto on_failure = [&](const Status& s) {
      log::Warn("cannot watch pages; retrying", {{"error", s.message()}});
      state->SetNotReady(s.message());
    };
    auto wait = [&](int64_t ms) {
      for (int64_t i = 0; i < ms / 100 && !state->stopping; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      return !state->stopping;
    };
    if (state->stopping) return;
    bus_ = bus::ConnectRetrying(o, watch, on_failure, wait);
    if (bus_) log::Info("watching pages", {{"url", o.url}});
  });
}

void PagesConnector::Join() {
  if (thread_.joinable()) thread_.join();
}

void PagesConnector::Close() {
  watcher_.reset();
  bus_.reset();
}

}  // namespace folio::edge
