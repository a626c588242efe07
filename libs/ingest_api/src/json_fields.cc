#include "json_fields.h"

namespace folio::ingest_api {

Status DecodeSettings(const json::Decoder& d, json::element v, std::optional<bool>* strict_line_breaks) {
  json::object obj;
  if (v.get_object().get(obj)) return d.FieldError("settings", "an object");
  bool strict = false;
  bool seen = false;
  Status st = d.Fields(obj, {
      {"strict_line_breaks", json::kOptional,
       [&](json::element x) { seen = true; return d.Bool("strict_line_breaks", x, &strict); }},
  });
  if (st.ok() && seen) *strict_line_breaks = strict;
  return st;
}

}  // namespace folio::ingest_api
