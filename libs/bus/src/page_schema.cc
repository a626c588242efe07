#include "folio/bus/page_schema.h"

#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "folio/core/hash.h"
#include "schema_format.h"

namespace folio::bus {

std::string PageKey(std::string_view site, std::string_view url_path) {
  std::string key;
  key.reserve(site.size() + 1 + (url_path.size() + 2) / 3 * 4);
  key.append(site);
  key.push_back('.');
  key.append(Base64UrlEncode(url_path));
  return key;
}

bool ParsePageKey(std::string_view key, std::string* site, std::string* url_path) {
  size_t dot = key.find('.');
  if (dot == std::string_view::npos) return false;
  std::string_view s = key.substr(0, dot), encoded = key.substr(dot + 1);
  if (!IsValidSiteName(s) || encoded.empty()) return false;
  std::string path;
  if (!Base64UrlDecode(encoded, &path)) return false;
  // Reject non-canonical encodings (stray trailing bits): folio never wrote them.
  if (Base64UrlEncode(path) != encoded) return false;
  site->assign(s);
  *url_path = std::move(path);
  return true;
}

// ---- Page record: binary, little-endian; see README.md and schema_format.h.

namespace {

template <typename T>
void PutLe(T v, std::string* out) {
  auto u = static_cast<std::make_unsigned_t<T>>(v);
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
}

void PutField16(std::string_view field, const char* name, std::string* out) {
  if (field.size() > format::kMaxShortField) {
    // A header value this long is a bug in the caller, not bad input.
    std::fprintf(stderr, "EncodePageRecord: %s is %zu bytes (max 65535)\n", name, field.size());
    std::abort();
  }
  PutLe<uint16_t>(static_cast<uint16_t>(field.size()), out);
  out->append(field);
}

// Reads fields off the front of `in_`; any short read sets failed().
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  T Le() {
    if (in_.size() < sizeof(T)) { failed_ = true; in_ = {}; return 0; }
    std::make_unsigned_t<T> u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      u |= static_cast<std::make_unsigned_t<T>>(static_cast<uint8_t>(in_[i])) << (8 * i);
    }
    in_.remove_prefix(sizeof(T));
    return static_cast<T>(u);
  }
  template <typename LenT>
  void Bytes(std::string* out) {
    size_t n = Le<LenT>();
    if (failed_ || in_.size() < n) { failed_ = true; in_ = {}; return; }
    out->assign(in_.data(), n);
    in_.remove_prefix(n);
  }
  bool failed() const { return failed_; }
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
  bool failed_ = false;
};

}  // namespace

std::string EncodePageRecord(const PageRecord& r) {
  if (r.body_gzip.size() > format::kMaxBodySize) {
    std::fprintf(stderr, "EncodePageRecord: body is %zu bytes (max 4 GiB)\n", r.body_gzip.size());
    std::abort();
  }
  std::string out;
  out.reserve(format::kPageRecordMinSize + r.content_type.size() + r.cache_control.size() +
              r.location.size() + r.etag.size() + r.csp.size() + r.body_blob.size() + r.body_gzip.size());
  // Schema 2 unless the record needs schema 3's field: edges of the release
  // before it still read every other record.
  const bool v4 = r.access != PageAccess::kPublic;
  out.push_back(static_cast<char>(v4 ? kPageRecordSchemaV4 : r.body_blob.empty() ? kPageRecordSchemaV2 : kPageRecordSchema));
  PutLe<uint16_t>(r.status, &out);
  PutLe<int64_t>(r.last_modified_s, &out);
  PutLe<int64_t>(r.version, &out);
  PutField16(r.content_type, "content_type", &out);
  PutField16(r.cache_control, "cache_control", &out);
  PutField16(r.location, "location", &out);
  PutField16(r.etag, "etag", &out);
  PutField16(r.csp, "csp", &out);
  if (v4 || !r.body_blob.empty()) PutField16(r.body_blob, "body_blob", &out);
  if (v4) out.push_back(static_cast<char>(r.access));
  PutLe<uint32_t>(static_cast<uint32_t>(r.body_gzip.size()), &out);
  out.append(r.body_gzip);
  return out;
}

Status DecodePageRecord(std::string_view data, PageRecord* out) {
  if (data.empty()) return Status::Invalid("page record: empty");
  uint8_t schema = static_cast<uint8_t>(data[0]);
  if (schema != kPageRecordSchemaV4 && schema != kPageRecordSchema && schema != kPageRecordSchemaV2 &&
      schema != kPageRecordSchemaV1) {
    return Status::Invalid("page record: unknown schema " + std::to_string(schema));
  }
  Reader rd(data.substr(1));
  PageRecord r;
  r.status = rd.Le<uint16_t>();
  r.last_modified_s = rd.Le<int64_t>();
  r.version = rd.Le<int64_t>();
  rd.Bytes<uint16_t>(&r.content_type);
  rd.Bytes<uint16_t>(&r.cache_control);
  rd.Bytes<uint16_t>(&r.location);
  rd.Bytes<uint16_t>(&r.etag);
  if (schema != kPageRecordSchemaV1) rd.Bytes<uint16_t>(&r.csp);
  if (schema >= kPageRecordSchema) rd.Bytes<uint16_t>(&r.body_blob);
  if (schema == kPageRecordSchemaV4) {
    uint8_t access = rd.Le<uint8_t>();
    if (!rd.failed() && access != static_cast<uint8_t>(PageAccess::kSignedIn)) {
      return Status::Invalid("page record: unknown access " + std::to_string(access));
    }
    r.access = static_cast<PageAccess>(access);
  }
  rd.Bytes<uint32_t>(&r.body_gzip);
  if (rd.failed()) return Status::Invalid("page record: truncated");
  if (rd.remaining() != 0) {
    return Status::Invalid("page record: " + std::to_string(rd.remaining()) + " trailing bytes");
  }
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace folio::bus
