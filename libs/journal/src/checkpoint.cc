// Checkpoint codec and JournalImpl::Checkpoint (temp file, fdatasync,
// rename, directory fsync: a crash leaves the old or the new file, whole).
#include "checkpoint.h"

#include "folio/core/log.h"
#include "folio/journal/crc32c.h"

namespace folio::journal::internal {

namespace {

class Out {
 public:
  explicit Out(std::string* s) : s_(s) {}
  void U16(uint16_t v) { Raw(&v, 2); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void Str16(std::string_view v) {
    U16(static_cast<uint16_t>(v.size()));
    s_->append(v);
  }
  void Raw(const void* p, size_t n) { s_->append(static_cast<const char*>(p), n); }

 private:
  std::string* s_;
};

class In {
 public:
  explicit In(std::string_view s) : s_(s) {}
  bool ok() const { return ok_; }
  size_t left() const { return s_.size() - at_; }
  uint16_t U16() { return Take(2) ? format::Get16(s_.data() + at_ - 2) : 0; }
  uint32_t U32() { return Take(4) ? format::Get32(s_.data() + at_ - 4) : 0; }
  uint64_t U64() { return Take(8) ? format::Get64(s_.data() + at_ - 8) : 0; }
  std::string Str16() {
    uint16_t n = U16();
    return Take(n) ? std::string(s_.substr(at_ - n, n)) : std::string();
  }
  // A count of items of at least `min_bytes` each that must fit in what is left.
  bool Count(uint64_t n, size_t min_bytes) {
    if (n > left() / min_bytes) ok_ = false;
    return ok_;
  }

 private:
  bool Take(size_t n) {
    if (!ok_ || left() < n) {
      ok_ = false;
      return false;
    }
    at_ += n;
    return true;
  }
  std::string_view s_;
  size_t at_ = 0;
  bool ok_ = true;
};

constexpr size_t kFixedHeader = 8 + 4 + 4 + 4 + 4 + 8 + 8;

}  // namespace

std::string EncodeCheckpoint(const CheckpointData& d) {
  std::string s;
  size_t estimate = kFixedHeader + 16;
  for (const EntryPtr& e : d.entries) estimate += 64 + e->key.size() + e->meta.size() + 12 * e->blocks.size();
  s.reserve(estimate);
  Out o(&s);
  o.Raw(format::kCheckpointMagic, sizeof format::kCheckpointMagic);
  o.U32(format::kCheckpointVersion);
  o.U32(0);
  o.U32(d.pos.segment);
  o.U32(static_cast<uint32_t>(d.pos.offset));
  o.U64(d.next_seq);
  o.U64(d.next_blob_id);
  o.U32(static_cast<uint32_t>(d.segments.size()));
  for (const SegmentMeta& m : d.segments) {
    o.U32(m.id);
    o.U32(static_cast<uint32_t>(m.commit_keys.size()));
    o.U32(static_cast<uint32_t>(m.tombstones.size()));
    for (uint64_t h : m.commit_keys) o.U64(h);
    for (const std::string& k : m.tombstones) o.Str16(k);
  }
  o.U64(d.entries.size());
  for (const EntryPtr& e : d.entries) {
    o.Str16(e->key);
    o.Str16(e->meta);
    o.U64(e->seq);
    o.U64(e->blob_id);
    o.U64(e->size);
    o.U32(e->commit_segment);
    o.U32(e->commit_offset);
    o.U32(e->commit_size);
    o.U32(e->inline_offset);
    o.U32(e->inline_len);
    o.U32(static_cast<uint32_t>(e->blocks.size()));
    for (const BlockRef& b : e->blocks) {
      o.U32(b.segment);
      o.U32(b.offset);
      o.U32(b.length);
    }
  }
  o.U32(crc32c::Mask(crc32c::Value(s)));
  return s;
}

Status DecodeCheckpoint(std::string_view bytes, CheckpointData* out) {
  auto bad = [](const char* why) { return Status::Invalid(std::string("journal checkpoint: ") + why); };
  if (bytes.size() < kFixedHeader + 4 + 8 + 4) return bad("too short");
  if (bytes.substr(0, 8) != std::string_view(format::kCheckpointMagic, 8)) return bad("bad magic");
  std::string_view body = bytes.substr(0, bytes.size() - 4);
  if (crc32c::Unmask(format::Get32(bytes.data() + body.size())) != crc32c::Value(body)) {
    return bad("checksum mismatch");
  }
  In in(body.substr(8));
  if (in.U32() != format::kCheckpointVersion) return bad("unknown version");
  if (in.U32() != 0) return bad("reserved field set");
  out->pos.segment = in.U32();
  out->pos.offset = in.U32();
  out->next_seq = in.U64();
  out->next_blob_id = in.U64();
  uint32_t nseg = in.U32();
  if (!in.Count(nseg, 12)) return bad("truncated");
  out->segments.resize(nseg);
  for (SegmentMeta& m : out->segments) {
    m.id = in.U32();
    uint32_t nkeys = in.U32(), ntomb = in.U32();
    if (!in.Count(nkeys, 8)) return bad("truncated");
    m.commit_keys.resize(nkeys);
    for (uint64_t& h : m.commit_keys) h = in.U64();
    if (!in.Count(ntomb, 2)) return bad("truncated");
    m.tombstones.resize(ntomb);
    for (std::string& k : m.tombstones) k = in.Str16();
  }
  uint64_t nent = in.U64();
  if (!in.Count(nent, 52)) return bad("truncated");
  out->entries.clear();
  out->entries.reserve(nent);
  for (uint64_t i = 0; i < nent && in.ok(); ++i) {
    auto e = std::make_shared<BlobEntry>();
    e->key = in.Str16();
    e->meta = in.Str16();
    e->seq = in.U64();
    e->blob_id = in.U64();
    e->size = in.U64();
    e->commit_segment = in.U32();
    e->commit_offset = in.U32();
    e->commit_size = in.U32();
    e->inline_offset = in.U32();
    e->inline_len = in.U32();
    uint32_t nblocks = in.U32();
    if (!in.Count(nblocks, 12)) return bad("truncated");
    e->blocks.resize(nblocks);
    uint64_t total = e->inline_len;
    for (BlockRef& b : e->blocks) {
      b.segment = in.U32();
      b.offset = in.U32();
      b.length = in.U32();
      total += b.length;
    }
    if (e->key.empty() || total != e->size || e->inline_offset + uint64_t{e->inline_len} > e->commit_size) {
      return bad("inconsistent entry");
    }
    out->entries.push_back(std::move(e));
  }
  if (!in.ok() || in.left() != 0) return bad("truncated or trailing bytes");
  return Status::Ok();
}

Status JournalImpl::Checkpoint() {
  std::lock_guard c(checkpoint_mu_);
  if (Status s = CheckWritable(); !s.ok()) return s;
  CheckpointData d;
  uint64_t snap_changes, snap_appended;
  {
    std::shared_lock l(index_mu_);
    snap_changes = changes_;
    snap_appended = appended_;
    d.pos = applied_;
    d.next_seq = next_seq_;
    d.next_blob_id = next_blob_id_;
    for (const auto& [id, seg] : segments_) {
      SegmentMeta& m = d.segments.emplace_back();
      m.id = id;
      m.commit_keys.assign(seg->commit_keys.begin(), seg->commit_keys.end());
      m.tombstones = seg->tombstones;
    }
    d.entries.reserve(index_.size());
    for (const auto& [key, e] : index_) d.entries.push_back(e);
  }
  std::string bytes = EncodeCheckpoint(d);
  const std::string tmp = dir_ + "/" + format::kCheckpointTemp;
  Result<std::unique_ptr<File>> f = env_->OpenFile(tmp, true);
  if (!f.ok()) return f.status();
  std::string_view parts[] = {bytes};
  Status s = (*f)->Truncate(0);
  if (s.ok()) s = (*f)->WriteAt(0, parts);
  if (s.ok()) {
    s = (*f)->Sync();
    ++fsyncs_;
  }
  f->reset();
  if (s.ok()) s = env_->Rename(tmp, dir_ + "/" + format::kCheckpointName);
  const bool renamed = s.ok();
  if (s.ok()) {
    s = env_->SyncDir(dir_);
    ++fsyncs_;
  }
  if (!s.ok()) {
    // Not sticky: segments are untouched; the old checkpoint (or none) still
    // holds. A half-written temp file would only hold space a full disk needs.
    if (Status r = renamed ? Status::Ok() : env_->Remove(tmp); !r.ok()) {
      log::Warn("journal: cannot remove a failed checkpoint's temp file", {{"error", r.message()}});
    }
    return s;
  }
  bytes_written_ += bytes.size();
  checkpoint_bytes_ += bytes.size();
  ++checkpoints_;
  changes_ -= snap_changes;
  appended_at_ckpt_ = snap_appended;
  last_ckpt_size_ = bytes.size();
  return Status::Ok();
}

}  // namespace folio::journal::internal
