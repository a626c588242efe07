// Open and recovery: load the checkpoint, scan the journal after it,
// truncate a torn tail, pick the head segment. Rules: README.md "Recovery".
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "checkpoint.h"
#include "folio/core/log.h"
#include "scan.h"

namespace folio::journal::internal {

namespace {

Status CheckOptions(const Options& o) {
  if (o.segment_bytes < (64u << 10) || o.segment_bytes > (1u << 30)) {
    return Status::Invalid("journal: segment_bytes must be in 64 KiB..1 GiB");
  }
  if (o.block_bytes < 64 || o.block_bytes > o.segment_bytes / 4) {
    return Status::Invalid("journal: block_bytes must be in 64..segment_bytes/4");
  }
  if (o.max_key_bytes < 1 || o.max_key_bytes > format::kMaxKeyBytes || o.max_meta_bytes > format::kMaxMetaBytes ||
      o.max_key_bytes + o.max_meta_bytes > o.segment_bytes / 4) {
    return Status::Invalid("journal: max_key_bytes (1..65535) + max_meta_bytes (..65535) must fit segment_bytes/4");
  }
  if (!(o.compaction_garbage_ratio > 0 && o.compaction_garbage_ratio <= 1)) {
    return Status::Invalid("journal: compaction_garbage_ratio must be in (0, 1]");
  }
  if (o.max_batch_bytes == 0) return Status::Invalid("journal: max_batch_bytes must be > 0");
  return Status::Ok();
}

uint64_t BlockKey(uint32_t segment, uint64_t offset) { return (uint64_t{segment} << 32) | offset; }

struct TailBlock {
  uint64_t blob_id = 0;
  uint32_t index = 0, length = 0;
};
using TailBlocks = std::unordered_map<uint64_t, TailBlock>;  // BlockKey -> valid block seen by the scan

// The entry a commit record describes, or nullptr if a block it names is
// missing or damaged: a crash can leave a commit on disk whose blocks never
// made it, and such a blob must not appear. Blocks before the scan start
// were durable when the checkpoint was written; they are checked on read.
EntryPtr EntryFromCommit(const format::RecordHeader& h, uint64_t pos, std::string_view key, format::CommitBody cb,
                         Position start, const TailBlocks& tail, const std::map<uint32_t, SegmentPtr>& segments) {
  for (uint32_t i = 0; i < cb.blocks.size(); ++i) {
    const BlockRef& b = cb.blocks[i];
    bool ok;
    if (Position{b.segment, b.offset} >= start) {
      auto t = tail.find(BlockKey(b.segment, b.offset));
      ok = t != tail.end() && t->second.blob_id == cb.blob_id && t->second.index == i && t->second.length == b.length;
    } else {
      auto s = segments.find(b.segment);
      ok = s != segments.end() && b.offset + format::BlockRecordSize(b.length) <= s->second->size;
    }
    if (!ok) return nullptr;
  }
  auto e = std::make_shared<BlobEntry>();
  e->key = key;
  e->meta = cb.meta;
  e->seq = h.seq;
  e->blob_id = cb.blob_id;
  e->size = cb.size;
  e->commit_segment = h.segment;
  e->commit_offset = static_cast<uint32_t>(pos);
  e->commit_size = static_cast<uint32_t>(h.size());
  e->inline_offset = static_cast<uint32_t>(format::kHeaderSize + h.key_len + cb.inline_offset);
  e->inline_len = cb.inline_len;
  e->blocks = std::move(cb.blocks);
  return e;
}

}  // namespace

Result<std::shared_ptr<JournalImpl>> JournalImpl::Open(const std::string& dir, const Options& options) {
  if (Status s = CheckOptions(options); !s.ok()) return s;
  auto j = std::make_shared<JournalImpl>(dir, options);
  if (options.create_if_missing) {
    if (Status s = j->env_->CreateDir(dir); !s.ok()) return s;
  } else if (!j->env_->ListDir(dir).ok()) {
    return Status::NotFound("journal: no directory '" + dir + "'");
  }
  Result<std::unique_ptr<DirLock>> lock = j->env_->LockFile(dir + "/" + format::kLockName);
  if (!lock.ok()) return lock.status();
  j->lock_ = std::move(lock).value();
  if (Status s = j->Recover(); !s.ok()) {
    std::lock_guard a(j->append_mu_);
    j->closed_ = true;  // the destructor must not checkpoint a half-recovered state
    return s;
  }
  if (options.background) j->maint_ = std::thread(&JournalImpl::MaintenanceLoop, j.get());
  return j;
}

void JournalImpl::ResetRecoveredState() {
  index_.clear();
  for (auto& [id, seg] : segments_) {
    seg->commit_keys.clear();
    seg->tombstones.clear();
  }
  next_seq_ = 1;
  next_blob_id_ = 1;
}

// Installs the checkpoint if it is consistent with the files on disk and
// names the segments it proves retired. Any mismatch rejects it as a whole.
Status JournalImpl::LoadCheckpoint(const std::map<uint32_t, SegmentPtr>& on_disk, Position* start,
                                   std::vector<uint32_t>* retired) {
  std::string bytes;
  if (Status s = env_->ReadFile(dir_ + "/" + format::kCheckpointName, &bytes); !s.ok()) return s;
  CheckpointData d;
  if (Status s = DecodeCheckpoint(bytes, &d); !s.ok()) return s;
  auto fits = [&](uint32_t seg, uint64_t off, uint64_t size) {
    auto it = on_disk.find(seg);
    return it != on_disk.end() && off + size <= it->second->size;
  };
  if (!fits(d.pos.segment, d.pos.offset, 0) || d.pos.offset % format::kAlign != 0) {
    return Status::Invalid("journal checkpoint: position beyond the journal");
  }
  std::unordered_set<uint32_t> referenced;
  for (const EntryPtr& e : d.entries) {
    bool ok = fits(e->commit_segment, e->commit_offset, e->commit_size);
    referenced.insert(e->commit_segment);
    for (const BlockRef& b : e->blocks) {
      ok = ok && fits(b.segment, b.offset, format::BlockRecordSize(b.length));
      referenced.insert(b.segment);
    }
    if (!ok) return Status::Invalid("journal checkpoint: blob '" + e->key + "' points past the journal");
  }
  for (const EntryPtr& e : d.entries) {
    if (!index_.try_emplace(e->key, e).second) return Status::Invalid("journal checkpoint: duplicate key");
  }
  std::unordered_set<uint32_t> listed;
  for (SegmentMeta& m : d.segments) {
    listed.insert(m.id);
    auto it = segments_.find(m.id);
    if (it == segments_.end()) continue;  // retired after the snapshot
    it->second->commit_keys.insert(m.commit_keys.begin(), m.commit_keys.end());
    it->second->tombstones = std::move(m.tombstones);
  }
  // A segment older than the checkpoint position that it does not list was
  // retired by a compaction that crashed before removing the file.
  for (const auto& [id, seg] : segments_) {
    if (id >= d.pos.segment || listed.count(id) > 0) continue;
    if (referenced.count(id) > 0) return Status::Invalid("journal checkpoint: omits a segment it uses");
    retired->push_back(id);
  }
  next_seq_ = d.next_seq;
  next_blob_id_ = d.next_blob_id;
  *start = d.pos;
  return Status::Ok();
}

Status JournalImpl::Recover() {
  Result<std::vector<std::string>> names = env_->ListDir(dir_);
  if (!names.ok()) return names.status();
  std::map<uint32_t, SegmentPtr> on_disk;
  for (const std::string& name : *names) {
    uint32_t id = 0;
    if (name == format::kCheckpointTemp) {
      if (Status s = env_->Remove(dir_ + "/" + name); !s.ok()) return s;
    }
    if (!format::ParseSegmentName(name, &id)) continue;
    Result<std::unique_ptr<File>> f = env_->OpenFile(dir_ + "/" + name, false);
    if (!f.ok()) return f.status();
    Result<uint64_t> size = (*f)->Size();
    if (!size.ok()) return size.status();
    auto seg = std::make_shared<Segment>(id, std::move(f).value(), *size);
    seg->sealed = true;
    on_disk[id] = std::move(seg);
  }
  segments_ = on_disk;
  Position start{on_disk.empty() ? 0 : on_disk.begin()->first, 0};
  std::vector<uint32_t> retired;
  Status cs = LoadCheckpoint(on_disk, &start, &retired);
  if (cs.ok() && !retired.empty()) {
    // Removing them is part of recovery: if it failed and a later open fell
    // back to a full scan, their dead records would be replayed.
    for (uint32_t id : retired) {
      log::Info("journal: removing retired segment", {{"file", segments_[id]->file->path()}});
      if (Status s = env_->Remove(segments_[id]->file->path()); !s.ok()) return s;
      segments_.erase(id);
    }
    if (Status s = env_->SyncDir(dir_); !s.ok()) return s;
  }
  if (!cs.ok()) {
    if (cs.code() != Code::kNotFound) {
      log::Warn("journal: checkpoint unusable, scanning every segment", {{"dir", dir_}, {"error", cs.message()}});
    }
    segments_ = on_disk;
    ResetRecoveredState();
    start = {on_disk.empty() ? 0 : on_disk.begin()->first, 0};
  }
  checkpoint_loaded_ = cs.ok();
  if (Status s = ScanTail(start); !s.ok()) return s;
  {
    std::unique_lock l(index_mu_);
    for (const auto& [key, e] : index_) AccountLocked(*e, +1);
  }
  std::lock_guard a(append_mu_);
  if (segments_.empty()) {
    if (Status s = RollLocked(); !s.ok()) return s;
  } else {
    active_ = segments_.rbegin()->second;
    active_->sealed = false;
    append_pos_ = active_->size;
    next_segment_id_ = active_->id + 1;
  }
  std::unique_lock l(index_mu_);
  applied_ = {active_->id, append_pos_};
  log::Info("journal opened", {{"dir", dir_},
                               {"blobs", std::to_string(index_.size())},
                               {"segments", std::to_string(segments_.size())},
                               {"checkpoint", cs.ok() ? "yes" : "no"},
                               {"scanned_bytes", std::to_string(scanned_bytes_.load())},
                               {"truncated_bytes", std::to_string(truncated_bytes_.load())},
                               {"corrupt_records", std::to_string(corrupt_records_.load())}});
  return Status::Ok();
}

// Replays records from `start` on, in file order (the last record of a key
// wins; see group_commit.cc for why compaction copies keep that true).
Status JournalImpl::ScanTail(Position start) {
  TailBlocks tail_blocks;
  uint64_t max_seq = 0, max_blob = 0, rejected = 0, records = 0;
  const uint32_t last_id = segments_.empty() ? 0 : segments_.rbegin()->first;
  for (auto& [id, seg] : segments_) {
    if (id < start.segment) continue;
    SegmentScanner sc(*seg->file, id, id == start.segment ? start.offset : 0, seg->size);
    format::RecordHeader h;
    uint64_t pos = 0;
    std::string_view key, body;
    while (sc.Next(&h, &pos, &key, &body)) {
      ++records;
      if (h.type == format::kBlock) {
        tail_blocks[BlockKey(id, pos)] = {h.seq, format::Get32(body.data()),
                                          static_cast<uint32_t>(body.size() - format::kBlockPrefix)};
        max_blob = std::max(max_blob, h.seq);
        continue;
      }
      max_seq = std::max(max_seq, h.seq);
      if (h.type == format::kTombstone) {
        index_.erase(std::string(key));
        seg->tombstones.emplace_back(key);
        continue;
      }
      format::CommitBody cb;
      if (!format::DecodeCommitBody(body, h.flags, &cb)) {
        ++corrupt_records_;
        continue;
      }
      seg->commit_keys.insert(KeyHash(key));
      max_blob = std::max(max_blob, cb.blob_id);
      EntryPtr e = EntryFromCommit(h, pos, key, std::move(cb), start, tail_blocks, segments_);
      if (e == nullptr) {
        ++rejected;
        continue;
      }
      std::string k = e->key;  // copied first: e is moved into the map
      index_.insert_or_assign(std::move(k), std::move(e));
    }
    if (!sc.status().ok()) return sc.status();
    scanned_bytes_ += sc.bytes_read();
    corrupt_records_ += sc.corrupt_regions();
    if (sc.valid_end() < seg->size) {
      if (id == last_id) {  // a torn tail: never acknowledged, cut it off
        if (Status s = seg->file->Truncate(sc.valid_end()); !s.ok()) return s;
        if (Status s = seg->file->Sync(); !s.ok()) return s;
        ++fsyncs_;
        truncated_bytes_ += seg->size - sc.valid_end();
        seg->size = sc.valid_end();
      } else {  // garbage at the end of a sealed segment: left for compaction
        ++corrupt_records_;
      }
    }
  }
  if (rejected > 0) log::Warn("journal: commits with missing blocks ignored", {{"count", std::to_string(rejected)}});
  if (corrupt_records_ > 0) {
    log::Warn("journal: corrupt records skipped", {{"dir", dir_}, {"count", std::to_string(corrupt_records_.load())}});
  }
  next_seq_ = std::max<uint64_t>(next_seq_, max_seq + 1);
  next_blob_id_ = std::max<uint64_t>(next_blob_id_, max_blob + 1);
  changes_ = records + (truncated_bytes_ > 0 ? 1 : 0);
  appended_ = scanned_bytes_.load();
  return Status::Ok();
}

}  // namespace folio::journal::internal
