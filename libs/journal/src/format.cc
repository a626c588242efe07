// Record and commit-body codec; see format.h and README.md.
#include "format.h"

#include <bit>
#include <cstdio>

#include "folio/journal/crc32c.h"

namespace folio::journal::format {

static_assert(std::endian::native == std::endian::little, "the journal format is little-endian");

std::string SegmentName(uint32_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%08u%s", kSegmentPrefix, id, kSegmentSuffix);
  return buf;
}

bool ParseSegmentName(std::string_view name, uint32_t* id) {
  std::string_view prefix = kSegmentPrefix, suffix = kSegmentSuffix;
  if (name.size() != prefix.size() + 8 + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix)) {
    return false;
  }
  uint64_t v = 0;
  for (char c : name.substr(prefix.size(), 8)) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v == 0) return false;  // ids start at 1
  *id = static_cast<uint32_t>(v);
  return true;
}

uint32_t PayloadCrc(std::string_view key, std::string_view body0, std::string_view body1) {
  uint32_t crc = crc32c::Extend(0, key.data(), key.size());
  crc = crc32c::Extend(crc, body0.data(), body0.size());
  return crc32c::Extend(crc, body1.data(), body1.size());
}

void EncodeRecord(const RecordHeader& h, std::string_view key, std::string_view body0,
                  std::string_view body1, uint32_t payload_crc, EncodedRecord* out) {
  char* p = out->header;
  Put32(p + kOffMagic, kRecordMagic);
  p[kOffVersion] = static_cast<char>(kVersion);
  p[kOffType] = static_cast<char>(h.type);
  Put16(p + kOffFlags, h.flags);
  Put32(p + kOffSegment, h.segment);
  Put32(p + kOffPosition, h.position);
  Put64(p + kOffSeq, h.seq);
  Put16(p + kOffKeyLen, h.key_len);
  Put16(p + kOffReserved, 0);
  Put32(p + kOffBodyLen, h.body_len);
  uint32_t crc = crc32c::Extend(payload_crc, p, kHeaderSize);
  std::memset(out->trailer, 0, sizeof out->trailer);
  Put32(out->trailer, crc32c::Mask(crc));
  out->size = h.size();
  out->trailer_len = kTrailerSize + (out->size - (kHeaderSize + h.key_len + h.body_len + kTrailerSize));
  out->key = key;
  out->body[0] = body0;
  out->body[1] = body1;
}

bool ParseHeader(const char* p, RecordHeader* h) {
  if (Get32(p + kOffMagic) != kRecordMagic) return false;
  if (static_cast<uint8_t>(p[kOffVersion]) != kVersion) return false;
  h->type = static_cast<uint8_t>(p[kOffType]);
  h->flags = Get16(p + kOffFlags);
  if (h->type != kBlock && h->type != kCommit && h->type != kTombstone) return false;
  uint16_t allowed = h->type == kCommit ? kFlagInlineTail : 0;
  if ((h->flags & ~allowed) != 0 || Get16(p + kOffReserved) != 0) return false;
  h->segment = Get32(p + kOffSegment);
  h->position = Get32(p + kOffPosition);
  h->seq = Get64(p + kOffSeq);
  h->key_len = Get16(p + kOffKeyLen);
  h->body_len = Get32(p + kOffBodyLen);
  if (h->type == kBlock) return h->key_len == 0 && h->body_len > kBlockPrefix;
  if (h->type == kTombstone) return h->key_len > 0 && h->body_len == 0;
  return h->key_len > 0 && h->body_len >= kCommitFixed;
}

bool CheckRecordCrc(const char* rec, const RecordHeader& h) {
  size_t payload = size_t{h.key_len} + h.body_len;
  uint32_t crc = crc32c::Extend(0, rec + kHeaderSize, payload);
  crc = crc32c::Extend(crc, rec, kHeaderSize);
  return crc32c::Unmask(Get32(rec + kHeaderSize + payload)) == crc;
}

std::string EncodeCommitPrefix(uint64_t blob_id, uint64_t size, std::string_view meta,
                               const std::vector<BlockRef>& blocks) {
  std::string out(kCommitFixed + meta.size() + kBlockRefSize * blocks.size(), '\0');
  char* p = out.data();
  Put64(p, blob_id);
  Put64(p + 8, size);
  Put16(p + 16, static_cast<uint16_t>(meta.size()));
  Put16(p + 18, 0);
  Put32(p + 20, static_cast<uint32_t>(blocks.size()));
  p += kCommitFixed;
  std::memcpy(p, meta.data(), meta.size());
  p += meta.size();
  for (const BlockRef& b : blocks) {
    Put32(p, b.segment);
    Put32(p + 4, b.offset);
    Put32(p + 8, b.length);
    p += kBlockRefSize;
  }
  return out;
}

bool DecodeCommitBody(std::string_view body, uint16_t flags, CommitBody* out) {
  if (body.size() < kCommitFixed) return false;
  const char* p = body.data();
  out->blob_id = Get64(p);
  out->size = Get64(p + 8);
  uint16_t meta_len = Get16(p + 16);
  if (Get16(p + 18) != 0) return false;
  uint32_t count = Get32(p + 20);
  size_t fixed = kCommitFixed + meta_len;
  if (body.size() < fixed || (body.size() - fixed) / kBlockRefSize < count) return false;
  out->meta = body.substr(kCommitFixed, meta_len);
  out->blocks.resize(count);
  uint64_t total = 0;
  const char* r = p + fixed;
  for (uint32_t i = 0; i < count; ++i, r += kBlockRefSize) {
    BlockRef& b = out->blocks[i];
    b.segment = Get32(r);
    b.offset = Get32(r + 4);
    b.length = Get32(r + 8);
    if (b.length == 0 || b.offset % kAlign != 0) return false;
    total += b.length;
  }
  size_t prefix = fixed + size_t{count} * kBlockRefSize;
  out->inline_offset = static_cast<uint32_t>(prefix);
  out->inline_len = static_cast<uint32_t>(body.size() - prefix);
  bool has_inline = (flags & kFlagInlineTail) != 0;
  if (has_inline != (out->inline_len > 0)) return false;
  return total + out->inline_len == out->size;
}

}  // namespace folio::journal::format
