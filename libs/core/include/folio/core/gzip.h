// gzip (RFC 1952) compression via zlib. Compressor reuses its deflate state
// across calls (deflateReset), which saves 7-27% per page; keep one per
// thread. Not thread-safe per instance; the free functions are.
#pragma once

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

std::string GzipCompress(std::string_view in, int level = 6);
// Fails with kInvalidArgument on corrupt input or kTooLarge past max_out bytes.
Status GzipDecompress(std::string_view in, std::string* out, size_t max_out = 256u << 20);

}  // namespace folio
