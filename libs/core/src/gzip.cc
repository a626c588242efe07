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

z_stream* NewRawDeflate(int level) {
  auto* zs = new z_stream{};
  // windowBits -15: raw deflate, the gzip header and trailer are written here.
  if (deflateInit2(zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  return zs;
}

void FreeDeflate(z_stream* zs) {
  deflateEnd(zs);
  delete zs;
}

void AppendLe32(uint32_t v, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

GzipAssembler::GzipAssembler(int level) : zs_(NewRawDeflate(level)), part_(NewRawDeflate(level)) {}

GzipAssembler::~GzipAssembler() {
  FreeDeflate(zs_);
  FreeDeflate(part_);
}

// Feeds `in` with `flush`, growing *out as needed. With any flush but
// Z_NO_FLUSH, returns once the flush is complete (zlib's contract: a call
// that leaves avail_out > 0 has delivered everything).
void GzipAssembler::Deflate(z_stream* zs, std::string_view in, int flush, std::string* out) {
  zs->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs->avail_in = static_cast<uInt>(in.size());
  size_t used = out->size();
  for (;;) {
    out->resize(used + deflateBound(zs, zs->avail_in) + 64);
    zs->next_out = reinterpret_cast<Bytef*>(out->data() + used);
    zs->avail_out = static_cast<uInt>(out->size() - used);
    const uInt room = zs->avail_out;
    int rc = deflate(zs, flush);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) std::abort();
    used += room - zs->avail_out;
    if (zs->avail_out != 0 && zs->avail_in == 0 && (flush != Z_FINISH || rc == Z_STREAM_END)) break;
  }
  out->resize(used);
}

const GzipAssembler::Cached& GzipAssembler::Lookup(std::string_view bytes) {
  auto it = cache_.find(bytes);
  if (it != cache_.end()) return it->second;
  Cached c;
  deflateReset(part_);
  // A sync flush ends the part's blocks on a byte boundary without a final
  // block, so page bytes can follow it.
  Deflate(part_, bytes, Z_SYNC_FLUSH, &c.deflated);
  c.crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
  const size_t cost = bytes.size() + c.deflated.size() + 64;
  if (cache_bytes_ + cost > kMaxCacheBytes) {
    cache_.clear();
    cache_bytes_ = 0;
  }
  cache_bytes_ += cost;
  return cache_.emplace(std::string(bytes), std::move(c)).first->second;
}

void GzipAssembler::Assemble(std::span<const GzipPart> parts, std::string* out) {
  // RFC 1952 header: deflate, no flags, no mtime, no extra flags, OS unix (3),
  // as zlib writes it at level 6.
  static constexpr char kHeader[10] = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, 3};
  out->assign(kHeader, sizeof kHeader);
  deflateReset(zs_);
  uLong crc = crc32(0, nullptr, 0);
  uint32_t total = 0;
  auto inline_part = [](const GzipPart& p) {
    return !p.cacheable || p.bytes.size() < kMinCachedPart || p.bytes.size() > kMaxCachedPart;
  };
  // Past the last inline part, cached parts need not become history.
  size_t last_inline = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (inline_part(parts[i]) && !parts[i].bytes.empty()) last_inline = i + 1;
  }
  bool open_block = false;  // input fed since the last byte boundary
  for (size_t i = 0; i < parts.size(); ++i) {
    const GzipPart& p = parts[i];
    const auto* data = reinterpret_cast<const Bytef*>(p.bytes.data());
    if (inline_part(p)) {
      if (p.bytes.empty()) continue;
      Deflate(zs_, p.bytes, Z_NO_FLUSH, out);
      crc = crc32(crc, data, static_cast<uInt>(p.bytes.size()));
      total += static_cast<uint32_t>(p.bytes.size());
      open_block = true;
      continue;
    }
    if (open_block) Deflate(zs_, {}, Z_SYNC_FLUSH, out);  // byte-aligned, no final bit
    open_block = false;
    const Cached& c = Lookup(p.bytes);
    out->append(c.deflated);
    crc = crc32_combine(crc, c.crc, static_cast<z_off_t>(p.bytes.size()));
    total += static_cast<uint32_t>(p.bytes.size());
    // The part is now the stream's latest history (its last 32 KiB at most),
    // so later distances count through it as the reader's window does.
    if (i >= last_inline) continue;
    const size_t dict = std::min<size_t>(p.bytes.size(), 32768);
    if (deflateSetDictionary(zs_, data + p.bytes.size() - dict, static_cast<uInt>(dict)) != Z_OK) std::abort();
  }
  Deflate(zs_, {}, Z_FINISH, out);  // the final block (empty if the last part was cached)
  AppendLe32(static_cast<uint32_t>(crc), out);
  AppendLe32(total, out);
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
