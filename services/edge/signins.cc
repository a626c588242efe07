#include "signins.h"

#include <chrono>

#include "folio/auth/password.h"
#include "folio/core/text.h"

namespace folio::edge {

Signins::Signins(SigninOptions options, metrics::Registry* registry)
    : options_(std::move(options)),
      limiter_(options_.limits),
      pool_(std::max<size_t>(options_.max_verifying, 1)) {
  auto counter = [registry](const char* result) {
    return &registry->NewCounter("folio_edge_signin_total", "Sign-in attempts on private sites, by result",
                                 {{"result", result}});
  };
  ok_ = counter("ok");
  wrong_ = counter("wrong");
  limited_ = counter("limited");
}

bool Signins::StartVerify(std::shared_ptr<const SiteAuth> auth, std::string name, std::string password,
                          std::function<void(std::optional<bus::SiteReader>)> done) {
  if (verifying_.fetch_add(1) >= options_.max_verifying) {
    verifying_.fetch_sub(1);
    return false;
  }
  pool_.Submit([this, auth = std::move(auth), name = std::move(name), password = std::move(password),
                done = std::move(done)]() mutable {
    const bus::SiteReader* r = auth::VerifyReader(auth->readers, name, password);
    std::optional<bus::SiteReader> found;
    if (r != nullptr) found = *r;
    verifying_.fetch_sub(1);
    done(std::move(found));
  });
  return true;
}

std::string_view Signins::ClientOf(const http::Request& req) const {
  for (const std::string& proxy : options_.trusted_proxies) {
    if (proxy != req.peer) continue;
    std::string_view xff = req.GetHeader("x-forwarded-for");
    size_t comma = xff.rfind(',');
    std::string_view last = TrimAsciiSpace(comma == std::string_view::npos ? xff : xff.substr(comma + 1));
    if (!last.empty() && last.size() <= 64) return last;
  }
  return req.peer;
}

int64_t Signins::TakeAttempt(const http::Request& req, std::string_view site) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count();
  return limiter_.Take(ClientOf(req), site, now_ms);
}

bool Signins::SecureFor(const http::Request& req) const {
  return options_.secure_cookies || EqualsIgnoreAsciiCase(TrimAsciiSpace(req.GetHeader("x-forwarded-proto")), "https");
}

void Signins::Count(SigninResult r) {
  (r == SigninResult::kOk ? ok_ : r == SigninResult::kWrong ? wrong_ : limited_)->Increment();
}

}  // namespace folio::edge
