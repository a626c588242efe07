// gzip (RFC 1952) compression. GzipCompressor (zlib) reuses its deflate
// state across calls (deflateReset), which saves 7-27% per page; keep one
// per thread. GzipAssembler compresses a page given as parts with ISA-L's
// igzip, ingest's page bodies. Decompression is zlib's. Not thread-safe per
// instance; the free functions are.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

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
};

// gzip of a page given as parts: one gzip member whose inflation is the
// parts' concatenation, deflated whole by Intel ISA-L's igzip (stateless,
// one call; parts that are not contiguous in memory are first copied
// together). igzip at level 3 costs 1.7x less than zlib at level 4 on a
// 3.3 KB page and 5.6x less on a 19 KB one, for output 10% smaller and
// 1.4% larger (page-gzip-bench, services/ingest/page_record_bench.cc); it
// replaced zlib with the site chrome deflated once and reused, whose many
// small blocks each paid for their own Huffman tables. The member's header
// is zlib's (no name, no mtime, OS unix). Not thread-safe per instance:
// keep one per thread (it holds igzip's level buffer, ~340 KB at level 3).
class GzipAssembler {
 public:
  explicit GzipAssembler(int level = 3);  // igzip level 0..3 (0: fastest, biggest); default 3
  ~GzipAssembler();
  GzipAssembler(const GzipAssembler&) = delete;
  GzipAssembler& operator=(const GzipAssembler&) = delete;

  // Replaces *out with gzip(concatenation of parts). Aborts on igzip
  // internal errors. REQUIRES: the total is under 4 GiB.
  void Assemble(std::span<const GzipPart> parts, std::string* out);

 private:
  int level_;
  std::string level_buf_;  // igzip's working memory for levels 1..3
  std::string joined_;     // the parts copied together when they are not contiguous
};

std::string GzipCompress(std::string_view in, int level = 6);
// Fails with kInvalidArgument on corrupt input or kTooLarge past max_out bytes.
Status GzipDecompress(std::string_view in, std::string* out, size_t max_out = 256u << 20);

}  // namespace folio
