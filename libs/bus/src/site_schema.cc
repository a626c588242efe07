#include "folio/bus/site_schema.h"

#include "folio/bus/hosts.h"
#include "folio/core/json.h"
#include "json_decode.h"

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

std::string EncodeSiteRecord(const SiteRecord& r) {
  JsonWriter w;
  w.BeginObject().Key("schema").Int(kSiteRecordSchema).Key("site").String(r.site).Key("hosts").BeginArray();
  for (const std::string& h : r.hosts) w.String(h);
  w.EndArray().Key("title").String(r.title);
  const SiteAccess& a = r.access;
  if (a.private_site || !a.readers.empty() || !a.session_key.empty()) {
    w.Key("access").BeginObject().Key("private").Bool(a.private_site).Key("session_key").String(a.session_key);
    w.Key("session_ttl_s").Int(a.session_ttl_s).Key("readers").BeginArray();
    for (const SiteReader& u : a.readers) {
      w.BeginObject().Key("name").String(u.name).Key("hash").String(u.hash).Key("owner").Bool(u.owner).EndObject();
    }
    w.EndArray().EndObject();
  }
  w.EndObject();
  return w.Take();
}

bool IsValidReaderName(std::string_view name) {
  if (name.size() > kMaxReaderNameBytes) return false;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F || c == ':') return false;
  }
  return true;  // UTF-8 validity: checked by the JSON parser on the way in
}

namespace {

using json::element;
using json::kRequired;

Status DecodeHosts(const json::Decoder& d, element v, std::vector<std::string>* out) {
  if (Status st = d.Strings("hosts", v, out); !st.ok()) return st;
  if (out->size() > kMaxSiteHosts) return d.Error("more than " + std::to_string(kMaxSiteHosts) + " hosts");
  std::string canonical;
  for (const std::string& h : *out) {
    if (!NormalizeHost(h, &canonical) || canonical != h) {
      return d.Error("host \"" + h + "\" is not a canonical host name");
    }
  }
  return Status::Ok();
}

Status DecodeReader(const json::Decoder& d, element v, SiteReader* out) {
  json::object obj;
  if (Status st = d.ObjectItem("readers", v, &obj); !st.ok()) return st;
  Status st = d.Fields(obj, {
      {"name", kRequired, [&](element e) { return d.String("name", e, &out->name); }},
      {"hash", kRequired, [&](element e) { return d.String("hash", e, &out->hash); }},
      {"owner", kRequired, [&](element e) { return d.Bool("owner", e, &out->owner); }},
  }, "readers");
  if (!st.ok()) return st;
  if (!IsValidReaderName(out->name)) return d.Error("reader name \"" + out->name + "\" is not allowed");
  if (out->hash.empty() || out->hash.size() > kMaxPasswordHashBytes) {
    return d.Error("reader \"" + out->name + "\" has no password hash or one over " +
                   std::to_string(kMaxPasswordHashBytes) + " bytes");
  }
  return Status::Ok();
}

Status DecodeAccess(const json::Decoder& d, element v, SiteAccess* out) {
  json::object obj;
  if (v.get(obj) != simdjson::SUCCESS) return d.FieldError("access", "an object");
  Status st = d.Fields(obj, {
      {"private", kRequired, [&](element e) { return d.Bool("private", e, &out->private_site); }},
      {"session_key", kRequired, [&](element e) { return d.String("session_key", e, &out->session_key); }},
      {"session_ttl_s", kRequired,
       [&](element e) { return d.Int("session_ttl_s", e, 60, int64_t{400} * 86400, &out->session_ttl_s); }},
      {"readers", kRequired, [&](element e) { return d.Items("readers", e, &out->readers, [&](element i, SiteReader* u) {
         return DecodeReader(d, i, u);
       }); }},
  }, "access");
  if (!st.ok()) return st;
  if (!out->session_key.empty()) {
    bool hex = out->session_key.size() == kSessionKeyHexBytes;
    for (char c : out->session_key) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    if (!hex) return d.Error("access.session_key is not " + std::to_string(kSessionKeyHexBytes) + " lowercase hex digits");
  }
  if (out->readers.size() > kMaxSiteReaders) {
    return d.Error("more than " + std::to_string(kMaxSiteReaders) + " readers");
  }
  for (size_t i = 0; i < out->readers.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (out->readers[i].name == out->readers[j].name && !out->readers[i].name.empty()) {
        return d.Error("two readers named \"" + out->readers[i].name + "\"");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status DecodeSiteRecord(std::string_view json, SiteRecord* out) {
  json::Decoder d("site record");
  json::object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  SiteRecord r;
  Status st = d.Fields(obj, {
      {"schema", kRequired, [&](element v) {
         Status one = d.Schema(v, kSiteRecordSchemaV1);
         return one.ok() ? one : d.Schema(v, kSiteRecordSchema);
       }},
      {"site", kRequired, [&](element v) { return DecodeSite(d, v, &r.site); }},
      {"hosts", kRequired, [&](element v) { return DecodeHosts(d, v, &r.hosts); }},
      {"title", kRequired, [&](element v) { return d.String("title", v, &r.title); }},
      {"access", json::kOptional, [&](element v) { return DecodeAccess(d, v, &r.access); }},
  });
  if (!st.ok()) return st;
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace folio::bus
