#include "html_util.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "folio/core/text.h"
#include "utf8.h"

namespace folio::markdown {

namespace {

struct NamedEntity {
  const char* name;  // without '&' and ';'
  uint32_t cp;
  uint32_t cp2;      // a second code point (a few references have two), or 0
};

// Every HTML5 named reference (WHATWG list), generated at build time from
// Python's html.entities.html5 (gen_entities.py); sorted by name.
constexpr NamedEntity kNamed[] = {
#include "html_entities.inc"
};

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses a numeric reference body after "&#" in s[*i..]; advances *i past the
// digits and an optional ';'. Returns false if there are no digits.
bool ParseNumeric(std::string_view s, size_t* i, uint32_t* cp) {
  bool hex = *i < s.size() && (s[*i] == 'x' || s[*i] == 'X');
  size_t j = *i + (hex ? 1 : 0);
  uint64_t v = 0;
  size_t digits = 0;
  for (; j < s.size(); ++j) {
    int d = hex ? HexDigit(s[j]) : (s[j] >= '0' && s[j] <= '9' ? s[j] - '0' : -1);
    if (d < 0) break;
    if (v <= 0x10FFFF) v = v * (hex ? 16 : 10) + static_cast<uint64_t>(d);
    ++digits;
  }
  if (digits == 0) return false;
  if (j < s.size() && s[j] == ';') ++j;
  *i = j;
  // U+0000, surrogates and beyond Unicode are U+FFFD (HTML, CommonMark).
  *cp = v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) ? 0xFFFD : static_cast<uint32_t>(v);
  return true;
}

const NamedEntity* FindNamed(std::string_view name) {
  const NamedEntity* it = std::lower_bound(std::begin(kNamed), std::end(kNamed), name,
                                           [](const NamedEntity& e, std::string_view n) { return std::string_view(e.name) < n; });
  return it != std::end(kNamed) && std::string_view(it->name) == name ? it : nullptr;
}

}  // namespace

bool DecodeEntity(std::string_view ref, std::string* out) {
  if (ref.size() < 3 || ref.front() != '&' || ref.back() != ';') return false;
  if (ref[1] == '#') {
    size_t i = 2;
    uint32_t cp = 0;
    if (!ParseNumeric(ref, &i, &cp) || i != ref.size()) return false;
    AppendUtf8(cp, out);
    return true;
  }
  const NamedEntity* e = FindNamed(ref.substr(1, ref.size() - 2));
  if (e == nullptr) return false;
  AppendUtf8(e->cp, out);
  if (e->cp2 != 0) AppendUtf8(e->cp2, out);
  return true;
}

std::string DecodeEntities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '&') {
      out.push_back(s[i++]);
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '#') {
      size_t j = i + 2;
      uint32_t cp = 0;
      if (ParseNumeric(s, &j, &cp)) {
        AppendUtf8(cp, &out);
        i = j;
        continue;
      }
    } else {
      size_t j = i + 1;
      while (j < s.size() && IsAlnum(s[j])) ++j;
      if (j < s.size() && s[j] == ';' && DecodeEntity(s.substr(i, j + 1 - i), &out)) {
        i = j + 1;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

void AppendUrlEscaped(std::string_view url, std::string* out) {
  static const char kHex[] = "0123456789ABCDEF";
  static const char kSafe[] = "-_.+!*(),%#@?=;:/~$";
  for (char ch : url) {
    auto c = static_cast<unsigned char>(ch);
    if (IsAlnum(ch) || (c != 0 && std::strchr(kSafe, ch) != nullptr)) {
      out->push_back(ch);
    } else if (ch == '&') {
      out->append("&amp;");
    } else {
      out->push_back('%');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

namespace {

bool IsVideoIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// The run of ID characters at the start of `s` (stops at '?', '&', '/', '#').
std::string_view IdPrefix(std::string_view s, bool digits_only) {
  size_t n = 0;
  while (n < s.size() && (digits_only ? (s[n] >= '0' && s[n] <= '9') : IsVideoIdChar(s[n]))) ++n;
  return s.substr(0, n);
}

}  // namespace

std::string VideoEmbedUrl(std::string_view url) {
  std::string_view u = url;
  for (std::string_view scheme : {"https://", "http://"}) {
    if (u.substr(0, scheme.size()) == scheme) {
      u.remove_prefix(scheme.size());
      break;
    }
  }
  if (u.size() == url.size()) return "";
  size_t slash = u.find('/');
  if (slash == std::string_view::npos) return "";
  std::string host;
  for (char c : u.substr(0, slash)) host += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  std::string_view path = u.substr(slash + 1);
  std::string_view id;
  if (host == "www.youtube.com" || host == "youtube.com" || host == "m.youtube.com") {
    if (path.substr(0, 8) == "watch?v=") {
      id = IdPrefix(path.substr(8), false);
    } else if (size_t v = path.find("&v="); path.substr(0, 6) == "watch?" && v != std::string_view::npos) {
      id = IdPrefix(path.substr(v + 3), false);
    } else if (path.substr(0, 6) == "embed/") {
      id = IdPrefix(path.substr(6), false);
    } else if (path.substr(0, 7) == "shorts/") {
      id = IdPrefix(path.substr(7), false);
    }
  } else if (host == "youtu.be") {
    id = IdPrefix(path, false);
  } else if (host == "www.youtube-nocookie.com" || host == "youtube-nocookie.com") {
    if (path.substr(0, 6) == "embed/") id = IdPrefix(path.substr(6), false);
  } else if (host == "vimeo.com" || host == "www.vimeo.com") {
    id = IdPrefix(path, true);
    if (!id.empty()) return "https://player.vimeo.com/video/" + std::string(id);
    return "";
  } else if (host == "player.vimeo.com") {
    if (path.substr(0, 6) == "video/") id = IdPrefix(path.substr(6), true);
    if (!id.empty()) return "https://player.vimeo.com/video/" + std::string(id);
    return "";
  }
  if (id.size() < 6 || id.size() > 20) return "";
  return "https://www.youtube-nocookie.com/embed/" + std::string(id);
}

void AppendVideoIframe(std::string_view embed_url, std::string_view title, std::string* out) {
  *out += "<iframe class=\"embed-video\" src=\"";
  AppendUrlEscaped(embed_url, out);
  *out += "\" title=\"";
  AppendHtmlEscaped(title.empty() ? std::string_view("Video") : title, out);
  *out += "\" loading=\"lazy\" referrerpolicy=\"strict-origin-when-cross-origin\" allow=\"fullscreen; picture-in-picture\""
          " sandbox=\"allow-scripts allow-same-origin allow-presentation allow-popups\" allowfullscreen></iframe>";
}

}  // namespace folio::markdown
