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
  w.EndArray().Key("title").String(r.title).EndObject();
  return w.Take();
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

}  // namespace

Status DecodeSiteRecord(std::string_view json, SiteRecord* out) {
  json::Decoder d("site record");
  json::object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  SiteRecord r;
  Status st = d.Fields(obj, {
      {"schema", kRequired, [&](element v) { return d.Schema(v, kSiteRecordSchema); }},
      {"site", kRequired, [&](element v) { return DecodeSite(d, v, &r.site); }},
      {"hosts", kRequired, [&](element v) { return DecodeHosts(d, v, &r.hosts); }},
      {"title", kRequired, [&](element v) { return d.String("title", v, &r.title); }},
  });
  if (!st.ok()) return st;
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace folio::bus
