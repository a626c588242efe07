// The write path: block appends, segment rollover and group commit.
//
// Syncing: records are written with pwritev at a tracked offset into a file
// that grows, then fdatasync. Measured on the target VM (4 KiB, ext4 on
// virtio, `journal-bench --sync`): append+fdatasync p50 ~60-75 µs, O_APPEND
// the same, fsync the same, fallocate'd (unwritten extents) the same, and an
// overwrite of pre-zeroed space ~40-50 µs. Pre-zeroing would save ~30% per
// sync but writes every segment twice (write amplification ~2 instead of
// <= 1.05), and group commit already spreads one sync over many commits, so
// segments are not preallocated. (On an ext4 without a journal, as on the
// shared benchmark VM of issue 15, a growing file's fdatasync also writes
// the inode synchronously (perf: ext4_fsync_nojournal -> ext4_write_inode
// -> __sync_dirty_buffer); fio 4 KiB + fdatasync there, medians of five
// storage-bench runs: append 3.6 ms, overwrite of written space 3.2 ms,
// within the noise of a disk busy with other work. fallocate does not
// avoid the inode write, since converting unwritten extents dirties
// the inode too; reusing the files of compacted segments would, without
// writing anything twice.) pwrite at a tracked offset rather than
// O_APPEND: the offset must be known before the write anyway (it is stored in
// the record header and the index), and after a failed write nothing moves.
//
// Group commit (like LevelDB's DBImpl::Write): callers queue CommitRequests;
// the front one is the leader, takes everything queued (up to
// max_batch_bytes), writes the records with one pwritev, runs one fdatasync,
// applies the batch to the index and wakes the others. Requests arriving
// while it syncs queue behind it and form the next batch. Batches are strictly
// sequential, so a batch is decided against an index that reflects every
// earlier record: that is what makes the conditional records of compaction
// (kCopy, kCopyTombstone) safe to replay in file order.
#include <chrono>
#include <unordered_map>

#include "folio/core/log.h"
#include "journal_impl.h"

namespace folio::journal::internal {

using format::EncodedRecord;
using format::RecordHeader;

void JournalImpl::SetError(const Status& s) {
  std::lock_guard l(error_mu_);
  if (error_.ok()) {
    error_ = Status::Unavailable("journal '" + dir_ + "' refuses writes after a disk error (reopen to recover): " +
                                 s.message());
    log::Error("journal write failed; refusing writes until reopened", {{"dir", dir_}, {"error", s.message()}});
  }
  failed_ = true;
}

Status JournalImpl::CheckWritable() const {
  if (!failed_) return Status::Ok();
  std::lock_guard l(error_mu_);
  return error_;
}

Status JournalImpl::Fail(const Status& s) {
  SetError(s);
  return CheckWritable();
}

Status JournalImpl::RollLocked() {
  if (active_ != nullptr) {
    // Everything in the old segment becomes durable before anything lands in
    // the new one: a commit's single fdatasync then covers blocks it wrote
    // into earlier segments, and only the last segment can have a torn tail.
    Status s = active_->file->Sync();
    ++fsyncs_;
    if (!s.ok()) return Fail(s);  // whatever its errno: data may be lost
  }
  if (next_segment_id_ == UINT32_MAX) return Fail(Status::Internal("journal: segment ids exhausted"));
  // The id is taken only once the segment exists: a roll that fails for lack
  // of space leaves the old segment the head (unsealed) and changes nothing.
  const uint32_t id = next_segment_id_;
  Result<std::unique_ptr<File>> f = env_->OpenFile(dir_ + "/" + format::SegmentName(id), true);
  if (!f.ok()) return f.status().code() == Code::kNoSpace ? f.status() : Fail(f.status());
  if (Status s = (*f)->Truncate(0); !s.ok()) {  // a leftover of a failed roll
    return s.code() == Code::kNoSpace ? s : Fail(s);
  }
  Status s = env_->SyncDir(dir_);
  ++fsyncs_;
  if (!s.ok()) return Fail(s);
  ++next_segment_id_;
  auto seg = std::make_shared<Segment>(id, std::move(f).value(), 0);
  {
    std::unique_lock l(index_mu_);
    segments_[id] = seg;
  }
  if (active_ != nullptr) active_->sealed = true;
  active_ = std::move(seg);
  append_pos_ = 0;
  WakeMaintenance();
  return Status::Ok();
}

Status JournalImpl::UndoWriteLocked(std::span<const Cut> cuts, const Status& why) {
  if (why.code() != Code::kNoSpace) return Fail(why);
  // A full disk used to be sticky until a restart (issue 9). Cut back and
  // make the cut durable, so that neither a partial record (a sealed segment
  // must end with a whole record) nor a whole record of a write reported
  // failed can come back at the next open.
  for (const Cut& c : cuts) {
    Status s = c.segment->file->Truncate(c.offset);
    if (s.ok()) {
      s = c.segment->file->Sync();
      ++fsyncs_;
    }
    if (!s.ok()) return Fail(s);
    c.segment->size = c.offset;
  }
  append_pos_ = cuts.back().offset;  // cuts.back() is the head
  return Status::NoSpace("journal '" + dir_ + "': disk full, nothing was written (" + why.message() + ")");
}

Result<BlockRef> JournalImpl::AppendBlock(uint64_t blob_id, uint32_t index, std::string_view data,
                                          std::vector<SegmentPtr>* pins) {
  char prefix[format::kBlockPrefix] = {};
  format::Put32(prefix, index);
  std::string_view prefix_view(prefix, sizeof prefix);
  uint32_t payload_crc = format::PayloadCrc({}, prefix_view, data);  // outside the lock
  RecordHeader h;
  h.type = format::kBlock;
  h.seq = blob_id;
  h.body_len = static_cast<uint32_t>(format::kBlockPrefix + data.size());
  std::lock_guard a(append_mu_);
  if (closed_) return Status::Unavailable("journal '" + dir_ + "' is closed");
  if (Status s = CheckWritable(); !s.ok()) return s;
  if (append_pos_ + h.size() > options_.segment_bytes && append_pos_ > 0) {
    if (Status s = RollLocked(); !s.ok()) return s;  // sticky unless the disk is full
  }
  h.segment = active_->id;
  h.position = static_cast<uint32_t>(append_pos_);
  EncodedRecord rec;
  format::EncodeRecord(h, {}, prefix_view, data, payload_crc, &rec);
  std::string_view parts[] = {{rec.header, format::kHeaderSize}, prefix_view, data, {rec.trailer, rec.trailer_len}};
  if (Status s = active_->file->WriteAt(append_pos_, parts); !s.ok()) {
    const Cut cut{active_, append_pos_};
    return UndoWriteLocked({&cut, 1}, s);
  }
  append_pos_ += rec.size;
  active_->size = append_pos_;
  bytes_written_ += rec.size;
  appended_ += rec.size;
  ++records_;
  if (pins->empty() || pins->back() != active_) {
    ++active_->pending_writers;  // under append_mu_: cannot race the segment's sealing
    pins->push_back(active_);
  }
  return BlockRef{h.segment, h.position, static_cast<uint32_t>(data.size())};
}

void JournalImpl::ReleasePins(std::vector<SegmentPtr>* pins) {
  for (SegmentPtr& s : *pins) --s->pending_writers;
  pins->clear();
}

namespace {

uint64_t EstimateBytes(const CommitOp& op) {
  return format::RecordSize(op.key.size(), format::kCommitFixed + op.meta.size() +
                                               format::kBlockRefSize * op.blocks.size() + op.inline_data.size());
}

}  // namespace

// A record of the batch, from decision to index update.
struct PendingRecord {
  CommitOp* op = nullptr;
  std::string prefix;             // commit body without the inline tail
  std::string_view inline_data;   // commit only
  uint32_t payload_crc = 0;
  RecordHeader h;
  EncodedRecord rec;
};

Status JournalImpl::Submit(std::span<CommitOp> ops) {
  CommitRequest req;
  req.ops = ops;
  std::unique_lock l(commit_mu_);
  queue_.push_back(&req);
  while (!req.done && &req != queue_.front()) req.cv.wait(l);
  if (req.done) return req.status;
  std::vector<CommitRequest*> batch;
  uint64_t bytes = 0;
  for (CommitRequest* r : queue_) {
    uint64_t b = 0;
    for (const CommitOp& op : r->ops) b += EstimateBytes(op);
    if (!batch.empty() && bytes + b > options_.max_batch_bytes) break;
    batch.push_back(r);
    bytes += b;
  }
  l.unlock();
  Status s = WriteBatch(batch);
  l.lock();
  for (CommitRequest* r : batch) {
    queue_.pop_front();
    r->status = s;
    r->done = true;
    if (r != &req) r->cv.notify_one();
  }
  if (!queue_.empty()) queue_.front()->cv.notify_one();
  return req.status;
}

Status JournalImpl::WriteBatch(std::span<CommitRequest* const> batch) {
  if (Status s = CheckWritable(); !s.ok()) return s;
  std::vector<PendingRecord> recs = DecideBatch(batch);
  if (recs.empty()) return Status::Ok();
  for (PendingRecord& p : recs) PrepareBody(&p);  // checksum work outside every lock
  SegmentPtr sync_target;
  Result<Position> end = AppendBatch(&recs, &sync_target);
  if (!end.ok()) return end.status();
  // The sync runs without locks: block appends and the next batch's
  // requests proceed meanwhile.
  const auto sync_start = std::chrono::steady_clock::now();
  Status s = sync_target->file->Sync();
  batch_sync_us_ += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - sync_start).count());
  ++fsyncs_;
  ++batches_;
  if (!s.ok()) {
    SetError(s);
    return CheckWritable();
  }
  ApplyBatch(recs, *end);
  if (CheckpointDue()) WakeMaintenance();
  return Status::Ok();
}

// Which ops become records, in queue order, judged against the index plus
// the batch's own earlier ops. Sets op.status for ops that are refused.
std::vector<PendingRecord> JournalImpl::DecideBatch(std::span<CommitRequest* const> batch) {
  std::vector<PendingRecord> recs;
  std::shared_lock l(index_mu_);
  std::unordered_map<std::string_view, const CommitOp*> touched;  // key -> last op writing it
  for (CommitRequest* r : batch) {
    for (CommitOp& op : r->ops) {
      auto t = touched.find(op.key);
      const bool in_batch = t != touched.end();
      auto it = index_.find(op.key);
      const bool present = in_batch ? t->second->kind == CommitOp::Kind::kCommit ||
                                          t->second->kind == CommitOp::Kind::kCopy
                                    : it != index_.end();
      bool write = true;
      switch (op.kind) {
        case CommitOp::Kind::kCommit:
          for (const BlockRef& b : op.blocks) write = write && segments_.count(b.segment) > 0;
          if (!write) op.status = Status::Internal("journal: blob '" + std::string(op.key) + "' lost a block segment");
          break;
        case CommitOp::Kind::kDelete:
          if (!present) op.status = Status::NotFound("no blob '" + std::string(op.key) + "'");
          write = present;
          break;
        case CommitOp::Kind::kCopy:
          write = !in_batch && it != index_.end() && it->second == op.expect;
          break;
        case CommitOp::Kind::kCopyTombstone:
          write = !present;
          break;
      }
      if (!write) continue;
      touched[op.key] = &op;
      recs.emplace_back().op = &op;
    }
  }
  return recs;
}

void JournalImpl::PrepareBody(PendingRecord* p) {
  const CommitOp& op = *p->op;
  p->h.key_len = static_cast<uint16_t>(op.key.size());
  if (op.kind == CommitOp::Kind::kDelete || op.kind == CommitOp::Kind::kCopyTombstone) {
    p->h.type = format::kTombstone;
  } else {
    p->h.type = format::kCommit;
    p->h.flags = op.inline_data.empty() ? 0 : format::kFlagInlineTail;
    p->prefix = format::EncodeCommitPrefix(op.blob_id, op.size, op.meta, op.blocks);
    p->inline_data = op.inline_data;
  }
  p->h.body_len = static_cast<uint32_t>(p->prefix.size() + p->inline_data.size());
  p->payload_crc = format::PayloadCrc(op.key, p->prefix, p->inline_data);
}

// Writes the records with one pwritev per segment they land in; returns the
// end position. Rolls over when a record does not fit.
Result<Position> JournalImpl::AppendBatch(std::vector<PendingRecord>* recs, SegmentPtr* sync_target) {
  std::lock_guard a(append_mu_);
  if (closed_) return Status::Unavailable("journal '" + dir_ + "' is closed");
  std::vector<Cut> cuts{{active_, append_pos_}};  // where the batch begins in each segment it writes to
  std::vector<std::string_view> parts;
  uint64_t run_start = append_pos_, written = 0;
  auto flush = [&]() -> Status {
    Status s = parts.empty() ? Status::Ok() : active_->file->WriteAt(run_start, parts);
    parts.clear();
    active_->size = append_pos_;
    return s;
  };
  for (PendingRecord& p : *recs) {
    if (append_pos_ + p.h.size() > options_.segment_bytes && append_pos_ > 0) {
      if (Status s = flush(); !s.ok()) return UndoWriteLocked(cuts, s);
      if (Status s = RollLocked(); !s.ok()) return UndoWriteLocked(cuts, s);
      cuts.push_back({active_, 0});
      run_start = append_pos_;
    }
    p.h.segment = active_->id;
    p.h.position = static_cast<uint32_t>(append_pos_);
    p.h.seq = p.op->kind == CommitOp::Kind::kCopy ? p.op->seq : next_seq_.fetch_add(1);
    format::EncodeRecord(p.h, p.op->key, p.prefix, p.inline_data, p.payload_crc, &p.rec);
    parts.insert(parts.end(), {std::string_view(p.rec.header, format::kHeaderSize), p.op->key, p.prefix,
                               p.inline_data, std::string_view(p.rec.trailer, p.rec.trailer_len)});
    append_pos_ += p.rec.size;
    written += p.rec.size;
  }
  if (Status s = flush(); !s.ok()) return UndoWriteLocked(cuts, s);
  bytes_written_ += written;
  appended_ += written;
  records_ += recs->size();
  *sync_target = active_;
  return Position{active_->id, append_pos_};
}

// The batch is durable: make it visible, in order.
void JournalImpl::ApplyBatch(std::vector<PendingRecord>& recs, Position end) {
  uint64_t copy_bytes = 0;
  std::unique_lock l(index_mu_);
  for (PendingRecord& p : recs) {
    CommitOp& op = *p.op;
    op.written = true;
    auto seg = segments_.find(p.h.segment);
    if (op.kind == CommitOp::Kind::kCopy || op.kind == CommitOp::Kind::kCopyTombstone) copy_bytes += p.rec.size;
    if (p.h.type == format::kTombstone) {
      if (auto it = index_.find(op.key); it != index_.end()) {
        AccountLocked(*it->second, -1);
        index_.erase(it);
      }
      if (seg != segments_.end()) seg->second->tombstones.emplace_back(op.key);
      if (op.kind == CommitOp::Kind::kDelete) ++deletes_;
      continue;
    }
    auto e = std::make_shared<BlobEntry>();
    e->key = op.key;
    e->meta = op.meta;
    e->seq = p.h.seq;
    e->blob_id = op.blob_id;
    e->size = op.size;
    e->commit_segment = p.h.segment;
    e->commit_offset = p.h.position;
    e->commit_size = static_cast<uint32_t>(p.rec.size);
    e->inline_offset = static_cast<uint32_t>(format::kHeaderSize + op.key.size() + p.prefix.size());
    e->inline_len = static_cast<uint32_t>(op.inline_data.size());
    e->blocks = op.blocks;
    auto [it, inserted] = index_.try_emplace(e->key, nullptr);
    if (!inserted) AccountLocked(*it->second, -1);
    AccountLocked(*e, +1);
    it->second = std::move(e);
    if (seg != segments_.end()) seg->second->commit_keys.insert(KeyHash(op.key));
    if (op.kind == CommitOp::Kind::kCommit) {
      ++commits_;
      blob_bytes_ += op.size;
    }
  }
  applied_ = end;
  changes_ += recs.size();
  compaction_bytes_ += copy_bytes;
}

}  // namespace folio::journal::internal
