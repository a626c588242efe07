// Wall-clock helpers. Thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace folio {

int64_t NowUnixMs();
// Monotonic clock, for durations.
int64_t MonotonicUs();
// IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT" (29 chars).
std::string HttpDate(int64_t unix_seconds);
// "2026-11-30T21:40:00.123Z"
std::string Iso8601Ms(int64_t unix_ms);

}  // namespace folio
