// Journal: the public facade, point operations, stats and the maintenance
// thread. Recovery is in recovery.cc, the write path in group_commit.cc,
// checkpoints in checkpoint.cc, compaction in compaction.cc.
#include "folio/journal/journal.h"

#include <chrono>

#include "blob_internal.h"
#include "folio/core/log.h"

namespace folio::journal {

namespace internal {

uint64_t KeyHash(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

JournalImpl::JournalImpl(std::string dir, const Options& options)
    : dir_(std::move(dir)), options_(options), env_(options.env != nullptr ? options.env : DefaultEnv()) {}

JournalImpl::~JournalImpl() { Close(); }

void JournalImpl::Close() {
  {
    std::lock_guard l(maint_mu_);
    maint_stop_ = true;
  }
  maint_cv_.notify_all();
  if (maint_.joinable()) maint_.join();
  {
    std::lock_guard a(append_mu_);
    if (closed_) return;
    closed_ = true;  // from here on nothing is written to a segment
  }
  bool changed;
  {
    std::shared_lock l(index_mu_);
    changed = changes_ > 0;
  }
  if (changed && !failed_ && lock_ != nullptr) {
    if (Status s = Checkpoint(); !s.ok()) log::Warn("journal checkpoint at close failed", {{"error", s.message()}});
  }
  lock_.reset();
}

Status JournalImpl::CheckKeyMeta(std::string_view key, std::string_view meta) const {
  if (key.empty()) return Status::Invalid("journal: empty key");
  if (key.size() > options_.max_key_bytes) {
    return Status::Invalid("journal: key of " + std::to_string(key.size()) + " bytes exceeds " +
                           std::to_string(options_.max_key_bytes));
  }
  if (meta.size() > options_.max_meta_bytes) {
    return Status::Invalid("journal: meta of " + std::to_string(meta.size()) + " bytes exceeds " +
                           std::to_string(options_.max_meta_bytes));
  }
  return Status::Ok();
}

void JournalImpl::AccountLocked(const BlobEntry& e, int64_t sign) {
  auto add = [&](uint32_t id, uint64_t bytes) {
    auto it = segments_.find(id);
    if (it != segments_.end()) it->second->live_bytes += static_cast<uint64_t>(sign) * bytes;
  };
  add(e.commit_segment, e.commit_size);
  for (const BlockRef& b : e.blocks) add(b.segment, format::BlockRecordSize(b.length));
}

Status JournalImpl::Put(std::string_view key, std::string_view meta, std::string_view data) {
  if (Status s = CheckKeyMeta(key, meta); !s.ok()) return s;
  if (data.size() > options_.max_blob_bytes) return Status::TooLarge("journal: blob too large");
  const size_t block = options_.block_bytes;
  if (data.size() / block > options_.segment_bytes / 4 / format::kBlockRefSize) {
    return Status::TooLarge("journal: blob has too many blocks for the segment size");
  }
  CommitOp op;
  op.key = key;
  op.meta = meta;
  op.blob_id = NewBlobId();
  op.size = data.size();
  std::vector<SegmentPtr> pins;
  size_t done = 0;
  for (; data.size() - done >= block; done += block) {
    Result<BlockRef> ref = AppendBlock(op.blob_id, static_cast<uint32_t>(op.blocks.size()), data.substr(done, block), &pins);
    if (!ref.ok()) {
      ReleasePins(&pins);
      return ref.status();
    }
    op.blocks.push_back(*ref);
  }
  op.inline_data = data.substr(done);
  Status s = Submit({&op, 1});
  ReleasePins(&pins);
  return s.ok() ? op.status : s;
}

Status JournalImpl::Delete(std::string_view key) {
  if (Status s = CheckKeyMeta(key, ""); !s.ok()) return s;
  CommitOp op;
  op.kind = CommitOp::Kind::kDelete;
  op.key = key;
  Status s = Submit({&op, 1});
  return s.ok() ? op.status : s;
}

Result<EntryPtr> JournalImpl::Lookup(std::string_view key, std::vector<SegmentPtr>* segments) const {
  std::shared_lock l(index_mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return Status::NotFound("no blob '" + std::string(key) + "'");
  const BlobEntry& e = *it->second;
  auto add = [&](uint32_t id) -> bool {
    for (const SegmentPtr& s : *segments) {
      if (s->id == id) return true;
    }
    auto seg = segments_.find(id);
    if (seg == segments_.end()) return false;
    segments->push_back(seg->second);
    return true;
  };
  bool ok = e.inline_len == 0 || add(e.commit_segment);
  for (const BlockRef& b : e.blocks) ok = ok && add(b.segment);
  if (!ok) return Status::Internal("journal: blob '" + e.key + "' refers to a missing segment");
  return it->second;
}

Result<std::vector<BlobInfo>> JournalImpl::List(std::string_view prefix, size_t limit, std::string_view after) const {
  if (limit == 0 || limit > 100000) return Status::Invalid("journal: list limit must be in 1..100000");
  std::vector<BlobInfo> out;
  std::shared_lock l(index_mu_);
  auto it = after.empty() || after < prefix ? index_.lower_bound(prefix) : index_.upper_bound(after);
  for (; it != index_.end() && out.size() < limit && std::string_view(it->first).starts_with(prefix); ++it) {
    const BlobEntry& e = *it->second;
    out.push_back(BlobInfo{e.key, e.meta, e.size, e.seq});
  }
  return out;
}

Stats JournalImpl::stats() const {
  Stats s;
  s.fsyncs = fsyncs_;
  s.batches = batches_;
  s.batch_sync_us = batch_sync_us_;
  s.bytes_written = bytes_written_;
  s.blob_bytes = blob_bytes_;
  s.records = records_;
  s.commits = commits_;
  s.deletes = deletes_;
  s.checkpoints = checkpoints_;
  s.checkpoint_bytes = checkpoint_bytes_;
  s.compactions = compactions_;
  s.compaction_bytes = compaction_bytes_;
  s.corrupt_records = corrupt_records_;
  s.truncated_bytes = truncated_bytes_;
  s.scanned_bytes = scanned_bytes_;
  s.checkpoint_loaded = checkpoint_loaded_;
  std::shared_lock l(index_mu_);
  s.live_blobs = index_.size();
  for (const auto& [id, seg] : segments_) {
    s.live_bytes += seg->live_bytes;
    s.disk_bytes += seg->size;
  }
  s.segments = segments_.size();
  return s;
}

std::string JournalImpl::TakeBuffer() {
  std::string buf;
  {
    std::lock_guard l(pool_mu_);
    if (!pool_.empty()) {
      buf = std::move(pool_.back());
      pool_.pop_back();
    }
  }
  buf.clear();
  buf.reserve(options_.block_bytes);
  return buf;
}

void JournalImpl::ReturnBuffer(std::string buf) {
  constexpr size_t kKeep = 4;  // enough for a few concurrent streaming writers
  std::lock_guard l(pool_mu_);
  if (pool_.size() < kKeep) pool_.push_back(std::move(buf));
}

void JournalImpl::WakeMaintenance() {
  if (!options_.background) return;
  {
    std::lock_guard l(maint_mu_);
    maint_wake_ = true;
  }
  maint_cv_.notify_one();
}

bool JournalImpl::CheckpointDue() const {
  uint64_t since = appended_ - appended_at_ckpt_;
  return since >= std::max<uint64_t>(options_.checkpoint_bytes, options_.checkpoint_ratio * last_ckpt_size_);
}

bool JournalImpl::CompactionDue() const {
  std::shared_lock l(index_mu_);
  for (const auto& [id, seg] : segments_) {
    uint64_t size = seg->size;
    if (seg->sealed && seg->pending_writers == 0 && size > 0 &&
        static_cast<double>(size - std::min(size, seg->live_bytes)) >= options_.compaction_garbage_ratio * static_cast<double>(size)) {
      return true;
    }
  }
  return false;
}

void JournalImpl::MaintenanceLoop() {
  std::unique_lock l(maint_mu_);
  while (!maint_stop_) {
    maint_cv_.wait_for(l, std::chrono::seconds(1), [&] { return maint_stop_ || maint_wake_; });
    if (maint_stop_) break;
    maint_wake_ = false;
    l.unlock();
    if (!failed_ && CheckpointDue()) {
      if (Status s = Checkpoint(); !s.ok()) log::Warn("journal checkpoint failed", {{"error", s.message()}});
    }
    if (!failed_ && CompactionDue()) {
      if (Status s = Compact(); !s.ok()) log::Warn("journal compaction failed", {{"error", s.message()}});
    }
    l.lock();
  }
}

}  // namespace internal

using internal::JournalImpl;

Journal::Journal(std::shared_ptr<JournalImpl> impl) : impl_(std::move(impl)) {}

Journal::~Journal() { impl_->Close(); }

Result<std::unique_ptr<Journal>> Journal::Open(const std::string& dir, Options options) {
  Result<std::shared_ptr<JournalImpl>> impl = JournalImpl::Open(dir, options);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Journal>(new Journal(std::move(impl).value()));
}

Result<BlobWriter> Journal::BeginBlob(std::string_view key, std::string_view meta) {
  if (Status s = impl_->CheckKeyMeta(key, meta); !s.ok()) return s;
  if (Status s = impl_->CheckWritable(); !s.ok()) return s;
  auto st = std::make_unique<internal::WriterState>();
  st->journal = impl_;
  st->key = key;
  st->meta = meta;
  st->blob_id = impl_->NewBlobId();
  return BlobWriter(std::move(st));
}

Status Journal::Put(std::string_view key, std::string_view meta, std::string_view data) {
  return impl_->Put(key, meta, data);
}

Result<BlobReader> Journal::Get(std::string_view key) const {
  auto st = std::make_unique<internal::ReaderState>();
  Result<internal::EntryPtr> e = impl_->Lookup(key, &st->segments);
  if (!e.ok()) return e.status();
  st->entry = std::move(e).value();
  uint64_t at = 0;
  for (const format::BlockRef& b : st->entry->blocks) {
    st->starts.push_back(at);
    at += b.length;
  }
  if (st->entry->inline_len > 0) st->starts.push_back(at);
  return BlobReader(std::move(st));
}

Status Journal::Delete(std::string_view key) { return impl_->Delete(key); }

Result<std::vector<BlobInfo>> Journal::List(std::string_view prefix, size_t limit, std::string_view after) const {
  return impl_->List(prefix, limit, after);
}

Status Journal::Checkpoint() { return impl_->Checkpoint(); }
Status Journal::Compact() { return impl_->Compact(); }
Stats Journal::stats() const { return impl_->stats(); }
Status Journal::WriteError() const { return impl_->CheckWritable(); }
const std::string& Journal::dir() const { return impl_->dir(); }

}  // namespace folio::journal
