#include "folio/core/gzip.h"

#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

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

size_t LevelBufSize(int level) {
  switch (level) {
    case 0: return 0;
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    default: return ISAL_DEF_LVL3_DEFAULT;
  }
}

}  // namespace

GzipAssembler::GzipAssembler(int level) : level_(std::clamp(level, 0, 3)) {
  level_buf_.resize(LevelBufSize(level_));
}

GzipAssembler::~GzipAssembler() = default;

void GzipAssembler::Assemble(std::span<const GzipPart> parts, std::string* out) {
  // One view of the page: the parts themselves when each follows the last
  // in memory (ingest's are slices of one page), else a copy.
  std::string_view page;
  bool contiguous = true;
  for (const GzipPart& p : parts) {
    if (p.bytes.empty()) continue;
    if (page.empty()) {
      page = p.bytes;
    } else if (page.data() + page.size() == p.bytes.data()) {
      page = std::string_view(page.data(), page.size() + p.bytes.size());
    } else {
      contiguous = false;
      break;
    }
  }
  if (!contiguous) {
    joined_.clear();
    for (const GzipPart& p : parts) joined_ += p.bytes;
    page = joined_;
  }
  // RFC 1952 header: deflate, no flags, no mtime, no extra flags, OS unix (3),
  // as zlib writes it; igzip adds the deflate blocks and the trailer.
  static constexpr char kHeader[10] = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, 3};
  // Incompressible input grows by stored blocks' 5 bytes per 64 KiB; igzip
  // says so (STATELESS_OVERFLOW) if a level's output needs more room.
  size_t room = page.size() + page.size() / 16 + 1024;
  for (;;) {
    out->resize(sizeof kHeader + room);
    std::memcpy(out->data(), kHeader, sizeof kHeader);
    isal_zstream zs;
    isal_deflate_stateless_init(&zs);
    zs.level = static_cast<uint32_t>(level_);
    zs.level_buf = level_buf_.empty() ? nullptr : reinterpret_cast<uint8_t*>(level_buf_.data());
    zs.level_buf_size = static_cast<uint32_t>(level_buf_.size());
    zs.gzip_flag = IGZIP_GZIP_NO_HDR;
    zs.end_of_stream = 1;
    zs.flush = NO_FLUSH;
    zs.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(page.data()));
    zs.avail_in = static_cast<uint32_t>(page.size());
    zs.next_out = reinterpret_cast<uint8_t*>(out->data() + sizeof kHeader);
    zs.avail_out = static_cast<uint32_t>(room);
    const int rc = isal_deflate_stateless(&zs);
    if (rc == COMP_OK) {
      out->resize(sizeof kHeader + zs.total_out);
      return;
    }
    if (rc != STATELESS_OVERFLOW) std::abort();
    room *= 2;
  }
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
