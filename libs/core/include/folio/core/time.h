// Wall-clock helpers. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace folio {

int64_t NowUnixMs();
// Monotonic clock, for durations.
int64_t MonotonicUs();
// IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT" (29 chars).
std::string HttpDate(int64_t unix_seconds);
// "2026-11-30T21:40:00.123Z"
std::string Iso8601Ms(int64_t unix_ms);

// A date as frontmatter writes it, in its parts: "2026-11-30", then
// optionally 'T', 't' or ' ' and "HH:MM", ":SS", ".fff" (or ",fff"), then
// "Z", "+HH:MM", "+HHMM" or "+HH" (or '-'). The one reader of such dates
// (ParseDateMs and site::ShowDate use it).
struct DateParts {
  int year = 0, month = 0, day = 0;       // a real calendar day (2023-02-29 is none)
  int hour = 0, minute = 0, second = 0;   // 0 unless written; second may be 60 (a leap second)
  int fraction_ms = 0;                    // the fraction's first three digits, as milliseconds
  int zone_minutes = 0;                   // the zone's offset east of UTC ("Z": 0)
  bool has_time = false, has_seconds = false, has_fraction = false, has_zone = false;
  size_t time_at = 0;                     // with has_time: the index of the separator before the time
};
// nullopt unless all of `text` is one such date (no spaces around it).
std::optional<DateParts> ParseDate(std::string_view text);

// A frontmatter date (ParseDate's forms) in ms since the epoch, its wall
// clock read as UTC (a zone is accepted but not applied). 0 when it is not
// such a date (or before 1970).
int64_t ParseDateMs(std::string_view text);

}  // namespace folio
