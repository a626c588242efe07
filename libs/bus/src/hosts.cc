#include "folio/bus/hosts.h"

namespace folio::bus {
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

}  // namespace folio::bus
