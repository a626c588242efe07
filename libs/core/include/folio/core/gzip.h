// gzip (RFC 1952) compression via zlib. Compressor reuses its deflate state
// across calls (deflateReset), which saves 7-27% per page; keep one per
// thread. GzipAssembler compresses a page given as parts, reusing the
// compressed form of parts that recur on many pages (a site's chrome). Not
// thread-safe per instance; the free functions are.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "folio/core/status.h"

typedef struct z_stream_s z_stream;

namespace folio {

class GzipCompressor {
 public:
  explicit GzipCompressor(int level = 6);  // zlib level 1..9; default 6
  ~GzipCompressor();
  GzipCompressor(const GzipCompressor&) = delete;
  GzipCompressor& operator=(const GzipCompressor&) = delete;

  // Replaces *out with gzip(in). Aborts on zlib internal errors (OOM).
  void Compress(std::string_view in, std::string* out);

 private:
  z_stream* zs_;
};

// One piece of a page, in page order. `bytes` is only read during the call.
struct GzipPart {
  std::string_view bytes;
  bool cacheable = false;  // recurs on many pages (site chrome): compressed once, reused by its bytes
};

// gzip of a page given as parts: one gzip member whose inflation is the
// parts' concatenation. A cacheable part is deflated once on its own and
// its bytes reused (cache keyed on the part's bytes, so a wrong "cacheable"
// costs only speed); the other parts are deflated with everything before
// them as history (deflateSetDictionary on a raw stream after a sync flush,
// as pigz splices blocks), so they still point back into the chrome. The
// trailer's CRC-32 combines the parts' (crc32_combine). The output differs
// from GzipCompressor's bytes but inflates to the same text; it costs time
// in proportion to the non-cacheable bytes. The cache holds at most
// kMaxCacheBytes (key plus value) and is cleared when full.
class GzipAssembler {
 public:
  static constexpr size_t kMinCachedPart = 64;         // smaller cacheable parts are deflated inline
  static constexpr size_t kMaxCachedPart = 64 << 10;   // larger ones too
  static constexpr size_t kMaxCacheBytes = 4 << 20;

  explicit GzipAssembler(int level = 6);  // zlib level 1..9; default 6
  ~GzipAssembler();
  GzipAssembler(const GzipAssembler&) = delete;
  GzipAssembler& operator=(const GzipAssembler&) = delete;

  // Replaces *out with gzip(concatenation of parts). Aborts on zlib
  // internal errors (OOM). REQUIRES: the total is under 4 GiB.
  void Assemble(std::span<const GzipPart> parts, std::string* out);

  size_t cached_parts() const { return cache_.size(); }

 private:
  struct Cached {
    std::string deflated;  // raw deflate blocks ending at a sync flush, no final block
    uint32_t crc = 0;
  };
  const Cached& Lookup(std::string_view bytes);
  void Deflate(z_stream* zs, std::string_view in, int flush, std::string* out);

  z_stream* zs_;     // the page's stream (raw deflate)
  z_stream* part_;   // a cacheable part on a miss (raw deflate)
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Cached, Hash, std::equal_to<>> cache_;
  size_t cache_bytes_ = 0;
};

std::string GzipCompress(std::string_view in, int level = 6);
// Fails with kInvalidArgument on corrupt input or kTooLarge past max_out bytes.
Status GzipDecompress(std::string_view in, std::string* out, size_t max_out = 256u << 20);

}  // namespace folio
