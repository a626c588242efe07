// OutboxPublisher: sends the committed outbox (page puts and deletions,
// note events, site and version keys) to NATS JetStream, each round
// acknowledged before its rows leave the outbox, so a crash or an outage
// only delays them (at-least-once; msg ids and KV puts make a repeat
// harmless). Also the resync after NATS lost its data, the site's snapshots,
// and the publish metrics.
//
// The page feed (issue 26, bus/page_pack.h): consecutive page rows of one
// site travel as packs under "<site>.p.<seq of the first row>", at most
// bus::kMaxPack bytes each; every other row keeps its own message, and a
// pack is sent before the row that follows it, so the order is the
// outbox's. A republish after a crash sends the same rows under the same
// keys (history 1 replaces the older copy). When the pack bytes published
// for a site since its last snapshot exceed max(--feed-snapshot-bytes, the
// site's live page bytes) — counted in the store (Store::FeedBytes), so a
// restart does not forget them — and the outbox is empty, the site is
// published again as a snapshot ("<site>.s.<version>.<i>") and the packs and
// snapshots before its first chunk are purged from the bucket's stream.
// Removing a site (its "_site.<site>" deleted) purges its packs, snapshots,
// per-page keys and version key.
//
// Ownership: owned by SiteWriter; borrows the Store for its lifetime and
// the Bus while set (SetBus; nullptr while disconnected). Owns its metrics
// (folio_ingest_publish_failures_total, folio_ingest_outbox_pending,
// folio_ingest_feed_snapshots_total).
// Threads: ingest's writer thread only (the thread that commits, and the
// writer loop's one-second round via Sites); it blocks on acks (up to
// kAckTimeoutMs per round) and on a snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/bus.h"
#include "folio/core/status.h"
#include "folio/metrics/metrics.h"
#include "store.h"

namespace folio::ingest {

class OutboxPublisher {
 public:
  // snapshot_bytes: SiteOptions::feed_snapshot_bytes.
  OutboxPublisher(std::string site, Store* store, metrics::Registry* registry, int64_t snapshot_bytes);

  // Sets the bus (once connected); nullptr while disconnected.
  void SetBus(bus::Bus* bus) { bus_ = bus; }

  // Publishes the whole outbox; true when it is empty afterwards (false:
  // not connected, refused or not acknowledged; the rest waits for a retry).
  // Then publishes the snapshots that are due.
  bool PublishPending();
  // PublishPending for a commit just made whose messages are the whole
  // outbox (Commit::outbox_was_empty): sent from memory, not read back;
  // same order, acks and rows dropped. REQUIRES: c committed.
  bool PublishCommitted(const Commit& c);
  // If the bus lost its data (no marker for `version`), or still holds this
  // site's per-page keys of the layout before packs, publishes a snapshot
  // of the site (then purges those keys) and the marker. kUnavailable
  // without a bus; bus and store errors as Status.
  Status ResyncIfNeeded(int64_t version);

  // One outbox row as the publisher sees it (from a Commit or the store).
  struct Row {
    int64_t seq = 0;
    int kind = 0;             // OutboxMsg::Kind
    std::string_view subject;
    std::string_view payload;
    std::string_view msg_id;
  };

 private:
  // Messages sent per round before waiting for their acks, and bytes.
  static constexpr size_t kOutboxRound = 4096;
  static constexpr size_t kRoundBytes = size_t{64} << 20;
  static constexpr int64_t kAckTimeoutMs = 10'000;

  // The largest pack to build: bus::kMaxPack, or less on a server whose
  // max payload is smaller (with room for the message's headers).
  size_t PackLimit() const;
  // Publishes rows in order as packs and messages, in rounds; true when all
  // were acknowledged and dropped from the outbox.
  bool SendRows(const std::vector<Row>& rows);
  // One non-page outbox message to the bus, without waiting for its ack.
  // False when the round must stop (the bus refused it; the outbox keeps it).
  bool SendOutboxMsg(const Row& r);
  // A finished pack (or a message too large, skipped as a page was before).
  bool SendPack(const std::string& key, const std::string& pack);
  // The version a pack of `site` that ends before rows[next] brings the site to.
  int64_t VersionAfter(const std::vector<Row>& rows, size_t next, const std::string& site) const;
  // Waits for the round's acks, then drops the outbox through `upto_seq`
  // and adds the round's pack bytes to the store's counts.
  bool AckRound(int64_t upto_seq);
  // A site's removal: its feed leaves the bucket's stream.
  Status PurgeSite(const std::string& site);

  // feed_snapshot.cc
  // Snapshots of the sites whose pack bytes are past their threshold.
  // REQUIRES: the outbox is empty (the store is what the bucket holds).
  void SnapshotIfDue();
  // Every page of `site` as snapshot chunks at `version`, the first put
  // synchronously to learn its stream sequence, then the purge of the packs
  // and snapshots before it. resync: a bus::PackKind::kResync snapshot,
  // which every edge applies (the bus lost data, or the store went back).
  Status PublishSnapshot(const std::string& site, int64_t version, bool resync);

  const std::string site_;
  Store* store_;
  const int64_t snapshot_bytes_;
  bus::Bus* bus_ = nullptr;
  metrics::Counter* publish_failures_;
  metrics::Gauge* outbox_pending_;
  metrics::Counter* snapshots_;
  // Writer thread only. The last version marker sent per site (lower bound
  // of what a pack brings its site to).
  std::map<std::string, int64_t, std::less<>> versions_;
  // Pack bytes of the current round per site, added to the store on its ack.
  std::map<std::string, int64_t, std::less<>> round_bytes_;
  // Per site, the pack bytes at which to look at the site's live bytes again.
  std::map<std::string, int64_t, std::less<>> next_check_;
};

}  // namespace folio::ingest
