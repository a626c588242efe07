// Wall-clock helpers. Thread-safe.
#pragma once

#include <cstdint>
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
// A date as frontmatter writes it, in UTC: "2026-11-30", "2026-11-30T21:40",
// "2026-11-30 21:40:05", optionally ending in "Z" (other zones are read as
// UTC). 0 when it is not such a date (or before 1970).
int64_t ParseDateMs(std::string_view text);

}  // namespace folio
