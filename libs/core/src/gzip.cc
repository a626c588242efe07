#include "folio/core/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>

namespace folio {

GzipCompressor::GzipCompressor(int level) : zs_(new z_stream{}) {
  // windowBits 15 + 16: gzip wrapper; memLevel 8 is zlib's default.
  if (deflateInit2(zs_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
}

GzipCompressor::~GzipCompressor() {
  deflateEnd(zs_);
  delete zs_;
}

void GzipCompressor::Compress(std::string_view in, std::string* out) {
  deflateReset(zs_);
  out->resize(deflateBound(zs_, in.size()) + 32);
  zs_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs_->avail_in = static_cast<uInt>(in.size());
  zs_->next_out = reinterpret_cast<Bytef*>(out->data());
  zs_->avail_out = static_cast<uInt>(out->size());
  if (deflate(zs_, Z_FINISH) != Z_STREAM_END) std::abort();  // bound guarantees one call
  out->resize(zs_->total_out);
}

std::string GzipCompress(std::string_view in, int level) {
  GzipCompressor c(level);
  std::string out;
  c.Compress(in, &out);
  return out;
}

namespace {

// One inflate state per thread, reset between calls: inflateInit2 allocates
// a 32 KiB window each time, which dominated inflating many small pages.
struct Inflater {
  Inflater() {
    if (inflateInit2(&zs, 15 + 16) != Z_OK) std::abort();
  }
  ~Inflater() { inflateEnd(&zs); }
  z_stream zs{};
};

}  // namespace

Status GzipDecompress(std::string_view in, std::string* out, size_t max_out) {
  thread_local Inflater inflater;
  z_stream& zs = inflater.zs;
  if (inflateReset(&zs) != Z_OK) return Status::Internal("inflateReset failed");
  // The gzip trailer's ISIZE (the input size mod 2^32) sizes the output
  // once for a single-member stream; a wrong hint only costs regrowth.
  size_t size = 0;
  if (in.size() >= 18) {
    const auto* t = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
    size = static_cast<size_t>(t[0]) | static_cast<size_t>(t[1]) << 8 | static_cast<size_t>(t[2]) << 16 |
           static_cast<size_t>(t[3]) << 24;
  }
  const size_t cap = max_out + 1;  // one byte past the limit tells "too large"
  size = std::min(std::max<size_t>(size, 256), cap);
  out->resize(size);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  size_t produced = 0;
  for (;;) {
    if (produced == out->size()) {
      if (out->size() >= cap) break;
      out->resize(std::min(cap, out->size() * 2));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out->size() - produced, 1u << 30));
    const uInt before = zs.avail_out;
    int rc = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) return Status::Invalid("corrupt gzip data");
    if (zs.avail_in == 0 && zs.avail_out != 0) return Status::Invalid("truncated gzip data");
  }
  if (produced > max_out) return Status::TooLarge("gzip data inflates past " + std::to_string(max_out) + " bytes");
  out->resize(produced);
  return Status::Ok();
}

}  // namespace folio
