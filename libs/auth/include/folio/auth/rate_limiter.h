// Sign-in attempts per (client address, site) and per site, in a fixed-size
// table (bounded memory whatever the clients send: the oldest entry goes
// when it is full). Token buckets: a client may try `client_burst` times at
// once, then one attempt per 60/client_per_minute s; a site takes at most
// `site_per_minute` attempts a minute from everyone (burst: the same).
// Thread-safe (one mutex; a sign-in is rare next to page reads).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace folio::auth {

struct RateLimits {
  double client_per_minute = 5;    // steady attempts per (client, site)
  double client_burst = 5;         // attempts a (client, site) may make at once
  double site_per_minute = 120;    // attempts per site from all clients together
  size_t table_entries = 4096;     // (client, site) buckets held, at most
  size_t site_entries = 1024;      // site buckets held, at most (apart: clients cannot evict them)
};

class RateLimiter {
 public:
  explicit RateLimiter(RateLimits limits = {});

  // Takes one attempt for `client` on `site` at time now_ms (any monotonic
  // milliseconds). 0 if allowed; else the seconds (>= 1) until the next
  // attempt would be, and nothing is taken.
  int64_t Take(std::string_view client, std::string_view site, int64_t now_ms);
  // (client, site) buckets held now (at most RateLimits::table_entries).
  size_t entries() const;

 private:
  struct Bucket {
    std::string key;  // "<site> <client>" or "<site>"; "" = free
    double tokens = 0;
    int64_t at_ms = 0;  // last refill; the oldest is evicted first
  };
  // The bucket for `key` in `table` (refilled to now_ms at `per_minute`, up
  // to `burst`); a fresh full one in a free slot, or the oldest's, if absent.
  static Bucket* Get(std::vector<Bucket>* table, std::string_view key, double per_minute, double burst,
                     int64_t now_ms);

  RateLimits limits_;
  mutable std::mutex mu_;
  std::vector<Bucket> clients_;  // GUARDED_BY(mu_); scanned (a sign-in is rare)
  std::vector<Bucket> sites_;    // GUARDED_BY(mu_)
};

}  // namespace folio::auth
