#include "folio/bus/schema.h"

#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "schema_format.h"

namespace folio::bus {

bool IsValidSiteName(std::string_view site) {
  if (site.empty() || site.size() > format::kMaxSiteNameSize || site[0] == '-') return false;
  for (char c : site) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

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

std::string NotesSubject(std::string_view site) {
  std::string subject(kNotesSubjectPrefix);
  subject.append(site);
  return subject;
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
              r.location.size() + r.etag.size() + r.csp.size() + r.body_gzip.size());
  out.push_back(static_cast<char>(kPageRecordSchema));
  PutLe<uint16_t>(r.status, &out);
  PutLe<int64_t>(r.last_modified_s, &out);
  PutLe<int64_t>(r.version, &out);
  PutField16(r.content_type, "content_type", &out);
  PutField16(r.cache_control, "cache_control", &out);
  PutField16(r.location, "location", &out);
  PutField16(r.etag, "etag", &out);
  PutField16(r.csp, "csp", &out);
  PutLe<uint32_t>(static_cast<uint32_t>(r.body_gzip.size()), &out);
  out.append(r.body_gzip);
  return out;
}

Status DecodePageRecord(std::string_view data, PageRecord* out) {
  if (data.empty()) return Status::Invalid("page record: empty");
  uint8_t schema = static_cast<uint8_t>(data[0]);
  if (schema != kPageRecordSchema && schema != kPageRecordSchemaV1) {
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
  rd.Bytes<uint32_t>(&r.body_gzip);
  if (rd.failed()) return Status::Invalid("page record: truncated");
  if (rd.remaining() != 0) {
    return Status::Invalid("page record: " + std::to_string(rd.remaining()) + " trailing bytes");
  }
  *out = std::move(r);
  return Status::Ok();
}

// ---- Note event: JSON.

std::string EncodeNoteEvent(const NoteEvent& e) {
  JsonWriter w;
  w.BeginObject()
      .Key("schema").Int(kNoteEventSchema)
      .Key("site").String(e.site)
      .Key("path").String(e.path)
      .Key("url").String(e.url)
      .Key("version").Int(e.version)
      .Key("deleted").Bool(e.deleted)
      .Key("title").String(e.title)
      .Key("tags").BeginArray();
  for (const std::string& t : e.tags) w.String(t);
  w.EndArray().Key("text").String(e.text);
  if (!e.sections.empty()) {
    w.Key("sections").BeginArray();
    for (const NoteSection& sec : e.sections) {
      w.BeginObject().Key("heading").String(sec.heading).Key("anchor").String(sec.anchor)
          .Key("offset").Int(sec.offset).EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return w.Take();
}

namespace {

enum NoteField : unsigned {
  kSchema = 1 << 0, kSite = 1 << 1, kPath = 1 << 2, kUrl = 1 << 3, kVersion = 1 << 4,
  kDeleted = 1 << 5, kTitle = 1 << 6, kTags = 1 << 7, kText = 1 << 8,
};
constexpr unsigned kAllNoteFields = (1u << 9) - 1;
constexpr const char* kNoteFieldNames[] = {"schema", "site",  "path", "url", "version",
                                           "deleted", "title", "tags", "text"};

Status FieldError(std::string_view key, const char* want) {
  return Status::Invalid("note event: field \"" + std::string(key) + "\" must be " + want);
}

bool GetString(simdjson::dom::element v, std::string* out) {
  std::string_view s;
  if (v.get_string().get(s)) return false;
  out->assign(s);
  return true;
}

bool GetTags(simdjson::dom::element v, std::vector<std::string>* out) {
  simdjson::dom::array arr;
  if (v.get_array().get(arr)) return false;
  out->clear();
  for (simdjson::dom::element item : arr) {
    std::string_view s;
    if (item.get_string().get(s)) return false;
    out->emplace_back(s);
  }
  return true;
}

// Parses one known field into *e; unknown keys are skipped (forward compatible).
Status ParseNoteField(std::string_view key, simdjson::dom::element v, NoteEvent* e,
                      unsigned* seen) {
  if (key == "schema") {
    int64_t schema = 0;
    if (v.get_int64().get(schema)) return FieldError(key, "an integer");
    if (schema != kNoteEventSchema) {
      return Status::Invalid("note event: unknown schema " + std::to_string(schema));
    }
    *seen |= kSchema;
  } else if (key == "site" || key == "path" || key == "url" || key == "title" || key == "text") {
    std::string* dst = key == "site" ? &e->site : key == "path" ? &e->path
                     : key == "url"  ? &e->url  : key == "title" ? &e->title : &e->text;
    if (!GetString(v, dst)) return FieldError(key, "a string");
    *seen |= key == "site" ? kSite : key == "path" ? kPath : key == "url" ? kUrl
           : key == "title" ? kTitle : kText;
  } else if (key == "version") {
    if (v.get_int64().get(e->version)) return FieldError(key, "an integer");
    *seen |= kVersion;
  } else if (key == "deleted") {
    if (v.get_bool().get(e->deleted)) return FieldError(key, "a boolean");
    *seen |= kDeleted;
  } else if (key == "tags") {
    if (!GetTags(v, &e->tags)) return FieldError(key, "an array of strings");
    *seen |= kTags;
  } else if (key == "sections") {  // optional
    simdjson::dom::array arr;
    if (v.get_array().get(arr)) return FieldError(key, "an array of objects");
    e->sections.clear();
    for (simdjson::dom::element item : arr) {
      NoteSection sec;
      int64_t offset = 0;
      if (!GetString(item["heading"], &sec.heading) || !GetString(item["anchor"], &sec.anchor) ||
          item["offset"].get_int64().get(offset) || offset < 0 || offset > UINT32_MAX) {
        return FieldError(key, "an array of {heading, anchor, offset}");
      }
      sec.offset = static_cast<uint32_t>(offset);
      e->sections.push_back(std::move(sec));
    }
  }
  return Status::Ok();
}

}  // namespace

Status DecodeNoteEvent(std::string_view json, NoteEvent* out) {
  // The DOM parser, not On-Demand: it validates the whole document (trailing
  // content, malformed values under unknown keys), which On-Demand in
  // simdjson 3.0 cannot report. Events are small; the parser is reused.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::dom::object obj;
  if (parser.parse(json.data(), json.size()).get(root)) {
    return Status::Invalid("note event: malformed JSON");
  }
  if (root.get_object().get(obj)) return Status::Invalid("note event: not a JSON object");
  NoteEvent e;
  unsigned seen = 0;
  for (simdjson::dom::key_value_pair field : obj) {
    Status st = ParseNoteField(field.key, field.value, &e, &seen);
    if (!st.ok()) return st;
  }
  if (seen != kAllNoteFields) {
    for (unsigned i = 0; i < 9; ++i) {
      if (!(seen & (1u << i))) {
        return Status::Invalid(std::string("note event: missing field \"") + kNoteFieldNames[i] + "\"");
      }
    }
  }
  if (!IsValidSiteName(e.site)) return Status::Invalid("note event: invalid site name");
  *out = std::move(e);
  return Status::Ok();
}

}  // namespace folio::bus

// ---- Sites and host names.

namespace folio::bus {

std::string SiteKey(std::string_view site) {
  std::string key(kSiteKeyPrefix);
  key.append(site);
  return key;
}

bool ParseSiteKey(std::string_view key, std::string* site) {
  if (key.substr(0, kSiteKeyPrefix.size()) != kSiteKeyPrefix) return false;
  std::string_view s = key.substr(kSiteKeyPrefix.size());
  if (!IsValidSiteName(s)) return false;
  site->assign(s);
  return true;
}

namespace {

// ":" followed by at most 5 digits (an empty port is allowed by RFC 3986).
bool IsPortSuffix(std::string_view s) {
  if (s.empty() || s[0] != ':' || s.size() > 6) return false;
  for (char c : s.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

bool NormalizeHost(std::string_view host, std::string* out) {
  std::string_view name = host;
  bool ipv6 = false;
  if (!name.empty() && name[0] == '[') {
    size_t close = name.find(']');
    if (close == std::string_view::npos) return false;
    std::string_view rest = name.substr(close + 1);
    if (!rest.empty() && !IsPortSuffix(rest)) return false;
    name = name.substr(1, close - 1);
    ipv6 = true;
  } else if (size_t colon = name.find(':'); colon != std::string_view::npos) {
    if (name.find(':', colon + 1) != std::string_view::npos) {
      ipv6 = true;  // a bare IPv6 literal (as an operator may type it): no port
    } else {
      if (!IsPortSuffix(name.substr(colon))) return false;
      name = name.substr(0, colon);
    }
  }
  if (!ipv6 && !name.empty() && name.back() == '.') name.remove_suffix(1);
  if (name.empty() || name.size() > kMaxHostNameSize) return false;
  out->clear();
  for (char c : name) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    bool ok = ipv6 ? ((l >= 'a' && l <= 'f') || (l >= '0' && l <= '9') || l == ':' || l == '.')
                   : ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '.' || l == '-' || l == '_');
    if (!ok) return false;
    out->push_back(l);
  }
  return true;
}

std::string EncodeSiteRecord(const SiteRecord& r) {
  JsonWriter w;
  w.BeginObject().Key("schema").Int(kSiteRecordSchema).Key("site").String(r.site).Key("hosts").BeginArray();
  for (const std::string& h : r.hosts) w.String(h);
  w.EndArray().Key("title").String(r.title).EndObject();
  return w.Take();
}

namespace {

Status SiteFieldError(std::string_view key, const char* want) {
  return Status::Invalid("site record: field \"" + std::string(key) + "\" must be " + want);
}

Status ParseSiteHosts(simdjson::dom::element v, std::vector<std::string>* out) {
  simdjson::dom::array arr;
  if (v.get_array().get(arr)) return SiteFieldError("hosts", "an array of strings");
  out->clear();
  std::string canonical;
  for (simdjson::dom::element item : arr) {
    std::string_view h;
    if (item.get_string().get(h)) return SiteFieldError("hosts", "an array of strings");
    if (!NormalizeHost(h, &canonical) || canonical != h) {
      return Status::Invalid("site record: host \"" + std::string(h) + "\" is not a canonical host name");
    }
    if (out->size() == kMaxSiteHosts) {
      return Status::Invalid("site record: more than " + std::to_string(kMaxSiteHosts) + " hosts");
    }
    out->emplace_back(h);
  }
  return Status::Ok();
}

}  // namespace

Status DecodeSiteRecord(std::string_view json, SiteRecord* out) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::dom::object obj;
  if (parser.parse(json.data(), json.size()).get(root)) return Status::Invalid("site record: malformed JSON");
  if (root.get_object().get(obj)) return Status::Invalid("site record: not a JSON object");
  SiteRecord r;
  bool schema = false, site = false, hosts = false, title = false;
  for (simdjson::dom::key_value_pair field : obj) {
    std::string_view key = field.key;
    if (key == "schema") {
      int64_t v = 0;
      if (field.value.get_int64().get(v)) return SiteFieldError(key, "an integer");
      if (v != kSiteRecordSchema) return Status::Invalid("site record: unknown schema " + std::to_string(v));
      schema = true;
    } else if (key == "site" || key == "title") {
      std::string_view v;
      if (field.value.get_string().get(v)) return SiteFieldError(key, "a string");
      (key == "site" ? r.site : r.title).assign(v);
      (key == "site" ? site : title) = true;
    } else if (key == "hosts") {
      if (Status s = ParseSiteHosts(field.value, &r.hosts); !s.ok()) return s;
      hosts = true;
    }
  }
  for (auto [seen, name] : {std::pair{schema, "schema"}, {site, "site"}, {hosts, "hosts"}, {title, "title"}}) {
    if (!seen) return Status::Invalid(std::string("site record: missing field \"") + name + "\"");
  }
  if (!IsValidSiteName(r.site)) return Status::Invalid("site record: invalid site name \"" + r.site + "\"");
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace folio::bus
