#include "folio/bus/site_name.h"

#include "schema_format.h"

namespace folio::bus {

bool IsValidSiteName(std::string_view site) {
  if (site.empty() || site.size() > format::kMaxSiteNameSize || site[0] == '-') return false;
  for (char c : site) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

}  // namespace folio::bus
