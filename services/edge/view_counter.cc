#include "view_counter.h"

#include <algorithm>

#include "folio/core/text.h"

namespace folio::edge {
namespace {

// Case-insensitive substring search without a copy (User-Agent is short).
bool ContainsIgnoreCase(std::string_view hay, std::string_view lower_needle) {
  if (lower_needle.size() > hay.size()) return false;
  for (size_t i = 0; i + lower_needle.size() <= hay.size(); ++i) {
    size_t j = 0;
    while (j < lower_needle.size()) {
      char c = hay[i + j];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != lower_needle[j]) break;
      ++j;
    }
    if (j == lower_needle.size()) return true;
  }
  return false;
}

}  // namespace

bool IsBotUserAgent(std::string_view ua) {
  return ContainsIgnoreCase(ua, "bot") || ContainsIgnoreCase(ua, "crawler") || ContainsIgnoreCase(ua, "spider");
}

bool IsCountedView(const http::Request& req) {
  if (req.is_head || req.method != "GET") return false;
  std::string_view dest = req.GetHeader("sec-fetch-dest");
  if (!dest.empty() && !EqualsIgnoreAsciiCase(dest, "document")) return false;  // fetch(): a preview or prefetch
  if (ContainsIgnoreCase(req.GetHeader("sec-purpose"), "prefetch") ||
      ContainsIgnoreCase(req.GetHeader("purpose"), "prefetch")) {
    return false;
  }
  return !IsBotUserAgent(req.GetHeader("user-agent"));
}

ViewCounter::Day& ViewCounter::DayOf(Site* s, int64_t day) {
  if (!s->days.empty() && day <= s->days.back().day) return s->days.back();
  s->days.emplace_back();
  s->days.back().day = day;
  while (s->days.size() > 1 && s->days.front().day <= day - limits_.days_kept) s->days.pop_front();
  return s->days.back();
}

void ViewCounter::Count(std::string_view site, std::string_view url, int64_t day) {
  std::lock_guard lock(mu_);
  auto it = sites_.find(site);
  if (it == sites_.end()) it = sites_.emplace(std::string(site), Site{}).first;
  Site& s = it->second;
  Day& d = DayOf(&s, day);
  ++s.all_time;
  ++d.total;
  auto at = d.urls.find(url);
  if (at != d.urls.end()) {
    ++at->second;
  } else if (d.urls.size() < limits_.max_urls) {
    d.urls.emplace(std::string(url), 1);
  } else {
    ++d.other;
  }
}

void ViewCounter::AddTo(std::string_view site, int64_t from_day, int64_t to_day, ViewSummary* out) const {
  std::lock_guard lock(mu_);
  auto it = sites_.find(site);
  if (it == sites_.end()) return;
  for (const Day& d : it->second.days) {
    if (d.day < from_day || d.day > to_day) continue;
    out->days[d.day] += d.total;
    out->other += d.other;
    out->total += d.total;
    for (const auto& [url, n] : d.urls) out->pages[url] += n;
  }
}

void ViewCounter::AddTotals(std::map<std::string, uint64_t>* out) const {
  std::lock_guard lock(mu_);
  for (const auto& [site, s] : sites_) (*out)[site] += s.all_time;
}

void ViewCounter::AddDay(int64_t day, std::map<std::string, ViewSummary>* out) const {
  std::lock_guard lock(mu_);
  for (const auto& [site, s] : sites_) {
    if (s.days.empty() || s.days.back().day != day) continue;
    const Day& d = s.days.back();
    ViewSummary& v = (*out)[site];
    v.days[day] += d.total;
    v.other += d.other;
    v.total += d.total;
    for (const auto& [url, n] : d.urls) v.pages[url] += n;
  }
}

ViewCounters::ViewCounters(size_t workers, ViewCounterLimits limits) {
  for (size_t i = 0; i < workers; ++i) counters_.push_back(std::make_unique<ViewCounter>(limits));
}

ViewSummary ViewCounters::Summarize(std::string_view site, int64_t today, int days) const {
  ViewSummary out;
  for (const auto& c : counters_) c->AddTo(site, today - days + 1, today, &out);
  return out;
}

std::map<std::string, uint64_t> ViewCounters::Totals() const {
  std::map<std::string, uint64_t> out;
  for (const auto& c : counters_) c->AddTotals(&out);
  return out;
}

std::map<std::string, ViewSummary> ViewCounters::Today(int64_t today) const {
  std::map<std::string, ViewSummary> out;
  for (const auto& c : counters_) c->AddDay(today, &out);
  return out;
}

std::vector<std::pair<std::string, uint64_t>> TopPages(const ViewSummary& s, size_t n) {
  std::vector<std::pair<std::string, uint64_t>> all(s.pages.begin(), s.pages.end());
  auto more = [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; };
  size_t k = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(), more);
  all.resize(k);
  return all;
}

}  // namespace folio::edge
