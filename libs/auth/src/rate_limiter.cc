#include "folio/auth/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace folio::auth {

RateLimiter::RateLimiter(RateLimits limits)
    : limits_(limits), clients_(std::max<size_t>(limits.table_entries, 1)), sites_(std::max<size_t>(limits.site_entries, 1)) {}

RateLimiter::Bucket* RateLimiter::Get(std::vector<Bucket>* table, std::string_view key, double per_minute,
                                      double burst, int64_t now_ms) {
  Bucket* oldest = nullptr;
  for (Bucket& b : *table) {
    if (b.key == key) {
      if (now_ms > b.at_ms) {
        b.tokens = std::min(burst, b.tokens + per_minute * static_cast<double>(now_ms - b.at_ms) / 60'000.0);
        b.at_ms = now_ms;
      }
      return &b;
    }
    if (b.key.empty()) {
      if (oldest == nullptr || !oldest->key.empty()) oldest = &b;
    } else if (oldest == nullptr || (!oldest->key.empty() && b.at_ms < oldest->at_ms)) {
      oldest = &b;
    }
  }
  oldest->key.assign(key);
  oldest->tokens = burst;
  oldest->at_ms = now_ms;
  return oldest;
}

int64_t RateLimiter::Take(std::string_view client, std::string_view site, int64_t now_ms) {
  std::string key;
  key.reserve(site.size() + 1 + client.size());
  key.append(site).append(" ").append(client);
  std::lock_guard<std::mutex> lock(mu_);
  Bucket* c = Get(&clients_, key, limits_.client_per_minute, limits_.client_burst, now_ms);
  Bucket* s = Get(&sites_, site, limits_.site_per_minute, limits_.site_per_minute, now_ms);
  auto wait_s = [](const Bucket& b, double per_minute) {
    double need_ms = (1.0 - b.tokens) * 60'000.0 / std::max(per_minute, 1e-9);
    return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(need_ms / 1000.0)));
  };
  if (c->tokens < 1.0) return wait_s(*c, limits_.client_per_minute);
  if (s->tokens < 1.0) return wait_s(*s, limits_.site_per_minute);
  c->tokens -= 1.0;
  s->tokens -= 1.0;
  return 0;
}

size_t RateLimiter::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<size_t>(std::count_if(clients_.begin(), clients_.end(), [](const Bucket& b) { return !b.key.empty(); }));
}

}  // namespace folio::auth
