// Who may call ingest's API, decided from the headers alone (issue 22): the
// bearer token must select a site (Sites::Authenticate) before a byte of the
// request's body is read, so an unknown caller's upload is never buffered.
// SiteTokenCheck is the http::AdmissionCheck of every authenticated route.
//
// A token no site knows waits, with its connection reading nothing, for one
// reload of the sites table on the writer loop (ReloadGate: at most one
// reload per second, shared by every request waiting, at most 256 waiting),
// then gets 401 if it still selects no site. So a site added by
// `folio-ingest site add` works at once, and a flood of wrong tokens costs a
// reload a second and no body memory.
//
// Ownership: the ReloadGate borrows both loops and Sites, which must outlive
// it; the checks share it. Threading: HTTP loop only (the reload itself runs
// on the writer loop and posts back).
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "folio/http/loop.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "sites.h"

namespace folio::ingest {

inline constexpr std::string_view kUnauthenticated = "missing or wrong bearer token (Authorization: Bearer TOKEN)";

// 401 unauthenticated (kUnauthenticated) with WWW-Authenticate: Bearer.
http::Response UnauthenticatedResponse();

class ReloadGate {
 public:
  ReloadGate(http::Loop* http_loop, http::Loop* writer_loop, Sites* sites)
      : http_loop_(http_loop), writer_loop_(writer_loop), sites_(sites) {}
  ReloadGate(const ReloadGate&) = delete;
  ReloadGate& operator=(const ReloadGate&) = delete;

  // Whether one more request may wait.
  bool Admits() const { return waiting_.size() + in_flight_ < kMaxWaiters; }
  // Runs `retry` on the HTTP loop once a reload of the sites table that
  // started after this call has finished (failed reloads are logged).
  // REQUIRES: Admits().
  void Wait(std::function<void()> retry);

 private:
  static constexpr size_t kMaxWaiters = 256;
  static constexpr uint64_t kReloadIntervalMs = 1000;

  void Schedule();
  void OnTimer();
  void OnReloaded(std::vector<std::function<void()>>* batch);

  http::Loop* http_loop_;
  http::Loop* writer_loop_;
  Sites* sites_;
  std::vector<std::function<void()>> waiting_;
  size_t in_flight_ = 0;  // waiters of the reload now running
  bool busy_ = false;     // a reload is scheduled or running
  bool reloaded_ = false;
  uint64_t last_reload_ms_ = 0;
};

// Admits a request whose token selects a site, at once or after one reload
// of the sites table; refuses any other with UnauthenticatedResponse(),
// counting it on `rejected` (may be null). REQUIRES: gate and sites outlive
// the routes that use the check.
http::AdmissionCheck SiteTokenCheck(std::shared_ptr<ReloadGate> gate, Sites* sites, metrics::Counter* rejected);

}  // namespace folio::ingest
