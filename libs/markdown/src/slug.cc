#include "folio/markdown/slug.h"

#include <cstdint>

#include "folio/core/text.h"
#include "utf8.h"

namespace folio::markdown {

namespace {

// Non-ASCII code points that count as punctuation, symbols or spaces, so they
// separate words like ASCII punctuation does. Every other non-ASCII code point
// is kept as a letter: we carry no Unicode tables, and a false "letter" only
// keeps a character in a URL, while a false "separator" would merge words.
bool IsUnicodeSeparator(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0xBF) ||      // C1 controls, NBSP, Latin-1 punctuation
         cp == 0xD7 || cp == 0xF7 ||        // × ÷
         (cp >= 0x2000 && cp <= 0x2BFF) ||  // general punctuation .. arrows, math, shapes
         (cp >= 0x2E00 && cp <= 0x2E7F) ||  // supplemental punctuation
         (cp >= 0x3000 && cp <= 0x303F) ||  // CJK symbols and punctuation
         (cp >= 0xFE00 && cp <= 0xFE0F) ||  // variation selectors
         (cp >= 0xFE10 && cp <= 0xFE6F) ||  // vertical, compatibility, small forms
         (cp >= 0xFF00 && cp <= 0xFF0F) ||  // fullwidth punctuation
         (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) ||
         (cp >= 0xFF5B && cp <= 0xFF65) || (cp >= 0xFFF0 && cp <= 0xFFFF) ||
         (cp >= 0x1F000 && cp <= 0x1FAFF);  // emoji and pictographs
}

bool IsAsciiAlnum(uint32_t cp) {
  return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
}

// A code point kept in a slug (letters and digits of any script).
bool IsKept(uint32_t cp) {
  if (cp < 0x80) return IsAsciiAlnum(cp);
  return cp != kBadCodePoint && !IsUnicodeSeparator(cp);
}

}  // namespace

bool IsWordCodePoint(uint32_t cp) { return IsKept(cp); }

std::string SlugifySegment(std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  bool pending_dash = false;
  uint32_t prev = 0;  // previous code point of the input
  size_t i = 0;
  while (i < segment.size()) {
    size_t start = i;
    uint32_t cp = DecodeUtf8(segment, &i);
    if (cp == '.' && IsKept(prev) && i < segment.size()) {
      size_t j = i;
      if (IsKept(DecodeUtf8(segment, &j))) {  // '.' between two kept characters
        out.push_back('.');
        prev = cp;
        continue;
      }
    }
    if (!IsKept(cp)) {
      pending_dash = true;
    } else {
      if (pending_dash && !out.empty()) out.push_back('-');
      pending_dash = false;
      if (uint32_t lower = LowerCodePoint(cp); lower != cp) {  // "Гайд" -> "гайд", as "Guide" -> "guide"
        AppendUtf8(lower, &out);
      } else {
        out.append(segment.substr(start, i - start));
      }
    }
    prev = cp;
  }
  if (out.empty()) out = "-";
  return out;
}

std::string HeadingId(std::string_view text) { return SlugifySegment(text); }

std::string UrlForNotePath(std::string_view vault_path) {
  std::string_view path = vault_path;
  bool is_note = path.size() >= 3 && EqualsIgnoreAsciiCase(path.substr(path.size() - 3), ".md");
  if (is_note) path.remove_suffix(3);
  std::string url;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view seg = path.substr(start, slash - start);
    bool last = slash == path.size();
    start = slash + 1;
    if (seg.empty()) continue;
    if (last && is_note && EqualsIgnoreAsciiCase(seg, "index")) {
      url.push_back('/');  // folder page: "Docs/index.md" -> "/docs/"
      return url;
    }
    url.push_back('/');
    url += SlugifySegment(seg);
  }
  if (url.empty()) url = "/";
  return url;
}

}  // namespace folio::markdown
