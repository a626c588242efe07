// OutboxPublisher (outbox_publisher.h): the page feed's snapshots, the
// resync after NATS lost its data or still holds per-page keys, and the
// purge of a removed site.
#include <algorithm>

#include "folio/bus/page_pack.h"
#include "folio/bus/page_schema.h"
#include "folio/core/log.h"
#include "outbox_publisher.h"
#include "writer_parts.h"

namespace folio::ingest {
namespace {

const std::string kPagesStream = "KV_" + std::string(bus::kPagesBucket);

// Where each chunk of a snapshot starts: chunks of at most `limit` bytes.
// Records too large for one are left out (the push that made them warned).
std::vector<size_t> ChunkStarts(const std::vector<PageRow>& pages, size_t limit, std::vector<bool>* skip) {
  std::vector<size_t> starts{0};
  const size_t empty = bus::PagePackWriter(bus::PackHeader{}).size();
  size_t size = empty;
  skip->assign(pages.size(), false);
  for (size_t i = 0; i < pages.size(); ++i) {
    size_t op = bus::PagePackWriter::OpSize(pages[i].url, pages[i].record);
    if (empty + op > limit) {
      (*skip)[i] = true;
      log::Error("page too large for the bus; left out of the snapshot", {{"url", pages[i].url}});
      continue;
    }
    if (size + op > limit) {
      starts.push_back(i);
      size = empty;
    }
    size += op;
  }
  return starts;
}

}  // namespace

Status OutboxPublisher::PublishSnapshot(const std::string& site, int64_t version, bool resync) {
  auto pages = store_->AllPages(site);
  if (!pages.ok()) return pages.status();
  std::vector<bool> skip;
  std::vector<size_t> starts = ChunkStarts(*pages, PackLimit(), &skip);
  const auto chunks = static_cast<uint32_t>(starts.size());
  uint64_t first_seq = 0;
  for (uint32_t k = 0; k < chunks; ++k) {
    bus::PagePackWriter w(bus::PackHeader{resync ? bus::PackKind::kResync : bus::PackKind::kSnapshot, version, k, chunks});
    size_t end = k + 1 < chunks ? starts[k + 1] : pages->size();
    for (size_t i = starts[k]; i < end; ++i) {
      if (!skip[i]) w.Put((*pages)[i].url, (*pages)[i].record);
    }
    std::string key = bus::SnapshotKey(site, version, k), bytes = w.Finish();
    if (k == 0) {
      // Synchronously: its stream sequence is where the purge stops.
      auto rev = bus_->KvPut(bus::kPagesBucket, key, bytes);
      if (!rev.ok()) return rev.status();
      first_seq = *rev;
    } else if (Status s = bus_->KvPutAsync(bus::kPagesBucket, key, bytes); !s.ok()) {
      return s;
    }
  }
  if (Status s = bus_->WaitForAcks(kAckTimeoutMs); !s.ok()) return s;
  // Everything of the site before the snapshot's first chunk: a fresh edge
  // replays the snapshot and the packs after it. No delete markers: running
  // edges see nothing.
  for (const std::string& subjects : {bus::PackSubjects(site), bus::SnapshotSubjects(site)}) {
    if (Status s = bus_->PurgeStream(kPagesStream, subjects, first_seq); !s.ok()) return s;
  }
  if (Status s = store_->ResetFeedBytes(site); !s.ok()) return s;
  next_check_.erase(site);
  snapshots_->Increment();
  log::Info("page feed snapshot", {{"site", site}, {"version", std::to_string(version)},
                                   {"pages", std::to_string(pages->size())}, {"chunks", std::to_string(chunks)}});
  return Status::Ok();
}

void OutboxPublisher::SnapshotIfDue() {
  if (!bus_) return;
  auto due = store_->FeedBytesOver(snapshot_bytes_);
  if (!due.ok()) {
    log::Warn("feed counts not read", {{"error", due.status().message()}});
    return;
  }
  for (const auto& [site, bytes] : *due) {
    // The live bytes are read again only once the count passed them.
    if (auto it = next_check_.find(site); it != next_check_.end() && bytes <= it->second) continue;
    auto live = store_->PageBytes(site);
    auto version = store_->Version(site);
    if (!live.ok() || !version.ok()) continue;
    int64_t threshold = std::max(snapshot_bytes_, *live);
    next_check_[site] = threshold;
    if (bytes <= threshold) continue;
    if (Status s = PublishSnapshot(site, *version, /*resync=*/false); !s.ok()) {
      log::Warn("page feed snapshot failed; will retry", {{"site", site}, {"error", s.message()}});
      publish_failures_->Increment();
      next_check_.erase(site);
    }
  }
}

Status OutboxPublisher::PurgeSite(const std::string& site) {
  // Packs, snapshots and per-page keys ("<site>.>"), and the version marker,
  // so that the site, if added again, is published again as a whole.
  std::string prefix = "$KV." + std::string(bus::kPagesBucket) + ".";
  for (const std::string& subjects : {prefix + site + ".>", prefix + internal::MetaKey(site)}) {
    if (Status s = bus_->PurgeStream(kPagesStream, subjects, 0); !s.ok()) return s;
  }
  next_check_.erase(site);
  versions_.erase(site);
  return store_->ResetFeedBytes(site);
}

Status OutboxPublisher::ResyncIfNeeded(int64_t version) {
  if (!bus_) return Status::Unavailable("not connected to NATS");
  auto marker = bus_->KvGet(bus::kPagesBucket, internal::MetaKey(site_));
  if (!marker.ok() && marker.status().code() != Code::kNotFound) return marker.status();
  const bool lost = !marker.ok() || *marker != std::to_string(version);
  // The layout before packs (one key per page): does the bucket still hold
  // the key of one of the site's pages?
  bool old_keys = false;
  auto first = store_->PageUrls(site_, "", 1);
  if (!first.ok()) return first.status();
  if (!first->empty()) {
    auto old = bus_->KvGet(bus::kPagesBucket, bus::PageKey(site_, first->front()));
    if (!old.ok() && old.status().code() != Code::kNotFound) return old.status();
    old_keys = old.ok();
  }
  if (!lost && !old_keys) return Status::Ok();
  log::Info(lost ? "republishing the site as a snapshot" : "moving the site's pages to packs",
            {{"site", site_}, {"version", std::to_string(version)}});
  if (Status s = PublishSnapshot(site_, version, /*resync=*/lost); !s.ok()) return s;
  // Only keys of one token after the site: packs and snapshots have more.
  if (old_keys) {
    if (Status s = bus_->PurgeStream(kPagesStream, bus::OldPageSubjects(site_), 0); !s.ok()) return s;
  }
  versions_[site_] = version;
  if (Status s = bus_->KvPutAsync(bus::kPagesBucket, internal::MetaKey(site_), std::to_string(version)); !s.ok()) {
    return s;
  }
  return bus_->WaitForAcks(kAckTimeoutMs);
}

}  // namespace folio::ingest
