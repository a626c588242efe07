// What the edge shows of its ViewCounters (view_counter.h): the /_/stats
// page a site's owner reads, and the Prometheus families /metrics exports,
// with bounded labels (one series per site, plus the top kTopPages pages of
// each site today): never one series per URL.
// Pure functions of a snapshot; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

#include "view_counter.h"

namespace folio::edge {

inline constexpr std::string_view kStatsUrl = "/_/stats";
inline constexpr size_t kTopPages = 10;  // series of folio_edge_page_views_top per site
// The stats page's policy: no script at all, the site's stylesheet.
inline constexpr std::string_view kStatsPageCsp =
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'none'; base-uri 'none'; "
    "frame-ancestors 'none'";

// The /_/stats page of `site_name`: views of the last 7 and 30 days, the
// most viewed pages of the last 30, views per day. `last30` is
// ViewCounters::Summarize(site, today, 30).
std::string AssembleStatsPage(std::string_view site_name, const ViewSummary& last30, int64_t today);

// folio_edge_page_views_total{site} (counter: views since the edge started),
// folio_edge_page_views_top{site,url} (gauge: today's views of the site's
// kTopPages most viewed pages) and folio_edge_page_views_overflow{site}
// (gauge: today's views counted into "other" because the day's URL cap was
// reached). Today is the UTC day `today`.
std::vector<prometheus::MetricFamily> ViewMetricFamilies(const ViewCounters& views, int64_t today);

}  // namespace folio::edge
