// Online compaction: copy the live blobs of mostly-garbage segments to the
// head, switch the index through the group commit, checkpoint, remove.
//
// Nothing here holds a lock across I/O: the index is walked in chunks under
// a shared lock, blocks are read with pread and re-appended like any writer's,
// and the new commit records go through Submit as conditional records
// (kCopy: only if the index still holds the copied version; kCopyTombstone:
// only if the key is still absent). So a copy never resurrects an older
// version in file order, and readers and writers wait at most for one batch.
#include <unordered_set>

#include "folio/core/log.h"
#include "journal_impl.h"

namespace folio::journal::internal {

namespace {

constexpr size_t kIndexChunk = 4096;          // entries examined per shared-lock hold
constexpr size_t kOpsPerSubmit = 256;         // copies per group commit
constexpr uint64_t kBytesPerSubmit = 8 << 20;  // or this many copied bytes

bool Touches(const BlobEntry& e, const std::unordered_set<uint32_t>& ids) {
  if (ids.count(e.commit_segment) > 0) return true;
  for (const BlockRef& b : e.blocks) {
    if (ids.count(b.segment) > 0) return true;
  }
  return false;
}

}  // namespace

Status JournalImpl::Compact() {
  std::lock_guard c(compact_mu_);
  if (Status s = CheckWritable(); !s.ok()) return s;
  std::vector<SegmentPtr> victims;
  std::unordered_set<uint32_t> ids;
  {
    std::shared_lock l(index_mu_);
    for (const auto& [id, seg] : segments_) {
      uint64_t size = seg->size;
      if (!seg->sealed || seg->pending_writers > 0 || size == 0) continue;
      double garbage = static_cast<double>(size - std::min(size, seg->live_bytes));
      if (garbage >= options_.compaction_garbage_ratio * static_cast<double>(size)) {
        victims.push_back(seg);
        ids.insert(id);
      }
    }
  }
  if (victims.empty()) return Status::Ok();
  std::vector<EntryPtr> live;
  std::string cursor;
  for (bool first = true, more = true; more; first = false) {
    std::shared_lock l(index_mu_);
    auto it = first ? index_.begin() : index_.upper_bound(cursor);
    for (size_t n = 0; it != index_.end() && n < kIndexChunk; ++it, ++n) {
      if (Touches(*it->second, ids)) live.push_back(it->second);
      cursor = it->first;
    }
    more = it != index_.end();
  }
  if (Status s = CopyLiveEntries(live); !s.ok()) return s;
  live.clear();
  if (Status s = CopyTombstones(victims); !s.ok()) return s;
  return Retire(victims);
}

Status JournalImpl::CopyLiveEntries(const std::vector<EntryPtr>& live) {
  std::vector<CommitOp> ops;
  std::vector<std::unique_ptr<std::string>> tails;  // inline tails, stable while ops point at them
  std::vector<SegmentPtr> pins;
  uint64_t pending_bytes = 0;
  auto flush = [&]() -> Status {
    Status s = ops.empty() ? Status::Ok() : Submit(ops);
    ReleasePins(&pins);
    ops.clear();
    tails.clear();
    pending_bytes = 0;
    return s;
  };
  std::string record;
  for (const EntryPtr& e : live) {
    CommitOp op;
    op.kind = CommitOp::Kind::kCopy;
    op.key = e->key;
    op.meta = e->meta;
    op.size = e->size;
    op.expect = e;
    op.seq = e->seq;
    op.blob_id = NewBlobId();
    bool copied = true;
    for (size_t part = 0; part < e->parts() && copied; ++part) {
      uint32_t seg_id = part < e->blocks.size() ? e->blocks[part].segment : e->commit_segment;
      SegmentPtr seg;
      {
        std::shared_lock l(index_mu_);
        auto it = segments_.find(seg_id);
        if (it != segments_.end()) seg = it->second;
      }
      std::string_view data;
      Status s = seg == nullptr ? Status::Internal("segment gone") : ReadVerifiedPart(*seg, *e, part, &record, &data);
      if (s.code() == Code::kDataLoss || s.code() == Code::kInternal) {  // corrupt: leave the blob (and its segments) where they are
        ++corrupt_records_;
        log::Warn("journal compaction: blob not copied", {{"key", e->key}, {"error", s.message()}});
        copied = false;
        break;
      }
      if (!s.ok()) return s;
      if (part < e->blocks.size()) {
        Result<BlockRef> ref = AppendBlock(op.blob_id, static_cast<uint32_t>(part), data, &pins);
        if (!ref.ok()) return ref.status();
        op.blocks.push_back(*ref);
        compaction_bytes_ += format::BlockRecordSize(data.size());
      } else {
        tails.push_back(std::make_unique<std::string>(data));
        op.inline_data = *tails.back();
      }
    }
    if (!copied) continue;
    pending_bytes += e->size;
    ops.push_back(std::move(op));
    if (ops.size() >= kOpsPerSubmit || pending_bytes >= kBytesPerSubmit) {
      if (Status s = flush(); !s.ok()) return s;
    }
  }
  return flush();
}

// A tombstone must outlive every older commit of its key: it is copied to the
// head while an older segment has a commit record of the key (by key hash: a
// collision only keeps a tombstone longer), otherwise dropped.
Status JournalImpl::CopyTombstones(const std::vector<SegmentPtr>& victims) {
  std::unordered_set<std::string> keys;
  {
    std::shared_lock l(index_mu_);
    for (const SegmentPtr& v : victims) {
      for (const std::string& key : v->tombstones) {
        uint64_t h = KeyHash(key);
        for (auto it = segments_.begin(); it != segments_.end() && it->first < v->id; ++it) {
          if (it->second->commit_keys.count(h) > 0) {
            keys.insert(key);
            break;
          }
        }
      }
    }
  }
  std::vector<CommitOp> ops;
  for (const std::string& key : keys) {
    CommitOp& op = ops.emplace_back();
    op.kind = CommitOp::Kind::kCopyTombstone;
    op.key = key;
  }
  for (size_t i = 0; i < ops.size(); i += kOpsPerSubmit) {
    size_t n = std::min(kOpsPerSubmit, ops.size() - i);
    if (Status s = Submit(std::span<CommitOp>(ops).subspan(i, n)); !s.ok()) return s;
  }
  return Status::Ok();
}

// Segments no entry references any more leave the index, then a checkpoint
// that no longer lists them is written, then their files are removed. Open
// removes a segment that a checkpoint omits (a crash between the last two
// steps), so a retired segment never comes back into a scan. Readers that
// hold one keep reading it: the file stays open until its last owner goes.
Status JournalImpl::Retire(const std::vector<SegmentPtr>& victims) {
  std::vector<SegmentPtr> gone;
  {
    std::unique_lock l(index_mu_);
    for (const SegmentPtr& v : victims) {
      if (v->live_bytes == 0) {
        gone.push_back(v);
        segments_.erase(v->id);
      }
    }
  }
  if (gone.empty()) return Status::Ok();
  ++changes_;
  if (Status s = Checkpoint(); !s.ok()) {
    std::unique_lock l(index_mu_);
    for (const SegmentPtr& g : gone) segments_[g->id] = g;
    return s;
  }
  for (const SegmentPtr& g : gone) {
    if (Status s = env_->Remove(g->file->path()); !s.ok()) return s;
  }
  Status s = env_->SyncDir(dir_);
  ++fsyncs_;
  if (!s.ok()) return s;
  compactions_ += gone.size();
  return Status::Ok();
}

}  // namespace folio::journal::internal
