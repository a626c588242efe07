// SegmentScanner: sequential validation with resync.
#include "scan.h"

#include <algorithm>

namespace folio::journal::internal {

namespace {
constexpr uint64_t kReadChunk = 4u << 20;  // sequential reads of 4 MiB
}

SegmentScanner::SegmentScanner(const File& file, uint32_t id, uint64_t start, uint64_t end)
    : file_(file), id_(id), end_(end), cursor_(start), valid_end_(start) {}

bool SegmentScanner::Load(uint64_t pos, uint64_t n) {
  if (!status_.ok() || pos + n > end_) return false;
  if (pos >= buf_start_ && pos + n <= buf_start_ + buf_.size()) return true;
  uint64_t want = std::min(std::max(n, kReadChunk), end_ - pos);
  buf_.resize(want);
  size_t got = 0;
  status_ = file_.ReadAt(pos, want, buf_.data(), &got);
  bytes_read_ += got;
  buf_.resize(got);
  buf_start_ = pos;
  return status_.ok() && got >= n;
}

bool SegmentScanner::ValidAt(uint64_t pos, format::RecordHeader* h) {
  if (!Load(pos, format::kHeaderSize) || !format::ParseHeader(At(pos), h)) return false;
  if (h->segment != id_ || h->position != pos || h->size() > end_ - pos) return false;
  return Load(pos, h->size()) && format::CheckRecordCrc(At(pos), *h);
}

bool SegmentScanner::Next(format::RecordHeader* h, uint64_t* pos, std::string_view* key, std::string_view* body) {
  while (status_.ok() && cursor_ + format::kHeaderSize <= end_) {
    if (ValidAt(cursor_, h)) {
      if (in_bad_) ++corrupt_;
      in_bad_ = false;
      *pos = cursor_;
      const char* p = At(cursor_);
      *key = std::string_view(p + format::kHeaderSize, h->key_len);
      *body = std::string_view(p + format::kHeaderSize + h->key_len, h->body_len);
      cursor_ += h->size();
      valid_end_ = cursor_;
      return true;
    }
    in_bad_ = true;
    // Resync: the next aligned offset whose first bytes are the magic.
    cursor_ += format::kAlign;
    while (cursor_ + format::kHeaderSize <= end_ && Load(cursor_, format::kHeaderSize) &&
           format::Get32(At(cursor_)) != format::kRecordMagic) {
      cursor_ += format::kAlign;
    }
  }
  return false;
}

}  // namespace folio::journal::internal
