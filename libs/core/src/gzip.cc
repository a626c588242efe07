#include "folio/core/gzip.h"

#include <zlib.h>

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

Status GzipDecompress(std::string_view in, std::string* out, size_t max_out) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return Status::Internal("inflateInit2 failed");
  out->clear();
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  char buf[16384];
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return Status::Invalid("corrupt gzip data");
    }
    out->append(buf, sizeof buf - zs.avail_out);
    if (out->size() > max_out) {
      inflateEnd(&zs);
      return Status::TooLarge("gzip data inflates past " + std::to_string(max_out) + " bytes");
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return Status::Invalid("truncated gzip data");
    }
  }
  inflateEnd(&zs);
  return Status::Ok();
}

}  // namespace folio
