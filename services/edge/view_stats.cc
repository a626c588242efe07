#include "view_stats.h"

#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/site/layout.h"

namespace folio::edge {
namespace {

std::string DayName(int64_t day) { return Iso8601Ms(day * 86'400'000).substr(0, 10); }

void Row(std::string_view a, uint64_t n, std::string* out) {
  *out += "<tr><td>";
  *out += a;
  *out += "</td><td class=\"views\">";
  *out += std::to_string(n);
  *out += "</td></tr>";
}

uint64_t ViewsSince(const ViewSummary& s, int64_t from_day) {
  uint64_t n = 0;
  for (auto it = s.days.lower_bound(from_day); it != s.days.end(); ++it) n += it->second;
  return n;
}

prometheus::ClientMetric Sample(double v, std::vector<prometheus::ClientMetric::Label> labels, bool counter) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  (counter ? m.counter.value : m.gauge.value) = v;
  return m;
}

}  // namespace

std::string AssembleStatsPage(std::string_view site_name, const ViewSummary& last30, int64_t today) {
  std::string out = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
                    "<meta name=\"robots\" content=\"noindex\"><title>Page views · ";
  AppendHtmlEscaped(site_name, &out);
  out += "</title><link rel=\"stylesheet\" href=\"" + site::StyleSheetUrl() +
         "\"></head>\n<body><main class=\"stats-page\"><h1>Page views of ";
  AppendHtmlEscaped(site_name, &out);
  out += "</h1><p>Counted by this edge from page requests (no cookie, no script; robots, previews and prefetches "
         "left out), per UTC day. Each edge counts its own readers.</p>";
  out += "<table class=\"stats-summary\"><tr><th>Period</th><th>Views</th></tr>";
  Row("Today", ViewsSince(last30, today), &out);
  Row("Last 7 days", ViewsSince(last30, today - 6), &out);
  Row("Last 30 days", last30.total, &out);
  out += "</table><h2>Top pages, last 30 days</h2><table class=\"stats-pages\"><tr><th>Page</th><th>Views</th></tr>";
  for (const auto& [url, n] : TopPages(last30, 50)) {
    std::string link;
    site::AppendLink(url, url, &link);
    Row(link, n, &out);
  }
  if (last30.other > 0) Row("(other pages, past the day's limit)", last30.other, &out);
  out += "</table><h2>Per day</h2><table class=\"stats-days\"><tr><th>Day (UTC)</th><th>Views</th></tr>";
  for (int64_t d = today; d > today - 30; --d) {
    auto it = last30.days.find(d);
    Row(DayName(d), it == last30.days.end() ? 0 : it->second, &out);
  }
  out += "</table></main></body></html>\n";
  return out;
}

std::vector<prometheus::MetricFamily> ViewMetricFamilies(const ViewCounters& views, int64_t today) {
  prometheus::MetricFamily total{"folio_edge_page_views_total",
                                 "Page views this edge counted since it started (GET navigations of HTML pages, "
                                 "robots left out), by site",
                                 prometheus::MetricType::Counter, {}};
  for (const auto& [site, n] : views.Totals()) {
    total.metric.push_back(Sample(static_cast<double>(n), {{"site", site}}, true));
  }
  prometheus::MetricFamily top{"folio_edge_page_views_top",
                               "Today's (UTC) views of each site's most viewed pages on this edge (at most 10 per site)",
                               prometheus::MetricType::Gauge, {}};
  prometheus::MetricFamily overflow{"folio_edge_page_views_overflow",
                                    "Today's (UTC) views of pages past the day's limit of distinct URLs, by site",
                                    prometheus::MetricType::Gauge, {}};
  for (const auto& [site, s] : views.Today(today)) {
    for (const auto& [url, n] : TopPages(s, kTopPages)) {
      top.metric.push_back(Sample(static_cast<double>(n), {{"site", site}, {"url", url}}, false));
    }
    overflow.metric.push_back(Sample(static_cast<double>(s.other), {{"site", site}}, false));
  }
  return {std::move(total), std::move(top), std::move(overflow)};
}

}  // namespace folio::edge
