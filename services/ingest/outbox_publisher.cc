// OutboxPublisher (outbox_publisher.h).
#include "outbox_publisher.h"

#include "folio/bus/page_schema.h"
#include "folio/core/log.h"
#include "writer_parts.h"

namespace folio::ingest {

OutboxPublisher::OutboxPublisher(std::string site, Store* store, metrics::Registry* registry)
    : site_(std::move(site)), store_(store) {
  metrics::Labels l{{"site", site_}};
  publish_failures_ = &registry->NewCounter("folio_ingest_publish_failures_total", "Failed outbox publish rounds", l);
  outbox_pending_ = &registry->NewGauge("folio_ingest_outbox_pending", "Committed messages not yet acknowledged", l);
}

bool OutboxPublisher::SendOutboxMsg(int kind, const std::string& subject, const std::string& payload,
                                    const std::string& msg_id) {
  Status s;
  switch (kind) {
    case OutboxMsg::kKvPut: s = bus_->KvPutAsync(bus::kPagesBucket, subject, payload); break;
    case OutboxMsg::kKvDelete: s = bus_->KvDeleteAsync(bus::kPagesBucket, subject); break;
    case OutboxMsg::kPagePut: return true;  // the page is gone; a later message deletes it
    default: s = bus_->PublishAsync(subject, payload, msg_id); break;
  }
  if (s.code() == Code::kTooLarge) {
    // Permanent: retrying would wedge the outbox. The push that made it
    // already warned the author (kMaxPublishedPage); skip it.
    log::Error("page too large for the bus; not published", {{"subject", subject}, {"error", s.message()}});
    publish_failures_->Increment();
    return true;
  }
  if (!s.ok()) {
    log::Warn("publish failed; will retry", {{"subject", subject}, {"error", s.message()}});
    publish_failures_->Increment();
    (void)bus_->WaitForAcks(kAckTimeoutMs);
    return false;
  }
  return true;
}

bool OutboxPublisher::AckRound(int64_t upto_seq) {
  if (Status s = bus_->WaitForAcks(kAckTimeoutMs); !s.ok()) {
    log::Warn("publish not acknowledged; will retry", {{"error", s.message()}});
    publish_failures_->Increment();
    return false;
  }
  if (Status s = store_->AckOutbox(upto_seq); !s.ok()) {
    log::Error("outbox ack failed", {{"error", s.message()}});
    return false;
  }
  return true;
}

bool OutboxPublisher::PublishCommitted(const Commit& c) {
  // The commit's messages are the whole outbox: send them from memory
  // instead of reading back what was just written. Same order, same acks,
  // same rows dropped as PublishPending's rounds.
  if (!bus_ || !bus_->connected() || c.outbox.empty()) return PublishPending();
  size_t round_start = 0;
  for (size_t i = 0; i < c.outbox.size(); ++i) {
    const OutboxMsg& m = c.outbox[i];
    const std::string& payload = m.page >= 0 ? c.pages[static_cast<size_t>(m.page)].record : m.payload;
    if (!SendOutboxMsg(m.kind, m.subject, payload, m.msg_id)) return false;
    if (i + 1 - round_start == kOutboxRound || i + 1 == c.outbox.size()) {
      if (!AckRound(m.seq)) return false;
      round_start = i + 1;
    }
  }
  outbox_pending_->Set(0);
  return true;
}

bool OutboxPublisher::PublishPending() {
  auto size = store_->OutboxSize();
  if (size.ok()) outbox_pending_->Set(static_cast<double>(*size));
  if (!bus_ || !bus_->connected()) return size.ok() && *size == 0;
  for (;;) {
    auto msgs = store_->PendingOutbox(kOutboxRound);
    if (!msgs.ok()) {
      log::Error("outbox read failed", {{"error", msgs.status().message()}});
      return false;
    }
    if (msgs->empty()) {
      outbox_pending_->Set(0);
      return true;
    }
    for (const auto& m : *msgs) {
      if (!SendOutboxMsg(m.kind, m.subject, m.payload, m.msg_id)) return false;
    }
    if (!AckRound(msgs->back().seq)) return false;
  }
}

Status OutboxPublisher::ResyncIfNeeded(int64_t version) {
  if (!bus_) return Status::Unavailable("not connected to NATS");
  auto marker = bus_->KvGet(bus::kPagesBucket, internal::MetaKey(site_));
  if (marker.ok() && *marker == std::to_string(version)) return Status::Ok();
  if (!marker.ok() && marker.status().code() != Code::kNotFound) return marker.status();
  // The bucket does not hold our latest version (a new or wiped NATS): republish everything.
  auto pages = store_->AllPages(site_);
  if (!pages.ok()) return pages.status();
  log::Info("republishing all pages", {{"site", site_}, {"pages", std::to_string(pages->size())}});
  size_t i = 0;
  for (const auto& p : *pages) {
    if (Status s = bus_->KvPutAsync(bus::kPagesBucket, bus::PageKey(site_, p.url), p.record); !s.ok()) return s;
    if (++i % kOutboxRound == 0) {
      if (Status s = bus_->WaitForAcks(kAckTimeoutMs); !s.ok()) return s;
    }
  }
  if (Status s = bus_->KvPutAsync(bus::kPagesBucket, internal::MetaKey(site_), std::to_string(version)); !s.ok()) {
    return s;
  }
  return bus_->WaitForAcks(kAckTimeoutMs);
}

}  // namespace folio::ingest
