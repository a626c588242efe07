// BusLink: folio-ingest's side of NATS: the connection, made on the writer
// loop, and the RelatedConsumer that reads search's related lists over it.
// Once connected it publishes whatever the outbox holds, resyncs the sites
// that need it, publishes the site records and starts the consumer; until
// then each attempt's failure is logged and the next one is up to the
// writer loop's round (writer_chores.h).
//
// Ownership: owns the Bus, the RelatedConsumer and the bus metrics
// (registered in the borrowed registry at construction); borrows the writer
// Loop, Sites and the registry, which outlive it.
// Threads: TryConnect and Round on the writer thread only; connected() and
// url() from any thread; StopRelated and Close on the main thread, in that
// order, around the writer thread's end (see main.cc).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "folio/bus/bus.h"
#include "folio/core/service.h"
#include "folio/http/loop.h"
#include "folio/metrics/metrics.h"
#include "related_consumer.h"
#include "sites.h"

namespace folio::ingest {

class BusLink {
 public:
  BusLink(const ServiceBasics& basics, http::Loop* writer_loop, Sites* sites, metrics::Registry* registry);

  // One attempt to connect, when not connected yet (see above). Writer thread.
  void TryConnect();
  // The writer loop's periodic step: connect if not connected, else publish
  // the outbox (only while may_publish says so). Writer thread.
  void Round();
  // Nothing is published while `may_publish` returns false (leader.h: a
  // process whose lease lapsed publishes nothing more, issue 23): Round
  // skips the outbox, and the Bus is fenced (bus::Bus::SetWriteFence), so a
  // push applied just before the lapse keeps its messages in the outbox.
  // Before the writer thread starts; null (the default) = always.
  void SetPublishGate(std::function<bool()> may_publish) { may_publish_ = std::move(may_publish); }
  // True once connected. Any thread.
  bool connected() const { return connected_; }
  // The NATS URL (--nats), for logs and /readyz.
  const std::string& url() const { return options_.url; }

  // Stops the related consumer (a batch the writer has not run is
  // redelivered). Before Close.
  void StopRelated() { related_.Stop(); }
  // Closes the connection. REQUIRES: StopRelated called, and the writer
  // thread has ended.
  void Close() { bus_.reset(); }

 private:
  Sites* sites_;
  bus::BusMetrics metrics_;  // outlives bus_
  bus::BusOptions options_;
  std::unique_ptr<bus::Bus> bus_;  // writer thread
  RelatedConsumer related_;        // stopped before bus_ goes
  std::atomic<bool> connected_{false};
  std::function<bool()> may_publish_;  // writer thread
};

}  // namespace folio::ingest
