#include "json_decode.h"

#include "folio/bus/site_name.h"

namespace folio::bus {

Status DecodeSite(const json::Decoder& d, json::element v, std::string* out) {
  if (Status st = d.String("site", v, out); !st.ok()) return st;
  if (!IsValidSiteName(*out)) return d.Error("invalid site name \"" + *out + "\"");
  return Status::Ok();
}

}  // namespace folio::bus
