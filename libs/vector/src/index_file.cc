// VectorIndex::Save/Load: the vector file format described in index.h.
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>

#include "folio/vector/index.h"

namespace folio::vector {

static_assert(std::endian::native == std::endian::little, "the file format is little-endian");

namespace {

constexpr char kMagic[8] = {'F', 'O', 'L', 'I', 'O', 'V', 'E', 'C'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 24;

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

class CrcWriter {
 public:
  explicit CrcWriter(FILE* f) : f_(f) {}
  bool Write(const void* p, size_t n) {
    if (n == 0) return true;
    crc_ = crc32_z(crc_, static_cast<const Bytef*>(p), n);
    return std::fwrite(p, 1, n, f_) == n;
  }
  uint32_t crc() const { return static_cast<uint32_t>(crc_); }

 private:
  FILE* f_;
  uLong crc_ = crc32_z(0, nullptr, 0);
};

class CrcReader {
 public:
  explicit CrcReader(FILE* f) : f_(f) {}
  bool Read(void* p, size_t n) {
    if (n == 0) return true;
    if (std::fread(p, 1, n, f_) != n) return false;
    crc_ = crc32_z(crc_, static_cast<const Bytef*>(p), n);
    return true;
  }
  uint32_t crc() const { return static_cast<uint32_t>(crc_); }

 private:
  FILE* f_;
  uLong crc_ = crc32_z(0, nullptr, 0);
};

Status IoError(const std::string& what, const std::string& path) {
  return Status::Unavailable(what + " '" + path + "': " + std::strerror(errno));
}

}  // namespace

VectorIndex::~VectorIndex() = default;

void SortHits(std::vector<Hit>* hits) {
  std::sort(hits->begin(), hits->end(), [](const Hit& a, const Hit& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
}

Status VectorIndex::Save(const std::string& path) const {
  std::string tmp = path + ".tmp";
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) return IoError("cannot create", tmp);
  CrcWriter w(f.get());
  uint32_t version = kVersion;
  auto dim32 = static_cast<uint32_t>(dim());
  uint64_t count = size();
  bool ok = w.Write(kMagic, 8) && w.Write(&version, 4) && w.Write(&dim32, 4) && w.Write(&count, 8);
  // Two passes keep the format's ids-then-vectors layout without a copy.
  uint64_t seen = 0;
  ForEach([&](uint64_t id, std::span<const float>) {
    ok = ok && w.Write(&id, 8);
    ++seen;
  });
  ForEach([&](uint64_t, std::span<const float> v) { ok = ok && w.Write(v.data(), v.size_bytes()); });
  uint32_t crc = w.crc();
  ok = ok && seen == count && std::fwrite(&crc, 1, 4, f.get()) == 4;
  ok = ok && std::fflush(f.get()) == 0 && ::fsync(fileno(f.get())) == 0;
  if (!ok) {
    Status s = IoError("cannot write", tmp);
    f.reset();
    std::remove(tmp.c_str());
    return s;
  }
  if (std::fclose(f.release()) != 0) return IoError("cannot close", tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return IoError("cannot rename to", path);
  return Status::Ok();
}

Status VectorIndex::Load(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    if (errno == ENOENT) return Status::NotFound("no vector file '" + path + "'");
    return IoError("cannot open", path);
  }
  auto corrupt = [&](const std::string& why) {
    return Status::Invalid("vector file '" + path + "' is corrupt: " + why);
  };
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return IoError("cannot seek", path);
  long file_size = std::ftell(f.get());
  if (file_size < 0 || std::fseek(f.get(), 0, SEEK_SET) != 0) return IoError("cannot seek", path);

  CrcReader r(f.get());
  char magic[8];
  uint32_t version = 0, dim32 = 0;
  uint64_t count = 0;
  if (!r.Read(magic, 8) || !r.Read(&version, 4) || !r.Read(&dim32, 4) || !r.Read(&count, 8)) {
    return corrupt("short header");
  }
  if (std::memcmp(magic, kMagic, 8) != 0) return corrupt("bad magic");
  if (version != kVersion) return corrupt("unsupported version " + std::to_string(version));
  if (dim32 == 0) return corrupt("dim 0");
  uint64_t row_bytes = 8 + 4ull * dim32;
  uint64_t payload = static_cast<uint64_t>(file_size) - kHeaderSize;
  if (static_cast<uint64_t>(file_size) < kHeaderSize + 4 || count > (payload - 4) / row_bytes ||
      kHeaderSize + count * row_bytes + 4 != static_cast<uint64_t>(file_size)) {
    return corrupt("size does not match count");
  }
  std::vector<uint64_t> ids(count);
  std::vector<float> data(count * dim32);
  if (!r.Read(ids.data(), count * 8) || !r.Read(data.data(), data.size() * 4)) {
    return corrupt("short body");
  }
  uint32_t stored_crc = 0;
  if (std::fread(&stored_crc, 1, 4, f.get()) != 4) return corrupt("missing checksum");
  if (stored_crc != r.crc()) return corrupt("checksum mismatch");
  if (dim32 != dim()) {
    return Status::Invalid("vector file '" + path + "' has dim " + std::to_string(dim32) +
                           ", index has " + std::to_string(dim()));
  }
  std::unordered_set<uint64_t> unique(ids.begin(), ids.end());
  if (unique.size() != ids.size()) return corrupt("duplicate ids");
  for (float x : data) {
    if (!std::isfinite(x)) return corrupt("non-finite value");
  }
  Reset(std::move(ids), std::move(data));
  return Status::Ok();
}

}  // namespace folio::vector
