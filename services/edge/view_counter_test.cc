// The edge's page-view counter (issue 29): what counts as a view, the
// bounds (URLs per day, days kept), the UTC day rollover, merging workers,
// the metrics' bounded series and the /_/stats page.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "view_counter.h"
#include "view_stats.h"

using namespace folio;
using namespace folio::edge;

namespace {

http::Request Get(std::vector<http::Header>* headers, std::string_view method = "GET", bool head = false) {
  http::Request req;
  req.method = method;
  req.is_head = head;
  req.path = "/a";
  req.headers = *headers;
  return req;
}

double Value(const std::vector<prometheus::MetricFamily>& fams, std::string_view name,
             const std::vector<std::pair<std::string, std::string>>& labels) {
  for (const auto& f : fams) {
    if (f.name != name) continue;
    for (const auto& m : f.metric) {
      bool all = m.label.size() == labels.size();
      for (size_t i = 0; all && i < labels.size(); ++i) {
        all = m.label[i].name == labels[i].first && m.label[i].value == labels[i].second;
      }
      if (all) return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return -1;
}

}  // namespace

TEST_CASE("views: robots, HEAD, previews and prefetches are not views") {
  std::vector<http::Header> none;
  CHECK(IsCountedView(Get(&none)));
  CHECK(!IsCountedView(Get(&none, "GET", /*head=*/true)));
  CHECK(!IsCountedView(Get(&none, "POST")));
  std::vector<http::Header> doc = {{"Sec-Fetch-Dest", "document"}, {"User-Agent", "Mozilla/5.0 Firefox/140"}};
  CHECK(IsCountedView(Get(&doc)));
  std::vector<http::Header> fetch = {{"Sec-Fetch-Dest", "empty"}};
  CHECK(!IsCountedView(Get(&fetch)));
  std::vector<http::Header> prefetch = {{"Sec-Purpose", "prefetch;prerender"}};
  CHECK(!IsCountedView(Get(&prefetch)));
  std::vector<http::Header> old_prefetch = {{"Purpose", "prefetch"}};
  CHECK(!IsCountedView(Get(&old_prefetch)));
  for (std::string_view ua : {"Mozilla/5.0 (compatible; Googlebot/2.1)", "Baiduspider", "SomeCRAWLER 1.0", "bingbot"}) {
    INFO(ua);
    CHECK(IsBotUserAgent(ua));
    std::vector<http::Header> bot = {{"User-Agent", ua}};
    CHECK(!IsCountedView(Get(&bot)));
  }
  CHECK(!IsBotUserAgent("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131 Safari/537.36"));
  CHECK(!IsBotUserAgent(""));
}

TEST_CASE("views: counted per site, URL and UTC day; merged over workers") {
  CHECK(UtcDay(0) == 0);
  CHECK(UtcDay(86'400'000 - 1) == 0);
  CHECK(UtcDay(86'400'000) == 1);
  ViewCounters views(2);
  const int64_t today = 20'000;
  views.worker(0)->Count("a", "/x", today - 1);
  views.worker(0)->Count("a", "/x", today);
  views.worker(1)->Count("a", "/x", today);
  views.worker(1)->Count("a", "/y", today);
  views.worker(0)->Count("b", "/x", today);
  ViewSummary s = views.Summarize("a", today, 30);
  CHECK(s.total == 4);
  CHECK(s.pages["/x"] == 3);
  CHECK(s.pages["/y"] == 1);
  CHECK(s.days[today] == 3);
  CHECK(s.days[today - 1] == 1);
  CHECK(views.Summarize("a", today, 1).total == 3);  // today only
  CHECK(views.Summarize("b", today, 30).total == 1);  // another site's are its own
  CHECK(views.Summarize("c", today, 30).total == 0);
  auto top = TopPages(s, 1);
  REQUIRE(top.size() == 1);
  CHECK(top[0] == std::make_pair(std::string("/x"), uint64_t{3}));
  // A clock stepped back counts into the newest day, never reopens an old one.
  views.worker(0)->Count("a", "/z", today - 5);
  CHECK(views.Summarize("a", today, 1).pages["/z"] == 1);
}

TEST_CASE("views: at most max_urls URLs a day, the rest into other; days_kept days") {
  ViewCounter c(ViewCounterLimits{3, 31});
  for (std::string_view u : {"/1", "/2", "/3", "/4", "/5", "/1"}) c.Count("s", u, 100);
  ViewSummary s;
  c.AddTo("s", 0, 1000, &s);
  CHECK(s.total == 6);
  CHECK(s.pages.size() == 3);
  CHECK(s.pages["/1"] == 2);
  CHECK(s.other == 2);
  // A new day starts with a fresh set of URLs.
  c.Count("s", "/4", 101);
  ViewSummary next;
  c.AddTo("s", 101, 101, &next);
  CHECK(next.pages["/4"] == 1);
  CHECK(next.other == 0);
  // 31 days later day 100 is gone; day 101 still kept; the total since start stays.
  c.Count("s", "/1", 131);
  ViewSummary all;
  c.AddTo("s", 0, 1000, &all);
  CHECK(all.days.count(100) == 0);
  CHECK(all.days.count(101) == 1);
  CHECK(all.total == 2);
  std::map<std::string, uint64_t> totals;
  c.AddTotals(&totals);
  CHECK(totals["s"] == 8);
}

TEST_CASE("views: metrics have one total per site and at most 10 top pages per site") {
  ViewCounters views(1);
  const int64_t today = 20'000;
  for (int i = 0; i < 30; ++i) {
    for (int k = 0; k <= i; ++k) views.worker(0)->Count("a", "/p" + std::to_string(i), today);
  }
  views.worker(0)->Count("a", "/old", today - 1);
  views.worker(0)->Count("b", "/x", today);
  auto fams = ViewMetricFamilies(views, today);
  CHECK(Value(fams, "folio_edge_page_views_total", {{"site", "a"}}) == 30 * 31 / 2 + 1);
  CHECK(Value(fams, "folio_edge_page_views_total", {{"site", "b"}}) == 1);
  size_t top_a = 0;
  for (const auto& f : fams) {
    if (f.name != "folio_edge_page_views_top") continue;
    for (const auto& m : f.metric) top_a += m.label[0].value == "a";
  }
  CHECK(top_a == kTopPages);
  CHECK(Value(fams, "folio_edge_page_views_top", {{"site", "a"}, {"url", "/p29"}}) == 30);
  CHECK(Value(fams, "folio_edge_page_views_top", {{"site", "a"}, {"url", "/p20"}}) == 21);
  CHECK(Value(fams, "folio_edge_page_views_top", {{"site", "a"}, {"url", "/p19"}}) == -1);  // not in the top 10
  CHECK(Value(fams, "folio_edge_page_views_overflow", {{"site", "a"}}) == 0);
}

TEST_CASE("views: the stats page shows 7 and 30 days, top pages and days, escaped") {
  ViewCounters views(1);
  const int64_t today = 20'000;  // 2024-10-04
  views.worker(0)->Count("a", "/<b>", today - 10);
  views.worker(0)->Count("a", "/y", today - 3);
  views.worker(0)->Count("a", "/<b>", today);
  std::string html = AssembleStatsPage("My <notes>", views.Summarize("a", today, 30), today);
  CHECK(html.find("My &lt;notes&gt;") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<tr><td>Last 7 days</td><td class=\"views\">2</td></tr>") != std::string::npos);
  CHECK(html.find("<tr><td>Last 30 days</td><td class=\"views\">3</td></tr>") != std::string::npos);
  CHECK(html.find("<tr><td>2024-10-04</td><td class=\"views\">1</td></tr>") != std::string::npos);
  CHECK(html.find("<tr><td>2024-09-24</td><td class=\"views\">1</td></tr>") != std::string::npos);
  CHECK(html.find("&lt;b&gt;</a></td><td class=\"views\">2</td>") != std::string::npos);
}
