// Page packs (page_pack.h); the byte layout is in README.md and schema_format.h.
#include "folio/bus/page_pack.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "folio/bus/page_schema.h"
#include "folio/bus/site_name.h"
#include "schema_format.h"

namespace folio::bus {
namespace {

std::string Padded(uint64_t n, size_t digits) {
  std::string s = std::to_string(n);
  if (s.size() < digits) s.insert(0, digits - s.size(), '0');
  return s;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

void PutU32(uint32_t v, char* at) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

template <typename T>
void AppendLe(T v, std::string* out) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xFF));
}

// Reads little-endian fields and views off the front of `in_`; a short read sets failed().
class ViewReader {
 public:
  explicit ViewReader(std::string_view in) : in_(in) {}
  template <typename T>
  T Le() {
    if (in_.size() < sizeof(T)) return Fail<T>();
    uint64_t u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) u |= uint64_t{static_cast<uint8_t>(in_[i])} << (8 * i);
    in_.remove_prefix(sizeof(T));
    return static_cast<T>(u);
  }
  template <typename LenT>
  std::string_view Bytes() {
    size_t n = Le<LenT>();
    if (failed_ || in_.size() < n) return Fail<std::string_view>();
    std::string_view v = in_.substr(0, n);
    in_.remove_prefix(n);
    return v;
  }
  bool failed() const { return failed_; }
  size_t remaining() const { return in_.size(); }

 private:
  template <typename T>
  T Fail() {
    failed_ = true;
    in_ = {};
    return T{};
  }
  std::string_view in_;
  bool failed_ = false;
};

}  // namespace

std::string PackKey(std::string_view site, uint64_t first_seq) {
  return std::string(site) + ".p." + Padded(first_seq, format::kPackKeyDigits);
}

std::string SnapshotKey(std::string_view site, int64_t version, uint32_t chunk) {
  return std::string(site) + ".s." + Padded(static_cast<uint64_t>(version), format::kPackKeyDigits) + "." +
         Padded(chunk, format::kSnapshotChunkDigits);
}

bool ParsePackKey(std::string_view key, std::string* site) {
  size_t dot = key.find('.');
  if (dot == std::string_view::npos || !IsValidSiteName(key.substr(0, dot))) return false;
  std::string_view rest = key.substr(dot + 1);
  bool ok = false;
  if (rest.substr(0, 2) == "p.") {
    ok = AllDigits(rest.substr(2));
  } else if (rest.substr(0, 2) == "s.") {
    std::string_view tail = rest.substr(2);
    size_t d = tail.find('.');
    ok = d != std::string_view::npos && AllDigits(tail.substr(0, d)) && AllDigits(tail.substr(d + 1));
  }
  if (ok) site->assign(key.substr(0, dot));
  return ok;
}

std::string PackSubjects(std::string_view site) {
  return "$KV." + std::string(kPagesBucket) + "." + std::string(site) + ".p.>";
}
std::string SnapshotSubjects(std::string_view site) {
  return "$KV." + std::string(kPagesBucket) + "." + std::string(site) + ".s.>";
}
std::string OldPageSubjects(std::string_view site) {
  return "$KV." + std::string(kPagesBucket) + "." + std::string(site) + ".*";
}

PagePackWriter::PagePackWriter(const PackHeader& header) {
  out_.reserve(format::kPackHeaderSize);
  out_.push_back(static_cast<char>(kPagePackSchema));
  out_.push_back(static_cast<char>(header.kind));
  AppendLe<int64_t>(header.version, &out_);
  AppendLe<uint32_t>(header.chunk, &out_);
  AppendLe<uint32_t>(header.chunks, &out_);
  AppendLe<uint32_t>(0, &out_);  // the op count, set by Finish
}

size_t PagePackWriter::OpSize(std::string_view url, std::string_view record) {
  return 1 + 2 + url.size() + 4 + record.size();
}

void PagePackWriter::Op(uint8_t op, std::string_view url) {
  if (url.empty() || url.size() > format::kMaxShortField) {
    // A URL the store holds is never empty nor this long: a caller bug.
    std::fprintf(stderr, "PagePackWriter: URL of %zu bytes\n", url.size());
    std::abort();
  }
  out_.push_back(static_cast<char>(op));
  AppendLe<uint16_t>(static_cast<uint16_t>(url.size()), &out_);
  out_.append(url);
  ++ops_;
}

void PagePackWriter::Put(std::string_view url, std::string_view record) {
  if (record.size() > format::kMaxBodySize) {
    std::fprintf(stderr, "PagePackWriter: record of %zu bytes\n", record.size());
    std::abort();
  }
  Op(format::kPackOpPut, url);
  AppendLe<uint32_t>(static_cast<uint32_t>(record.size()), &out_);
  out_.append(record);
}

void PagePackWriter::SetVersion(int64_t version) {
  for (size_t i = 0; i < 8; ++i) out_[2 + i] = static_cast<char>((static_cast<uint64_t>(version) >> (8 * i)) & 0xFF);
}

void PagePackWriter::Delete(std::string_view url) { Op(format::kPackOpDelete, url); }

std::string PagePackWriter::Finish() {
  PutU32(ops_, out_.data() + format::kPackOpsOffset);
  ops_ = 0;
  return std::exchange(out_, {});
}

namespace {

Status ReadHeader(ViewReader* rd, PackHeader* h, uint32_t* ops) {
  uint8_t schema = rd->Le<uint8_t>();
  if (rd->failed()) return Status::Invalid("page pack: empty");
  if (schema != kPagePackSchema) return Status::Invalid("page pack: unknown schema " + std::to_string(schema));
  uint8_t kind = rd->Le<uint8_t>();
  h->version = rd->Le<int64_t>();
  h->chunk = rd->Le<uint32_t>();
  h->chunks = rd->Le<uint32_t>();
  *ops = rd->Le<uint32_t>();
  if (rd->failed()) return Status::Invalid("page pack: truncated header");
  if (kind == static_cast<uint8_t>(PackKind::kPack)) {
    if (h->chunk != 0 || h->chunks != 0) return Status::Invalid("page pack: a pack with a chunk index");
  } else if (kind == static_cast<uint8_t>(PackKind::kSnapshot) || kind == static_cast<uint8_t>(PackKind::kResync)) {
    if (h->chunk >= h->chunks) return Status::Invalid("page pack: snapshot chunk index past its count");
  } else {
    return Status::Invalid("page pack: unknown kind " + std::to_string(kind));
  }
  h->kind = static_cast<PackKind>(kind);
  return Status::Ok();
}

}  // namespace

Status DecodePackHeader(std::string_view data, PackHeader* out) {
  ViewReader rd(data);
  uint32_t ops = 0;
  return ReadHeader(&rd, out, &ops);
}

Status DecodePagePack(std::string_view data, PackHeader* header, std::vector<PackOp>* ops) {
  ViewReader rd(data);
  uint32_t count = 0;
  PackHeader h;
  if (Status s = ReadHeader(&rd, &h, &count); !s.ok()) return s;
  std::vector<PackOp> out;
  // Every op takes at least 4 bytes: a count past that is a lie, not a reserve.
  out.reserve(std::min<size_t>(count, rd.remaining() / 4));
  for (uint32_t i = 0; i < count; ++i) {
    PackOp op;
    uint8_t code = rd.Le<uint8_t>();
    op.url = rd.Bytes<uint16_t>();
    if (code == format::kPackOpPut) {
      op.put = true;
      op.record = rd.Bytes<uint32_t>();
    } else if (!rd.failed() && code != format::kPackOpDelete) {
      return Status::Invalid("page pack: unknown op " + std::to_string(code));
    }
    if (rd.failed()) return Status::Invalid("page pack: truncated at op " + std::to_string(i));
    if (op.url.empty()) return Status::Invalid("page pack: op " + std::to_string(i) + " has no URL");
    out.push_back(op);
  }
  if (rd.remaining() != 0) return Status::Invalid("page pack: " + std::to_string(rd.remaining()) + " trailing bytes");
  *header = h;
  *ops = std::move(out);
  return Status::Ok();
}

}  // namespace folio::bus
