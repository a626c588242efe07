// The page feed contract (issue 26): the pages of a site travel through the
// KV bucket "pages" (page_schema.h) in few, large messages instead of one
// per page.
//
//   <site>.p.<n>             a pack: the page puts and deletions of outbox
//                            rows n.. (n = the outbox seq of its first row,
//                            zero-padded decimal so keys sort)
//   <site>.s.<version>.<i>   chunk i of a snapshot: every page of the site
//                            at `version`, published when the packs since
//                            the last snapshot outgrow the site; the packs
//                            and snapshots before it are then purged from
//                            the bucket's stream (no delete markers)
//
// A value is EncodePagePack: a header (kind, the site version an edge is at
// once it applied this message and every one before it, and for a snapshot
// its chunk index and count), then ops, each a put (URL path, encoded
// PageRecord) or a deletion (URL path), applied in order. Byte layout:
// libs/bus/README.md and src/schema_format.h. Keys `<site>.<base64url>` of
// the per-page layout before it are still read by edges (upgrade edges
// first, then ingest).
//
// Pure functions; thread-safe. Decoded views point into the caller's bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio::bus {

inline constexpr uint8_t kPagePackSchema = 1;
// The largest pack the publisher builds (less on a server with a smaller
// max payload: Bus::max_payload()): the bound a page record already had
// (1 MiB, NATS's default max payload, minus room for headers). An op larger
// than this goes alone in a pack of its own (the server refuses one over its
// max payload: kTooLarge, and the publisher skips it as it skipped such a
// page before).
inline constexpr size_t kMaxPack = (size_t{1} << 20) - 8192;

// kSnapshot: a compaction; an edge already at its version skips it.
// kResync: a snapshot every edge applies (then erases the site's pages it does
// not list) and whose version becomes the edge's for the site: ingest
// republished the site because the bus lost data or its own store went back
// (a restore from backup, whose versions come again).
enum class PackKind : uint8_t { kPack = 1, kSnapshot = 2, kResync = 3 };
inline bool IsSnapshot(PackKind k) { return k == PackKind::kSnapshot || k == PackKind::kResync; }

struct PackHeader {
  PackKind kind = PackKind::kPack;
  // The site version an edge is at once it applied this message and every
  // one before it in the bucket (a lower bound: a pack in the middle of a
  // commit carries the version before that commit). For a snapshot, the
  // version it is of.
  int64_t version = 0;
  uint32_t chunk = 0;   // snapshot only: this chunk's index, 0..chunks-1
  uint32_t chunks = 0;  // snapshot only: how many chunks it has (>= 1); 0 for a pack
};

// One op of a pack, viewing the encoded bytes it was decoded from.
struct PackOp {
  bool put = false;             // false: the page at `url` is deleted
  std::string_view url;         // decoded URL path, non-empty
  std::string_view record;      // put only: an encoded PageRecord (DecodePageRecord)
};

// "<site>.p.<n>", n zero-padded to 16 digits. REQUIRES: IsValidSiteName(site).
std::string PackKey(std::string_view site, uint64_t first_seq);
// "<site>.s.<version>.<chunk>", zero-padded to 16 and 6 digits.
std::string SnapshotKey(std::string_view site, int64_t version, uint32_t chunk);
// The site of a pack or snapshot key; false for any other key.
bool ParsePackKey(std::string_view key, std::string* site);
// Subject filters (of the bucket's stream, "$KV.pages." + ...) for purges.
std::string PackSubjects(std::string_view site);      // "$KV.pages.<site>.p.>"
std::string SnapshotSubjects(std::string_view site);  // "$KV.pages.<site>.s.>"
// The per-page keys of the layout before packs: exactly one token after the site.
std::string OldPageSubjects(std::string_view site);   // "$KV.pages.<site>.*"

// Builds one pack or snapshot chunk. Usage: Put/Delete ops, then Finish().
class PagePackWriter {
 public:
  explicit PagePackWriter(const PackHeader& header);
  // Bytes an op adds to a pack (to decide when to start the next one).
  static size_t OpSize(std::string_view url, std::string_view record);
  // REQUIRES: url non-empty and at most 65535 bytes; record at most 4 GiB.
  void Put(std::string_view url, std::string_view record);
  void Delete(std::string_view url);
  // Sets the header's version (known once the pack's last op is).
  void SetVersion(int64_t version);
  size_t size() const { return out_.size(); }
  uint32_t ops() const { return ops_; }
  // The encoded pack; the writer is empty afterwards.
  std::string Finish();

 private:
  void Op(uint8_t op, std::string_view url);
  std::string out_;
  uint32_t ops_ = 0;
};

// Decodes the header only (cheap: an edge that skips a snapshot looks no
// further). kInvalidArgument on an unknown schema or kind, truncation, or a
// snapshot chunk index not below its count.
Status DecodePackHeader(std::string_view data, PackHeader* out);
// Decodes the header and every op (views into `data`; the records are not
// decoded). kInvalidArgument as DecodePackHeader, or on an unknown op, an
// empty URL, truncation, an op count that does not match, or trailing bytes.
Status DecodePagePack(std::string_view data, PackHeader* header, std::vector<PackOp>* ops);

}  // namespace folio::bus
