#include "bus_link.h"

#include <utility>

#include "folio/bus/connect.h"
#include "folio/core/log.h"

namespace folio::ingest {

BusLink::BusLink(const ServiceBasics& basics, http::Loop* writer_loop, Sites* sites, metrics::Registry* registry)
    : sites_(sites),
      metrics_(registry),
      options_(bus::BusOptionsFor(basics, "folio-ingest", &metrics_)),
      related_(writer_loop, sites, registry) {}

void BusLink::TryConnect() {
  if (bus_) return;
  auto b = bus::ConnectWithSchema(options_);
  if (!b.ok()) {
    log::Warn("cannot connect to NATS; retrying", {{"error", b.status().message()}});
    return;
  }
  bus_ = std::move(*b);
  if (may_publish_) bus_->SetWriteFence(may_publish_);  // every publish, also a push's own
  sites_->SetBus(bus_.get());
  sites_->PublishPending();
  sites_->ResyncIfNeeded();
  if (Status s = sites_->PublishSiteRecords(); !s.ok()) {
    log::Warn("site records not published; edges may not know every host yet", {{"error", s.message()}});
  }
  related_.Start(bus_.get());
  connected_ = true;
  log::Info("connected to NATS", {{"url", options_.url}});
}

void BusLink::Round() {
  if (!bus_) TryConnect();
  else if (!may_publish_ || may_publish_()) sites_->PublishPending();
}

}  // namespace folio::ingest
