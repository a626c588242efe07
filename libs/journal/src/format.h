// The journal's on-disk constants and record codec: the one place that knows
// byte offsets (README.md "On-disk format" is the prose spec; change both
// together, like LevelDB's db/log_format.h and doc/log_format.md).
// Pure functions and constants; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace folio::journal::format {

// ---- records (segment files) ----
inline constexpr uint32_t kRecordMagic = 0x4A4C4F46;  // bytes "FOLJ"
inline constexpr uint8_t kVersion = 1;
// Records start at multiples of kAlign (zero padding after the trailer), so a
// scanner that lost its place after a corrupt record resyncs in 8-byte steps.
// Not 4 KiB: padding to sectors would cost up to 4 KiB per record (write
// amplification ~1.06 for a 64 KiB blob); 8 costs at most 7 bytes.
inline constexpr size_t kAlign = 8;
inline constexpr size_t kHeaderSize = 32;
inline constexpr size_t kTrailerSize = 4;  // masked CRC-32C

enum RecordType : uint8_t { kBlock = 1, kCommit = 2, kTombstone = 3 };
// Commit flag: the body ends with the blob's final partial block ("inline tail").
inline constexpr uint16_t kFlagInlineTail = 1;

// Header field offsets.
inline constexpr size_t kOffMagic = 0, kOffVersion = 4, kOffType = 5, kOffFlags = 6,
                        kOffSegment = 8, kOffPosition = 12, kOffSeq = 16, kOffKeyLen = 24,
                        kOffReserved = 26, kOffBodyLen = 28;

inline constexpr size_t kBlockPrefix = 8;     // block body: u32 index, u32 zero, data
inline constexpr size_t kCommitFixed = 24;    // u64 blob id, u64 size, u16 meta len, u16 0, u32 blocks
inline constexpr size_t kBlockRefSize = 12;   // u32 segment, u32 offset, u32 data length
inline constexpr size_t kMaxKeyBytes = 65535;
inline constexpr size_t kMaxMetaBytes = 65535;

// ---- files ----
inline constexpr char kSegmentPrefix[] = "segment-";  // segment-00000001.fj
inline constexpr char kSegmentSuffix[] = ".fj";
inline constexpr char kCheckpointName[] = "CHECKPOINT";
inline constexpr char kCheckpointTemp[] = "CHECKPOINT.tmp";
inline constexpr char kLockName[] = "LOCK";
inline constexpr char kCheckpointMagic[8] = {'F', 'O', 'L', 'J', 'C', 'K', 'P', 'T'};
inline constexpr uint32_t kCheckpointVersion = 1;

std::string SegmentName(uint32_t id);
// Parses "segment-%08u.fj"; false for any other name.
bool ParseSegmentName(std::string_view name, uint32_t* id);

// ---- little-endian helpers ----
inline void Put16(char* p, uint16_t v) { std::memcpy(p, &v, 2); }
inline void Put32(char* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void Put64(char* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint16_t Get16(const char* p) { uint16_t v; std::memcpy(&v, p, 2); return v; }
inline uint32_t Get32(const char* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline uint64_t Get64(const char* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }

inline constexpr uint64_t AlignUp(uint64_t n) { return (n + kAlign - 1) & ~uint64_t{kAlign - 1}; }
// Bytes a record occupies in its segment, padding included.
inline constexpr uint64_t RecordSize(uint64_t key_len, uint64_t body_len) {
  return AlignUp(kHeaderSize + key_len + body_len + kTrailerSize);
}
inline constexpr uint64_t BlockRecordSize(uint64_t data_len) { return RecordSize(0, kBlockPrefix + data_len); }

struct RecordHeader {
  uint8_t type = 0;
  uint16_t flags = 0;
  uint32_t segment = 0;   // id of the segment the record was written to
  uint32_t position = 0;  // its own offset in that segment
  uint64_t seq = 0;       // block: blob id; commit/tombstone: sequence number
  uint16_t key_len = 0;
  uint32_t body_len = 0;
  uint64_t size() const { return RecordSize(key_len, body_len); }
};

// A record ready to be written: header, trailer and padding bytes here, key
// and body as views the caller keeps alive until the write returns.
struct EncodedRecord {
  char header[kHeaderSize];
  char trailer[kTrailerSize + kAlign];  // CRC, then zero padding
  size_t trailer_len = 0;
  std::string_view key;
  std::string_view body[2];
  uint64_t size = 0;
};

// CRC-32C of key ‖ body (the payload); computed before the record's position
// is known, so the checksum work stays outside the append lock.
uint32_t PayloadCrc(std::string_view key, std::string_view body0, std::string_view body1);
// Fills `out` for header `h` (key_len/body_len must match the views) with the
// CRC = crc32c(key ‖ body ‖ header), extended from `payload_crc`.
void EncodeRecord(const RecordHeader& h, std::string_view key, std::string_view body0,
                  std::string_view body1, uint32_t payload_crc, EncodedRecord* out);

// Checks magic, version, type, flags and reserved bits of a 32-byte header
// and fills *h. The CRC is not checked here.
bool ParseHeader(const char* p, RecordHeader* h);
// REQUIRES: rec holds h.size() bytes starting at the header. Checks the CRC.
bool CheckRecordCrc(const char* rec, const RecordHeader& h);

// ---- commit bodies ----
struct BlockRef {
  uint32_t segment = 0;
  uint32_t offset = 0;  // of the block record's header
  uint32_t length = 0;  // data bytes
  bool operator==(const BlockRef&) const = default;
};

// The fixed part of a commit body (everything but the inline tail).
std::string EncodeCommitPrefix(uint64_t blob_id, uint64_t size, std::string_view meta,
                               const std::vector<BlockRef>& blocks);

struct CommitBody {
  uint64_t blob_id = 0;
  uint64_t size = 0;
  std::string_view meta;
  std::vector<BlockRef> blocks;
  uint32_t inline_offset = 0;  // of the inline tail within the body
  uint32_t inline_len = 0;
};
// Strict: lengths must add up (sum of blocks + inline == size), the inline
// flag must match a non-empty tail, no block is empty.
bool DecodeCommitBody(std::string_view body, uint16_t flags, CommitBody* out);

}  // namespace folio::journal::format
