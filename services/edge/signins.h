// Signins: what every worker of an edge shares to sign readers in to private
// sites (issue 29): the sign-in rate limiter, the small pool that checks
// passwords off the loops (Argon2id is tens of ms of CPU: at most
// SigninOptions::max_verifying run at once, more are refused), the options
// and the folio_edge_signin_total counters. The workers' own side (the
// session check, the sign-in page, POST) is in signin_handler.cc.
// Owner: main, which destroys it after the loops stop (its pool posts to
// them). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "folio/auth/rate_limiter.h"
#include "folio/core/thread_pool.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "site_table.h"

namespace folio::edge {

struct SigninOptions {
  // --secure-cookies (default false): every session cookie is Secure. Off,
  // a cookie is Secure when the request says X-Forwarded-Proto: https (the
  // edge is plain HTTP behind a TLS proxy; a client that forges the header
  // only makes its own cookie stricter).
  bool secure_cookies = false;
  // --trusted-proxies (default none): peer addresses whose X-Forwarded-For
  // (its last address) names the client for rate limiting; anyone else's
  // header is ignored and the peer address counts.
  std::vector<std::string> trusted_proxies;
  auth::RateLimits limits;   // 5/min per (client, site), burst 5; 120/min per site; 4096 entries
  size_t max_verifying = 2;  // password checks at once (each one core, 64 MiB); more: 503
};

enum class SigninResult { kOk, kWrong, kLimited };

class Signins {
 public:
  Signins(SigninOptions options, metrics::Registry* registry);

  // Checks `password` for reader `name` against `auth`'s readers on the pool
  // and calls `done` there with the reader it matched (a copy) or nullopt.
  // False, and nothing runs, if max_verifying checks are running.
  bool StartVerify(std::shared_ptr<const SiteAuth> auth, std::string name, std::string password,
                   std::function<void(std::optional<bus::SiteReader>)> done);
  // One sign-in attempt of `req`'s client on `site`: 0 if allowed, else
  // the seconds to wait (RateLimiter::Take).
  int64_t TakeAttempt(const http::Request& req, std::string_view site);
  // Whether a cookie set in answer to `req` is Secure.
  bool SecureFor(const http::Request& req) const;
  void Count(SigninResult r);

 private:
  std::string_view ClientOf(const http::Request& req) const;

  SigninOptions options_;
  auth::RateLimiter limiter_;
  metrics::Counter* ok_;
  metrics::Counter* wrong_;
  metrics::Counter* limited_;
  std::atomic<size_t> verifying_{0};
  ThreadPool pool_;  // last: joined first
};

}  // namespace folio::edge
