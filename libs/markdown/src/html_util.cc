#include "html_util.h"

#include <cstdint>
#include <cstring>

#include "folio/core/text.h"
#include "utf8.h"

namespace folio::markdown {

namespace {

struct NamedEntity {
  const char* name;
  uint32_t cp;
};

// The references authors actually type, plus the ones used to hide URL
// schemes (Tab, NewLine, colon). Unknown names stay verbatim.
constexpr NamedEntity kNamed[] = {
    {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''},
    {"nbsp", 0xA0}, {"copy", 0xA9}, {"reg", 0xAE}, {"trade", 0x2122}, {"hellip", 0x2026},
    {"mdash", 0x2014}, {"ndash", 0x2013}, {"lsquo", 0x2018}, {"rsquo", 0x2019},
    {"ldquo", 0x201C}, {"rdquo", 0x201D}, {"laquo", 0xAB}, {"raquo", 0xBB}, {"bull", 0x2022},
    {"middot", 0xB7}, {"deg", 0xB0}, {"plusmn", 0xB1}, {"times", 0xD7}, {"divide", 0xF7},
    {"frac12", 0xBD}, {"frac14", 0xBC}, {"frac34", 0xBE}, {"sup2", 0xB2}, {"sup3", 0xB3},
    {"micro", 0xB5}, {"para", 0xB6}, {"sect", 0xA7}, {"cent", 0xA2}, {"pound", 0xA3},
    {"euro", 0x20AC}, {"yen", 0xA5}, {"larr", 0x2190}, {"rarr", 0x2192}, {"uarr", 0x2191},
    {"darr", 0x2193}, {"harr", 0x2194}, {"lArr", 0x21D0}, {"rArr", 0x21D2}, {"hArr", 0x21D4},
    {"le", 0x2264}, {"ge", 0x2265}, {"ne", 0x2260}, {"asymp", 0x2248}, {"infin", 0x221E},
    {"sum", 0x2211}, {"prod", 0x220F}, {"minus", 0x2212}, {"radic", 0x221A}, {"alpha", 0x3B1},
    {"beta", 0x3B2}, {"gamma", 0x3B3}, {"delta", 0x3B4}, {"pi", 0x3C0}, {"sigma", 0x3C3},
    {"omega", 0x3C9}, {"lambda", 0x3BB}, {"mu", 0x3BC}, {"theta", 0x3B8}, {"shy", 0xAD},
    {"zwj", 0x200D}, {"zwnj", 0x200C}, {"ensp", 0x2002}, {"emsp", 0x2003},
    {"thinsp", 0x2009}, {"Tab", '\t'}, {"NewLine", '\n'}, {"colon", ':'}, {"excl", '!'},
    {"quest", '?'}, {"lpar", '('}, {"rpar", ')'}, {"num", '#'}, {"dollar", '$'},
    {"percnt", '%'}, {"ast", '*'}, {"plus", '+'}, {"comma", ','}, {"period", '.'},
    {"sol", '/'}, {"semi", ';'}, {"equals", '='}, {"lsqb", '['}, {"rsqb", ']'},
    {"lowbar", '_'}, {"grave", '`'}, {"lcub", '{'}, {"rcub", '}'}, {"verbar", '|'},
    {"bsol", '\\'}, {"Hat", '^'}, {"hyphen", 0x2010}, {"dash", 0x2010},
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
  *cp = v > 0x10FFFF ? 0xFFFD : static_cast<uint32_t>(v);
  return true;
}

const NamedEntity* FindNamed(std::string_view name) {
  for (const auto& e : kNamed) {
    if (name.size() == std::strlen(e.name) && name == e.name) return &e;
  }
  return nullptr;
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
