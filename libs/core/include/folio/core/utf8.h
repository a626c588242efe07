// UTF-8 decoding and encoding, one code point at a time. Pure; thread-safe.
// (IsValidUtf8 for whole strings is in text.h.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace folio {

inline constexpr uint32_t kBadCodePoint = 0xFFFFFFFFu;

// Decodes the code point at s[*i] and advances *i past it. A malformed or
// truncated sequence yields kBadCodePoint and advances by one byte.
inline uint32_t DecodeUtf8(std::string_view s, size_t* i) {
  auto c = static_cast<unsigned char>(s[*i]);
  if (c < 0x80) { ++*i; return c; }
  int n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07; }
  else { ++*i; return kBadCodePoint; }
  if (s.size() - *i <= static_cast<size_t>(n)) { ++*i; return kBadCodePoint; }
  for (int k = 1; k <= n; ++k) {
    auto b = static_cast<unsigned char>(s[*i + k]);
    if ((b & 0xC0) != 0x80) { ++*i; return kBadCodePoint; }
    cp = (cp << 6) | (b & 0x3F);
  }
  if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
      cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return kBadCodePoint;
  }
  *i += n + 1;
  return cp;
}

// Appends `cp` as UTF-8; invalid code points (NUL, surrogates, > U+10FFFF)
// become U+FFFD.
inline void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The lower-case form of `cp` for the scripts whose case folks type in URLs
// and names: ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic, Armenian
// (simple one-to-one mappings; we carry no Unicode tables). Other code
// points are returned unchanged.
uint32_t LowerCodePoint(uint32_t cp);

// `s` with LowerCodePoint applied to each code point; malformed bytes are
// kept as they are.
std::string Utf8Lower(std::string_view s);

}  // namespace folio
