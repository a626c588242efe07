#include "folio/core/time.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace folio {

int64_t NowUnixMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t MonotonicUs() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

std::string HttpDate(int64_t unix_seconds) {
  static const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday], tm.tm_mday,
           kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Reads `n` digits at text[*at]; false when they are not there.
bool Digits(std::string_view text, size_t* at, size_t n, int* out) {
  if (*at + n > text.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = text[*at + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *at += n;
  *out = v;
  return true;
}

bool Leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysIn(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && Leap(y) ? 29 : kDays[m - 1];
}

// "HH:MM[:SS[.fff]]" at text[*at] into *p.
bool ReadClock(std::string_view text, size_t* at, DateParts* p) {
  if (!Digits(text, at, 2, &p->hour) || *at >= text.size() || text[(*at)++] != ':' ||
      !Digits(text, at, 2, &p->minute) || p->hour > 23 || p->minute > 59) {
    return false;
  }
  if (*at >= text.size() || text[*at] != ':') return true;
  ++*at;
  if (!Digits(text, at, 2, &p->second) || p->second > 60) return false;
  p->has_seconds = true;
  if (*at >= text.size() || (text[*at] != '.' && text[*at] != ',')) return true;
  const size_t start = ++*at;
  int scale = 100;
  for (; *at < text.size() && text[*at] >= '0' && text[*at] <= '9'; ++*at, scale /= 10) {
    p->fraction_ms += (text[*at] - '0') * scale;
  }
  p->has_fraction = true;
  return *at > start;
}

// "Z", "+HH:MM", "+HHMM" or "+HH" (or '-') ending `text` at *at.
bool ReadZone(std::string_view text, size_t at, DateParts* p) {
  p->has_zone = true;
  if (text[at] == 'Z' || text[at] == 'z') return at + 1 == text.size();
  if (text[at] != '+' && text[at] != '-') return false;
  const int sign = text[at++] == '-' ? -1 : 1;
  int zh = 0, zm = 0;
  if (!Digits(text, &at, 2, &zh) || zh > 23) return false;
  if (at < text.size() && text[at] == ':') ++at;
  if (at < text.size() && (!Digits(text, &at, 2, &zm) || zm > 59)) return false;
  p->zone_minutes = sign * (zh * 60 + zm);
  return at == text.size();
}

}  // namespace

std::optional<DateParts> ParseDate(std::string_view text) {
  DateParts p;
  size_t at = 0;
  if (!Digits(text, &at, 4, &p.year) || at >= text.size() || text[at++] != '-' || !Digits(text, &at, 2, &p.month) ||
      at >= text.size() || text[at++] != '-' || !Digits(text, &at, 2, &p.day)) {
    return std::nullopt;
  }
  if (p.month < 1 || p.month > 12 || p.day < 1 || p.day > DaysIn(p.year, p.month)) return std::nullopt;
  if (at == text.size()) return p;
  if (text[at] != 'T' && text[at] != 't' && text[at] != ' ') return std::nullopt;
  p.has_time = true;
  p.time_at = at++;
  if (!ReadClock(text, &at, &p)) return std::nullopt;
  if (at < text.size() && !ReadZone(text, at, &p)) return std::nullopt;
  return p;
}

int64_t ParseDateMs(std::string_view text) {
  std::optional<DateParts> p = ParseDate(text);
  if (!p || p->year < 1970) return 0;
  const int64_t days = DaysFromCivil(p->year, static_cast<unsigned>(p->month), static_cast<unsigned>(p->day));
  return ((days * 24 + p->hour) * 60 + p->minute) * 60000 + static_cast<int64_t>(p->second) * 1000 + p->fraction_ms;
}

std::string Iso8601Ms(int64_t unix_ms) {
  time_t t = static_cast<time_t>(unix_ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
  return buf;
}

}  // namespace folio
