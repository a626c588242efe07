#include "folio/http/conditional.h"

#include <charconv>

namespace folio::http {

namespace {

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// All of `s` as a decimal number; false if empty or anything else.
bool ParseDecimal(std::string_view s, uint64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

bool EtagMatches(std::string_view inm, std::string_view etag) {
  if (etag.empty()) return false;
  while (!inm.empty()) {
    size_t comma = inm.find(',');
    std::string_view tag = TrimSpace(inm.substr(0, comma));
    inm = comma == std::string_view::npos ? std::string_view() : inm.substr(comma + 1);
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == etag) return true;
  }
  return false;
}

ByteRange ParseRange(std::string_view h, uint64_t size) {
  ByteRange r;
  if (h.substr(0, 6) != "bytes=" || h.find(',') != std::string_view::npos) return r;
  h.remove_prefix(6);
  size_t dash = h.find('-');
  if (dash == std::string_view::npos) return r;
  std::string_view a = h.substr(0, dash), b = h.substr(dash + 1);
  uint64_t x = 0, y = 0;
  if (a.empty()) {  // suffix: the last y bytes
    if (!ParseDecimal(b, &y)) return r;
    if (y == 0 || size == 0) {
      r.kind = ByteRange::Kind::kUnsatisfiable;
      return r;
    }
    r.kind = ByteRange::Kind::kPart;
    r.first = y >= size ? 0 : size - y;
    r.last = size - 1;
    return r;
  }
  if (!ParseDecimal(a, &x) || (!b.empty() && !ParseDecimal(b, &y))) return r;
  if (!b.empty() && y < x) return r;
  if (x >= size) {
    r.kind = ByteRange::Kind::kUnsatisfiable;
    return r;
  }
  r.kind = ByteRange::Kind::kPart;
  r.first = x;
  r.last = b.empty() || y >= size ? size - 1 : y;
  return r;
}

}  // namespace folio::http
