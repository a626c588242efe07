// ViewCounter: folio's own privacy-friendly page-view counter (issue 29):
// views of each HTML page per site and UTC day, counted by the edge from the
// requests themselves: no cookie, no script, no client address kept.
//
// What counts as a view (IsCountedView): a GET (not HEAD) of a page whose
// record is an HTML page with status 200, answered 200 or 304 (a 304 is a
// reader's browser showing its cached copy again: a view), from a
// User-Agent that does not contain "bot", "crawler" or "spider"
// (any case), and that is a navigation: no Sec-Fetch-Dest, or
// Sec-Fetch-Dest: document, and no Sec-Purpose / Purpose: prefetch. The
// site script's link previews and hover prefetches (fetch(): Sec-Fetch-Dest:
// empty) are thus not views; neither are the pages the site script swaps in
// from them, so views count page loads (README.md "Analytics").
//
// Bounds: per site and day at most `max_urls` URLs (default 10,000); views
// of further URLs that day count into the day's `other`. `days_kept` days
// (default 31) are kept; older ones are dropped as new days begin. Memory
// per site and worker is thus at most days_kept x max_urls entries.
//
// Counts are per edge process (edges are stateless; Prometheus sums the
// edges) and per worker: each Worker owns one ViewCounter and counts into
// it on its loop thread; readers (/metrics, /_/stats) merge every worker's
// counter (ViewCounters). Thread-safe: one mutex per counter, which only its
// worker takes on the hot path, uncontended but while a reader copies.
// Count allocates nothing for a (site, day, URL) already seen.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folio/http/server.h"
#include "site_table.h"

namespace folio::edge {

// The day number of a Unix time in ms: days since 1970-01-01 UTC.
inline int64_t UtcDay(int64_t unix_ms) { return unix_ms / 86'400'000; }

// True if `ua` names a robot: contains "bot", "crawler" or "spider" in any case.
bool IsBotUserAgent(std::string_view ua);
// True if `req` is a reader's view of a page (above): GET, a navigation,
// not a prefetch, not a robot. The page's own conditions (HTML, 200) are the
// caller's.
bool IsCountedView(const http::Request& req);

struct ViewCounterLimits {
  size_t max_urls = 10'000;  // distinct URLs per site and day; more count into `other`
  int days_kept = 31;        // days of counts kept per site
};

// One site's views over some days, as readers see them (merged over workers).
struct ViewSummary {
  std::map<int64_t, uint64_t> days;                 // UTC day -> views (days without views absent)
  std::unordered_map<std::string, uint64_t> pages;  // URL -> views over those days
  uint64_t other = 0;                               // views of URLs past a day's cap
  uint64_t total = 0;
};

class ViewCounter {
 public:
  explicit ViewCounter(ViewCounterLimits limits = {}) : limits_(limits) {}

  // One view of `url` of `site` on UTC day `day`. Allocates only for a site,
  // day or URL not seen yet. A day before the newest one seen (a clock
  // stepped back) counts into the newest.
  void Count(std::string_view site, std::string_view url, int64_t day);

  // Adds `site`'s views of days [from_day, to_day] into `out`.
  void AddTo(std::string_view site, int64_t from_day, int64_t to_day, ViewSummary* out) const;
  // Adds every site's views since start (never decreasing) into `out`.
  void AddTotals(std::map<std::string, uint64_t>* out) const;
  // Adds every site's views of `day` into out[site].
  void AddDay(int64_t day, std::map<std::string, ViewSummary>* out) const;

 private:
  struct Day {
    int64_t day = 0;
    std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> urls;
    uint64_t other = 0, total = 0;
  };
  struct Site {
    std::deque<Day> days;  // oldest first; at most days_kept
    uint64_t all_time = 0;
  };
  Day& DayOf(Site* s, int64_t day);

  const ViewCounterLimits limits_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Site, StringHash, std::equal_to<>> sites_;  // GUARDED_BY(mu_)
};

// Every worker's counter: the edge's views, as /metrics and /_/stats read
// them. Built before the workers serve; then read-only (the counters
// themselves are thread-safe).
class ViewCounters {
 public:
  ViewCounters(size_t workers, ViewCounterLimits limits = {});
  ViewCounter* worker(size_t i) { return counters_[i].get(); }
  // `site`'s views of the `days` UTC days up to and including `today`.
  ViewSummary Summarize(std::string_view site, int64_t today, int days) const;
  // Views since start per site, summed over workers.
  std::map<std::string, uint64_t> Totals() const;
  // Today's views per site, summed over workers.
  std::map<std::string, ViewSummary> Today(int64_t today) const;

 private:
  std::vector<std::unique_ptr<ViewCounter>> counters_;
};

// The N most viewed pages of `s`, most viewed first (ties by URL).
std::vector<std::pair<std::string, uint64_t>> TopPages(const ViewSummary& s, size_t n);

}  // namespace folio::edge
