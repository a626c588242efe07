#include "site_check.h"

#include <string>
#include <utility>

#include "folio/core/log.h"

namespace folio::ingest {

http::Response UnauthenticatedResponse() {
  http::Response r = http::Response::Error(Status::Unauthenticated(std::string(kUnauthenticated)));
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

void ReloadGate::Wait(std::function<void()> retry) {
  waiting_.push_back(std::move(retry));
  if (!busy_) Schedule();
}

void ReloadGate::Schedule() {
  busy_ = true;
  uint64_t now = http_loop_->NowMs();
  uint64_t next = last_reload_ms_ + kReloadIntervalMs;
  http_loop_->After(reloaded_ && now < next ? next - now : 0, [this] { OnTimer(); });
}

void ReloadGate::OnTimer() {
  reloaded_ = true;
  last_reload_ms_ = http_loop_->NowMs();
  auto batch = std::make_shared<std::vector<std::function<void()>>>(std::move(waiting_));
  waiting_.clear();
  in_flight_ = batch->size();
  writer_loop_->Post([this, batch] {
    if (Status s = sites_->Reload(); !s.ok()) log::Warn("sites reload failed", {{"error", s.message()}});
    http_loop_->Post([this, batch] { OnReloaded(batch.get()); });
  });
}

void ReloadGate::OnReloaded(std::vector<std::function<void()>>* batch) {
  in_flight_ = 0;
  for (auto& retry : *batch) retry();
  busy_ = false;
  if (!waiting_.empty()) Schedule();
}

namespace {

void Refuse(http::AdmissionGate gate, metrics::Counter* rejected) {
  if (rejected != nullptr) rejected->Increment();
  gate.Refuse(UnauthenticatedResponse());
}

}  // namespace

http::AdmissionCheck SiteTokenCheck(std::shared_ptr<ReloadGate> gate, Sites* sites, metrics::Counter* rejected) {
  return [gate = std::move(gate), sites, rejected](const http::Request& req, http::AdmissionGate verdict) {
    std::string_view token = req.BearerToken();
    if (!sites->Authenticate(token).empty()) return verdict.Admit();
    if (token.empty() || !gate->Admits()) return Refuse(std::move(verdict), rejected);
    // The gate is move-only and the retry a std::function: share it.
    auto held = std::make_shared<http::AdmissionGate>(std::move(verdict));
    gate->Wait([sites, rejected, held, token = std::string(token)] {
      if (sites->Authenticate(token).empty()) return Refuse(std::move(*held), rejected);
      held->Admit();
    });
  };
}

}  // namespace folio::ingest
