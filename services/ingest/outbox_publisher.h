// OutboxPublisher: sends one site's committed outbox (page puts and
// deletions in the pages bucket, note events on the stream) to NATS
// JetStream in rounds of kOutboxRound messages, each acknowledged before
// its rows leave the outbox, so a crash or an outage only delays them
// (at-least-once; msg ids and KV puts make a repeat harmless). Also the
// resync after NATS lost its data, and the publish metrics.
//
// Ownership: owned by SiteWriter; borrows the Store for its lifetime and
// the Bus while set (SetBus; nullptr while disconnected). Owns its metrics
// (folio_ingest_publish_failures_total, folio_ingest_outbox_pending).
// Threads: ingest's writer thread only (the thread that commits, and the
// writer loop's one-second round via Sites); it blocks on acks (up to
// kAckTimeoutMs per round).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "folio/bus/bus.h"
#include "folio/core/status.h"
#include "folio/metrics/metrics.h"
#include "store.h"

namespace folio::ingest {

class OutboxPublisher {
 public:
  OutboxPublisher(std::string site, Store* store, metrics::Registry* registry);

  // Sets the bus (once connected); nullptr while disconnected.
  void SetBus(bus::Bus* bus) { bus_ = bus; }

  // Publishes the whole outbox; true when it is empty afterwards (false:
  // not connected, refused or not acknowledged; the rest waits for a retry).
  bool PublishPending();
  // PublishPending for a commit just made whose messages are the whole
  // outbox (Commit::outbox_was_empty): sent from memory, not read back;
  // same order, acks and rows dropped. REQUIRES: c committed.
  bool PublishCommitted(const Commit& c);
  // If the bus lost its data (no marker for `version`), republishes every
  // page of the site and the marker. kUnavailable without a bus; bus and
  // store errors as Status.
  Status ResyncIfNeeded(int64_t version);

 private:
  // Messages sent per round before waiting for their acks.
  static constexpr size_t kOutboxRound = 4096;
  static constexpr int64_t kAckTimeoutMs = 10'000;

  // One outbox message to the bus, without waiting for its ack. False when
  // the round must stop (the bus refused it; the outbox keeps it for a retry).
  bool SendOutboxMsg(int kind, const std::string& subject, const std::string& payload, const std::string& msg_id);
  // Waits for the round's acks, then drops the outbox through `upto_seq`.
  bool AckRound(int64_t upto_seq);

  const std::string site_;
  Store* store_;
  bus::Bus* bus_ = nullptr;
  metrics::Counter* publish_failures_;
  metrics::Gauge* outbox_pending_;
};

}  // namespace folio::ingest
