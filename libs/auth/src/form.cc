#include "folio/auth/form.h"

namespace folio::auth {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool FormDecode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '+') {
      out->push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out->push_back(c);
    }
  }
  return true;
}

}  // namespace

bool FormField(std::string_view body, std::string_view name, std::string* out) {
  if (body.size() > kMaxFormBytes) return false;
  std::string key;
  while (!body.empty()) {
    size_t amp = body.find('&');
    std::string_view kv = body.substr(0, amp);
    body = amp == std::string_view::npos ? std::string_view() : body.substr(amp + 1);
    size_t eq = kv.find('=');
    if (!FormDecode(kv.substr(0, eq), &key) || key != name) continue;
    return FormDecode(eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1), out);
  }
  return false;
}

std::string_view CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    size_t semi = header.find(';');
    std::string_view item = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || item.substr(0, eq) != name) continue;
    std::string_view v = item.substr(eq + 1);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  return {};
}

}  // namespace folio::auth
