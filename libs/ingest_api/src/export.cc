// The export page's codec (export.h).
#include "folio/ingest_api/export.h"

#include "folio/core/json.h"
#include "folio/core/json_decode.h"

namespace folio::ingest_api {

std::string EncodeExportPage(const ExportPage& page) {
  JsonWriter w;
  w.BeginObject().Key("urls").BeginArray();
  for (const std::string& u : page.urls) w.String(u);
  w.EndArray().Key("next").String(page.next).EndObject();
  return w.Take();
}

Result<ExportPage> DecodeExportPage(std::string_view json) {
  json::Decoder d("export answer");
  json::object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  ExportPage page;
  bool has_urls = false;
  Status st = d.Fields(obj, {
      {"urls", json::kOptional, [&](json::element v) { has_urls = true; return d.Strings("urls", v, &page.urls); }},
      {"next", json::kOptional, [&](json::element v) { return d.String("next", v, &page.next); }},
  });
  if (!st.ok()) return st;
  if (!has_urls) return d.Error("no \"urls\" (is the server older than folio export?)");
  return page;
}

}  // namespace folio::ingest_api
