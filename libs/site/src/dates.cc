#include "folio/site/dates.h"

#include <cctype>

#include "folio/core/text.h"

namespace folio::site {
namespace {

constexpr const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                   "July",    "August",   "September", "October", "November", "December"};

// `n` digits at text[*at], as a number; false if they are not there.
bool Digits(std::string_view text, size_t* at, size_t n, int* value) {
  if (*at + n > text.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = text[*at + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *at += n;
  *value = v;
  return true;
}

bool Leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysIn(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && Leap(y) ? 29 : kDays[m - 1];
}

// "HH:MM", then ":SS" and ".fff" optionally, then "Z", "+HH:MM", "+HHMM" or
// "+HH" optionally, up to the end of `text`.
bool Time(std::string_view text, size_t at) {
  int h = 0, mi = 0, s = 0, zh = 0, zm = 0;
  if (!Digits(text, &at, 2, &h) || at >= text.size() || text[at++] != ':' || !Digits(text, &at, 2, &mi)) return false;
  if (h > 23 || mi > 59) return false;
  if (at < text.size() && text[at] == ':') {
    ++at;
    if (!Digits(text, &at, 2, &s) || s > 60) return false;
    if (at < text.size() && (text[at] == '.' || text[at] == ',')) {
      size_t start = ++at;
      while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
      if (at == start) return false;
    }
  }
  if (at == text.size()) return true;
  if (text[at] == 'Z' || text[at] == 'z') return at + 1 == text.size();
  if (text[at] != '+' && text[at] != '-') return false;
  ++at;
  if (!Digits(text, &at, 2, &zh) || zh > 23) return false;
  if (at < text.size() && text[at] == ':') ++at;
  if (at < text.size() && (!Digits(text, &at, 2, &zm) || zm > 59)) return false;
  return at == text.size();
}

}  // namespace

std::optional<ShownDate> ShowDate(std::string_view text, std::string_view lang) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  size_t at = 0;
  int y = 0, m = 0, d = 0;
  if (!Digits(text, &at, 4, &y) || at >= text.size() || text[at++] != '-' || !Digits(text, &at, 2, &m) ||
      at >= text.size() || text[at++] != '-' || !Digits(text, &at, 2, &d)) {
    return std::nullopt;
  }
  if (m < 1 || m > 12 || d < 1 || d > DaysIn(y, m)) return std::nullopt;
  ShownDate out;
  out.machine = std::string(text);
  if (at < text.size()) {
    if ((text[at] != 'T' && text[at] != 't' && text[at] != ' ') || !Time(text, at + 1)) return std::nullopt;
    out.machine[at] = 'T';
  }
  const bool english = lang.empty() || EqualsIgnoreAsciiCase(lang, "en") || StartsWith(AsciiLower(lang), "en-");
  out.readable = english ? std::to_string(d) + " " + kMonths[m - 1] + " " + std::to_string(y)
                         : std::string(text.substr(0, 10));
  return out;
}

void AppendTimeElement(std::string_view text, std::string_view lang, std::string* out) {
  std::optional<ShownDate> date = ShowDate(text, lang);
  if (!date) {
    *out += "<time>";
    AppendHtmlEscaped(text, out);
    *out += "</time>";
    return;
  }
  *out += "<time datetime=\"";
  AppendHtmlEscaped(date->machine, out);
  *out += "\">";
  AppendHtmlEscaped(date->readable, out);
  *out += "</time>";
}

}  // namespace folio::site
