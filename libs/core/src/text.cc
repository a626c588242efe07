#include "folio/core/text.h"

#include <cstdint>
#include <cstdio>

#include "folio/core/utf8.h"

namespace folio {

bool IsValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    uint8_t c = *p;
    if (c < 0x80) { ++p; continue; }
    int n;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07; }
    else return false;
    if (end - p <= n) return false;
    for (int i = 1; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000)) return false;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += n + 1;
  }
  return true;
}

Status CheckVaultPath(std::string_view path) {
  if (path.empty()) return Status::Invalid("path is empty");
  if (path.size() > 1024) return Status::Invalid("path is longer than 1024 bytes");
  if (!IsValidUtf8(path)) return Status::Invalid("path is not valid UTF-8");
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f) return Status::Invalid("path contains a control character");
    if (c == '\\') return Status::Invalid("path contains a backslash; use '/'");
  }
  if (path.front() == '/') return Status::Invalid("path is absolute; send it relative to the vault root");
  if (path.size() >= 2 && path[1] == ':') return Status::Invalid("path is absolute (drive letter)");
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view seg = path.substr(start, slash - start);
    if (seg.empty()) return Status::Invalid("path has an empty segment ('//' or a trailing '/')");
    if (seg == "..") return Status::Invalid("path contains '..'");
    if (seg == ".") return Status::Invalid("path contains a '.' segment");
    start = slash + 1;
  }
  return Status::Ok();
}

namespace {
int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') { out->push_back(in[i]); continue; }
    if (i + 2 >= in.size()) return false;
    int h = HexVal(in[i + 1]), l = HexVal(in[i + 2]);
    if (h < 0 || l < 0) return false;
    out->push_back(static_cast<char>(h * 16 + l));
    i += 2;
  }
  return true;
}

std::string PercentEncodePath(std::string_view in) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size() * 3);
  for (unsigned char c : in) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '_' || c == '.' || c == '~' || c == '/';
    if (keep) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string_view PathDir(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

std::string_view PathBase(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string_view TrimAsciiSpace(std::string_view s) {
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::string AsciiLower(std::string_view s) {
  std::string r(s);
  for (char& c : r) if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return r;
}

bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

namespace {

// The entity for one of & < > " ', else nullptr.
const char* HtmlEntity(char c) {
  switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    default: return nullptr;
  }
}

}  // namespace

std::string FormatBytes(int64_t n) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (n < 1024) return std::to_string(n) + " B";
  double v = static_cast<double>(n);
  int unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  if (v == static_cast<double>(static_cast<int64_t>(v)) || v >= 100) {
    std::snprintf(buf, sizeof buf, "%.0f %s", v, kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  }
  return buf;
}

void AppendHtmlEscaped(std::string_view in, std::string* out) {
  for (char c : in) {
    if (const char* e = HtmlEntity(c)) *out += e;
    else out->push_back(c);
  }
}

void AppendXmlText(std::string_view in, std::string* out) {
  size_t i = 0;
  while (i < in.size()) {
    char c = in[i];
    if (static_cast<unsigned char>(c) < 0x80) {
      ++i;
      if (const char* e = HtmlEntity(c)) *out += e;
      else if (c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c != 0x7F)) out->push_back(c);
      continue;
    }
    uint32_t cp = DecodeUtf8(in, &i);
    if (cp <= 0x9F) continue;  // C1 controls
    if (cp == kBadCodePoint || cp == 0xFFFE || cp == 0xFFFF) cp = 0xFFFD;
    AppendUtf8(cp, out);
  }
}

std::string HtmlEscape(std::string_view in) {
  std::string s;
  s.reserve(in.size() + 16);
  AppendHtmlEscaped(in, &s);
  return s;
}

uint32_t LowerCodePoint(uint32_t cp) {
  if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 0x20;  // Latin-1
  if (cp >= 0x100 && cp <= 0x17F) {                               // Latin Extended-A: pairs
    if (cp == 0x130) return 'i';
    if (cp == 0x178) return 0xFF;
    bool odd_upper = (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E);
    if (odd_upper) return cp % 2 == 1 ? cp + 1 : cp;
    if (cp == 0x138 || cp == 0x149 || cp == 0x17F) return cp;
    return cp % 2 == 0 ? cp + 1 : cp;
  }
  if (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) return cp + 0x20;  // Greek
  if (cp == 0x386) return 0x3AC;
  if (cp >= 0x388 && cp <= 0x38A) return cp + 0x25;
  if (cp == 0x38C) return 0x3CC;
  if (cp == 0x38E || cp == 0x38F) return cp + 0x3F;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 0x20;  // Cyrillic
  if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;
  if ((cp >= 0x460 && cp <= 0x481) || (cp >= 0x48A && cp <= 0x4BF) || (cp >= 0x4D0 && cp <= 0x4FF)) {
    return cp % 2 == 0 ? cp + 1 : cp;
  }
  if (cp >= 0x531 && cp <= 0x556) return cp + 0x30;  // Armenian
  return cp;
}

std::string Utf8Lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    uint32_t cp = DecodeUtf8(s, &i);
    if (cp == kBadCodePoint) {
      out.append(s.substr(start, i - start));
    } else if (cp < 0x80) {
      out.push_back(static_cast<char>(LowerCodePoint(cp)));
    } else {
      AppendUtf8(LowerCodePoint(cp), &out);
    }
  }
  return out;
}

}  // namespace folio
