// OutboxPublisher (outbox_publisher.h): the outbox in rounds, page rows as packs.
#include "outbox_publisher.h"

#include <algorithm>
#include <optional>

#include "folio/bus/page_pack.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/site_schema.h"
#include "folio/core/log.h"
#include "writer_parts.h"

namespace folio::ingest {
namespace {

enum class RowOp { kPut, kDelete, kGone, kOther };

// What a row is to the feed; site and url are set for page rows.
RowOp Classify(const OutboxPublisher::Row& r, std::string* site, std::string* url) {
  if (r.kind != OutboxMsg::kKvPut && r.kind != OutboxMsg::kKvDelete && r.kind != OutboxMsg::kPagePut) {
    return RowOp::kOther;
  }
  if (!bus::ParsePageKey(r.subject, site, url)) return RowOp::kOther;
  if (r.kind == OutboxMsg::kPagePut) return RowOp::kGone;  // the page is gone; a later row deletes it
  return r.kind == OutboxMsg::kKvPut ? RowOp::kPut : RowOp::kDelete;
}

// The site of a "_meta.<site>" key; "" for any other.
std::string_view MetaSite(std::string_view key) {
  constexpr std::string_view kPrefix = "_meta.";
  return key.substr(0, kPrefix.size()) == kPrefix ? key.substr(kPrefix.size()) : std::string_view();
}

int64_t ParseVersion(std::string_view s) {
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

OutboxPublisher::OutboxPublisher(std::string site, Store* store, metrics::Registry* registry, int64_t snapshot_bytes)
    : site_(std::move(site)), store_(store), snapshot_bytes_(snapshot_bytes) {
  metrics::Labels l{{"site", site_}};
  publish_failures_ = &registry->NewCounter("folio_ingest_publish_failures_total", "Failed outbox publish rounds", l);
  outbox_pending_ = &registry->NewGauge("folio_ingest_outbox_pending", "Committed messages not yet acknowledged", l);
  snapshots_ = &registry->NewCounter("folio_ingest_feed_snapshots_total",
                                     "Snapshots of a site's pages published to the page feed (then older packs purged)", l);
}

// A refused publish stops the round (the outbox keeps its rows for a retry),
// except one too large for the bus: retrying would wedge the outbox. The
// push that made it already warned the author (kMaxPublishedPage); skip it.
static bool Sent(Status s, std::string_view subject, bus::Bus* bus, metrics::Counter* failures, int64_t wait_ms) {
  if (s.code() == Code::kTooLarge) {
    log::Error("page too large for the bus; not published", {{"subject", subject}, {"error", s.message()}});
    failures->Increment();
    return true;
  }
  if (!s.ok()) {
    log::Warn("publish failed; will retry", {{"subject", subject}, {"error", s.message()}});
    failures->Increment();
    (void)bus->WaitForAcks(wait_ms);
    return false;
  }
  return true;
}

bool OutboxPublisher::SendOutboxMsg(const Row& r) {
  Status s;
  switch (r.kind) {
    case OutboxMsg::kKvPut: s = bus_->KvPutAsync(bus::kPagesBucket, r.subject, r.payload); break;
    case OutboxMsg::kKvDelete: s = bus_->KvDeleteAsync(bus::kPagesBucket, r.subject); break;
    default: s = bus_->PublishAsync(r.subject, r.payload, r.msg_id); break;
  }
  if (!Sent(s, r.subject, bus_, publish_failures_, kAckTimeoutMs)) return false;
  if (std::string_view site = MetaSite(r.subject); !site.empty() && r.kind == OutboxMsg::kKvPut) {
    auto [it, fresh] = versions_.try_emplace(std::string(site), 0);
    it->second = std::max(it->second, ParseVersion(r.payload));
  }
  return true;
}

bool OutboxPublisher::SendPack(const std::string& key, const std::string& pack) {
  return Sent(bus_->KvPutAsync(bus::kPagesBucket, key, pack), key, bus_, publish_failures_, kAckTimeoutMs);
}

int64_t OutboxPublisher::VersionAfter(const std::vector<Row>& rows, size_t next, const std::string& site) const {
  // The pack completes a commit when the rows after it reach the commit's
  // version marker before another page row of the site.
  std::string s, url;
  for (size_t j = next; j < rows.size(); ++j) {
    if (Classify(rows[j], &s, &url) != RowOp::kOther) {
      if (s == site) break;
      continue;
    }
    if (rows[j].kind == OutboxMsg::kKvPut && MetaSite(rows[j].subject) == site) return ParseVersion(rows[j].payload);
  }
  auto it = versions_.find(site);
  return it == versions_.end() ? 0 : it->second;
}

bool OutboxPublisher::AckRound(int64_t upto_seq) {
  auto bytes = std::exchange(round_bytes_, {});
  if (Status s = bus_->WaitForAcks(kAckTimeoutMs); !s.ok()) {
    log::Warn("publish not acknowledged; will retry", {{"error", s.message()}});
    publish_failures_->Increment();
    return false;
  }
  if (Status s = store_->AckOutbox(upto_seq); !s.ok()) {
    log::Error("outbox ack failed", {{"error", s.message()}});
    return false;
  }
  for (const auto& [site, n] : bytes) {
    // A count lost here only delays the site's next snapshot.
    if (Status s = store_->AddFeedBytes(site, n); !s.ok()) log::Warn("feed count not stored", {{"error", s.message()}});
  }
  return true;
}

size_t OutboxPublisher::PackLimit() const {
  const int64_t server = bus_->max_payload() - 8192;
  return server > 0 ? std::min(bus::kMaxPack, static_cast<size_t>(server)) : bus::kMaxPack;
}

bool OutboxPublisher::SendRows(const std::vector<Row>& rows) {
  const size_t limit = PackLimit();
  std::optional<bus::PagePackWriter> pack;
  std::string pack_site, pack_key, site, url;
  int64_t pack_records = 0;
  size_t in_round = 0, round_bytes = 0;
  // Sends the open pack, which ends before rows[next].
  auto flush = [&](size_t next) {
    if (!pack) return true;
    pack->SetVersion(VersionAfter(rows, next, pack_site));
    std::string bytes = pack->Finish();
    pack.reset();
    ++in_round;
    round_bytes += bytes.size();
    round_bytes_[pack_site] += pack_records;
    return SendPack(pack_key, bytes);
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    RowOp op = Classify(r, &site, &url);
    if (op == RowOp::kPut || op == RowOp::kDelete) {
      size_t need = bus::PagePackWriter::OpSize(url, op == RowOp::kPut ? r.payload : std::string_view());
      if (pack && (pack_site != site || pack->size() + need > limit) && !flush(i)) return false;
      if (!pack) {
        pack.emplace(bus::PackHeader{});
        pack_site = site;
        pack_key = bus::PackKey(site, static_cast<uint64_t>(r.seq));
        pack_records = 0;
      }
      if (op == RowOp::kPut) pack->Put(url, r.payload);
      else pack->Delete(url);
      if (op == RowOp::kPut) pack_records += static_cast<int64_t>(r.payload.size());
    } else if (op == RowOp::kOther) {
      if (!flush(i) || !SendOutboxMsg(r)) return false;
      ++in_round;
      round_bytes += r.payload.size();
      // A removed site: once its withdrawal is acknowledged, its feed goes.
      if (r.kind == OutboxMsg::kKvDelete && bus::ParseSiteKey(r.subject, &site)) {
        if (!AckRound(r.seq)) return false;
        in_round = round_bytes = 0;
        if (Status s = PurgeSite(site); !s.ok()) {
          log::Warn("removed site's pages not purged from the bus", {{"site", site}, {"error", s.message()}});
        }
        continue;
      }
    }
    if (i + 1 == rows.size() || in_round >= kOutboxRound || round_bytes >= kRoundBytes) {
      if (!flush(i + 1) || !AckRound(r.seq)) return false;
      in_round = round_bytes = 0;
    }
  }
  return true;
}

bool OutboxPublisher::PublishCommitted(const Commit& c) {
  // The commit's messages are the whole outbox: send them from memory
  // instead of reading back what was just written. Same order, same acks,
  // same rows dropped as PublishPending's rounds.
  if (!bus_ || !bus_->connected() || c.outbox.empty()) return PublishPending();
  // Until its marker, a pack of this commit brings the site to the version before it.
  auto [it, fresh] = versions_.try_emplace(c.site, 0);
  it->second = std::max(it->second, c.version - 1);
  std::vector<Row> rows;
  rows.reserve(c.outbox.size());
  for (const OutboxMsg& m : c.outbox) {
    const std::string& payload = m.page >= 0 ? c.pages[static_cast<size_t>(m.page)].record : m.payload;
    rows.push_back(Row{m.seq, m.kind, m.subject, payload, m.msg_id});
  }
  if (!SendRows(rows)) return false;
  outbox_pending_->Set(0);
  SnapshotIfDue();
  return true;
}

bool OutboxPublisher::PublishPending() {
  auto size = store_->OutboxSize();
  if (size.ok()) outbox_pending_->Set(static_cast<double>(*size));
  if (!bus_ || !bus_->connected()) return size.ok() && *size == 0;
  bool sent = false;
  for (;;) {
    auto msgs = store_->PendingOutbox(kOutboxRound);
    if (!msgs.ok()) {
      log::Error("outbox read failed", {{"error", msgs.status().message()}});
      return false;
    }
    if (msgs->empty()) break;
    std::vector<Row> rows;
    rows.reserve(msgs->size());
    for (const OutboxMsg& m : *msgs) rows.push_back(Row{m.seq, m.kind, m.subject, m.payload, m.msg_id});
    if (!SendRows(rows)) return false;
    sent = true;
  }
  outbox_pending_->Set(0);
  if (sent) SnapshotIfDue();
  return true;
}

}  // namespace folio::ingest
