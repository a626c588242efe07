// BlobWriter (streaming appends, commit) and BlobReader (verified reads).
#include "folio/journal/blob.h"

#include <algorithm>

#include "blob_internal.h"

namespace folio::journal {

namespace internal {

namespace {

Status Corrupt(const BlobEntry& e, size_t part, uint32_t segment, uint64_t offset, const char* what) {
  return Status::DataLoss("journal: blob '" + e.key + "' part " + std::to_string(part) + " at " +
                          format::SegmentName(segment) + " offset " + std::to_string(offset) + ": " + what);
}

}  // namespace

Status ReadVerifiedPart(const Segment& seg, const BlobEntry& e, size_t part, std::string* record,
                        std::string_view* data) {
  const bool is_block = part < e.blocks.size();
  const uint32_t offset = is_block ? e.blocks[part].offset : e.commit_offset;
  const uint64_t size = is_block ? format::BlockRecordSize(e.blocks[part].length) : e.commit_size;
  record->resize(size);
  size_t got = 0;
  if (Status s = seg.file->ReadAt(offset, size, record->data(), &got); !s.ok()) return s;
  if (got != size) return Corrupt(e, part, seg.id, offset, "record cut short");
  format::RecordHeader h;
  if (!format::ParseHeader(record->data(), &h) || h.size() != size || h.segment != seg.id || h.position != offset) {
    return Corrupt(e, part, seg.id, offset, "bad record header");
  }
  if (!format::CheckRecordCrc(record->data(), h)) return Corrupt(e, part, seg.id, offset, "checksum mismatch");
  if (is_block) {
    const char* body = record->data() + format::kHeaderSize;
    if (h.type != format::kBlock || h.seq != e.blob_id || format::Get32(body) != part ||
        h.body_len != format::kBlockPrefix + e.blocks[part].length) {
      return Corrupt(e, part, seg.id, offset, "record belongs to another blob");
    }
    *data = std::string_view(body + format::kBlockPrefix, e.blocks[part].length);
  } else {
    if (h.type != format::kCommit || h.seq != e.seq || h.key_len != e.key.size() ||
        std::string_view(record->data() + format::kHeaderSize, h.key_len) != e.key ||
        e.inline_offset + uint64_t{e.inline_len} + format::kTrailerSize > size) {
      return Corrupt(e, part, seg.id, offset, "record belongs to another blob");
    }
    *data = std::string_view(record->data() + e.inline_offset, e.inline_len);
  }
  return Status::Ok();
}

const Segment* ReaderState::FindSegment(uint32_t id) const {
  for (const SegmentPtr& s : segments) {
    if (s->id == id) return s.get();
  }
  return nullptr;
}

Status ReaderState::LoadPart(size_t part) {
  if (cached == part) return Status::Ok();
  cached = SIZE_MAX;
  const BlobEntry& e = *entry;
  uint32_t seg_id = part < e.blocks.size() ? e.blocks[part].segment : e.commit_segment;
  const Segment* seg = FindSegment(seg_id);
  if (seg == nullptr) return Status::Internal("journal: blob '" + e.key + "': segment missing");
  if (Status s = ReadVerifiedPart(*seg, e, part, &cache_record, &cache_data); !s.ok()) return s;
  cached = part;
  return Status::Ok();
}

WriterState::~WriterState() {
  if (phase == Phase::kOpen) Finish(Phase::kAborted);
}

void WriterState::Finish(Phase p) {
  phase = p;
  JournalImpl::ReleasePins(&pins);
  blocks.clear();
  if (journal != nullptr && buf.capacity() > 0) journal->ReturnBuffer(std::move(buf));
  buf = std::string();
}

}  // namespace internal

using internal::WriterState;

BlobWriter::BlobWriter(std::unique_ptr<WriterState> s) : s_(std::move(s)) {}
BlobWriter::BlobWriter(BlobWriter&&) noexcept = default;
BlobWriter& BlobWriter::operator=(BlobWriter&&) noexcept = default;
BlobWriter::~BlobWriter() = default;

const std::string& BlobWriter::key() const {
  static const std::string empty;
  return s_ != nullptr ? s_->key : empty;
}

uint64_t BlobWriter::size() const { return s_ != nullptr ? s_->size : 0; }

Status BlobWriter::Append(std::string_view data) {
  if (s_ == nullptr || s_->phase != WriterState::Phase::kOpen) {
    return Status::Invalid("journal: Append on a finished blob writer");
  }
  internal::JournalImpl& j = *s_->journal;
  const size_t block = j.options().block_bytes;
  if (data.size() > j.options().max_blob_bytes - s_->size) {
    return Status::TooLarge("journal: blob '" + s_->key + "' exceeds " + std::to_string(j.options().max_blob_bytes) +
                            " bytes");
  }
  // The commit record lists every block; keep it well inside one segment.
  const uint64_t max_blocks = j.options().segment_bytes / 4 / format::kBlockRefSize;
  if ((s_->size + data.size()) / block > max_blocks) {
    return Status::TooLarge("journal: blob '" + s_->key + "' has too many blocks for the segment size");
  }
  while (!data.empty()) {
    std::string_view full;  // a whole block to write now
    const bool from_buffer = !(s_->buf.empty() && data.size() >= block);
    if (!from_buffer) {  // straight from the caller's bytes, no copy
      full = data.substr(0, block);
      data.remove_prefix(block);
    } else {
      if (s_->buf.capacity() < block) s_->buf = j.TakeBuffer();
      size_t take = std::min(block - s_->buf.size(), data.size());
      s_->buf.append(data.data(), take);
      data.remove_prefix(take);
      s_->size += take;
      if (s_->buf.size() < block) break;  // data is used up
      full = s_->buf;
    }
    auto index = static_cast<uint32_t>(s_->blocks.size());
    Result<format::BlockRef> ref = j.AppendBlock(s_->blob_id, index, full, &s_->pins);
    if (!ref.ok()) return ref.status();
    s_->blocks.push_back(*ref);
    if (from_buffer) {
      s_->buf.clear();
    } else {
      s_->size += block;
    }
  }
  return Status::Ok();
}

Status BlobWriter::Commit() {
  if (s_ == nullptr || s_->phase != WriterState::Phase::kOpen) {
    return Status::Invalid("journal: Commit on a finished blob writer");
  }
  internal::CommitOp op;
  op.kind = internal::CommitOp::Kind::kCommit;
  op.key = s_->key;
  op.meta = s_->meta;
  op.blob_id = s_->blob_id;
  op.size = s_->size;
  op.blocks = s_->blocks;
  op.inline_data = s_->buf;
  Status s = s_->journal->Submit({&op, 1});
  if (s.ok()) s = op.status;
  s_->Finish(s.ok() ? WriterState::Phase::kCommitted : WriterState::Phase::kAborted);
  return s;
}

void BlobWriter::Abort() {
  if (s_ != nullptr && s_->phase == WriterState::Phase::kOpen) s_->Finish(WriterState::Phase::kAborted);
}

using internal::ReaderState;

BlobReader::BlobReader(std::unique_ptr<ReaderState> s) : s_(std::move(s)) {}
BlobReader::BlobReader(BlobReader&&) noexcept = default;
BlobReader& BlobReader::operator=(BlobReader&&) noexcept = default;
BlobReader::~BlobReader() = default;

const std::string& BlobReader::key() const { return s_->entry->key; }
const std::string& BlobReader::meta() const { return s_->entry->meta; }
uint64_t BlobReader::size() const { return s_->entry->size; }
uint64_t BlobReader::seq() const { return s_->entry->seq; }

Status BlobReader::ReadAt(uint64_t offset, size_t n, std::string* out) {
  out->clear();
  const internal::BlobEntry& e = *s_->entry;
  if (offset > e.size) {
    return Status::Invalid("journal: read at " + std::to_string(offset) + " past the end of blob '" + e.key + "' (" +
                           std::to_string(e.size) + " bytes)");
  }
  n = static_cast<size_t>(std::min<uint64_t>(n, e.size - offset));
  out->reserve(n);
  while (n > 0) {
    auto it = std::upper_bound(s_->starts.begin(), s_->starts.end(), offset);
    auto part = static_cast<size_t>(it - s_->starts.begin()) - 1;
    if (Status s = s_->LoadPart(part); !s.ok()) {
      out->clear();
      return s;
    }
    uint64_t within = offset - s_->starts[part];
    size_t take = static_cast<size_t>(std::min<uint64_t>(n, s_->cache_data.size() - within));
    out->append(s_->cache_data.data() + within, take);
    offset += take;
    n -= take;
  }
  return Status::Ok();
}

Status BlobReader::ReadAll(std::string* out) { return ReadAt(0, s_->entry->size, out); }

}  // namespace folio::journal
