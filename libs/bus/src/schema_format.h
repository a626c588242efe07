// Constants of the wire formats in schema.h; the prose spec is
// libs/bus/README.md. Change both together.
#pragma once

#include <cstddef>
#include <cstdint>

namespace folio::bus::format {

// Page record (KV "pages" value), little-endian:
//   u8  schema            = 4 for a page that is not public, 3 with a body_blob, else 2; 1 is decoded too
//   u16 status
//   i64 last_modified_s
//   i64 version
//   u16 len, bytes        content_type
//   u16 len, bytes        cache_control
//   u16 len, bytes        location
//   u16 len, bytes        etag
//   u16 len, bytes        csp             (schema 2 and 3)
//   u16 len, bytes        body_blob       (schema 3 and 4)
//   u8                    access          (schema 4 only: bus::PageAccess)
//   u32 len, bytes        body_gzip
inline constexpr size_t kPageRecordFixedSize = 1 + 2 + 8 + 8;
inline constexpr size_t kPageRecordMinSize = kPageRecordFixedSize + 5 * 2 + 4;
inline constexpr size_t kMaxShortField = 0xFFFF;      // u16-prefixed strings
inline constexpr size_t kMaxBodySize = 0xFFFFFFFFu;   // u32-prefixed body

// Page pack (KV "pages" value under <site>.p.<n> or <site>.s.<v>.<i>,
// page_pack.h), little-endian:
//   u8  schema            = kPagePackSchema (1)
//   u8  kind              1 pack, 2 snapshot chunk, 3 resync snapshot chunk
//   i64 version           the site version an edge is at after it
//   u32 chunk             snapshot: chunk index; pack: 0
//   u32 chunks            snapshot: chunk count (>= 1); pack: 0
//   u32 ops               number of ops that follow
//   ops, each:
//     u8  op              1 put, 2 delete
//     u16 len, bytes      url (non-empty)
//     u32 len, bytes      record (put only): an encoded page record
inline constexpr size_t kPackHeaderSize = 1 + 1 + 8 + 4 + 4 + 4;
inline constexpr size_t kPackOpsOffset = kPackHeaderSize - 4;  // where the op count sits
inline constexpr uint8_t kPackOpPut = 1;
inline constexpr uint8_t kPackOpDelete = 2;
inline constexpr size_t kPackKeyDigits = 16;
inline constexpr size_t kSnapshotChunkDigits = 6;

// Site names: [a-z0-9-]{1,63}, not starting with '-'.
inline constexpr size_t kMaxSiteNameSize = 63;

// Search requests and related-notes updates (JSON, schema kSearchSchema):
// vault paths are non-empty UTF-8 of at most this many bytes.
inline constexpr size_t kMaxVaultPathSize = 1024;

}  // namespace folio::bus::format
