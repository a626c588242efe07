#include "storage_probe.h"

#include <chrono>
#include <utility>

#include "folio/core/log.h"
#include "folio/http/client.h"

namespace folio::ingest {
namespace {

constexpr auto kInterval = std::chrono::seconds(2);
constexpr int64_t kTimeoutMs = 1000;

}  // namespace

StorageProbe::StorageProbe(StorageAccess storage)
    : url_(std::move(storage.url)),
      token_(std::move(storage.token)),
      up_(url_.empty()),
      reason_(url_.empty() ? "" : "storage at " + url_ + " not checked yet") {}

StorageProbe::~StorageProbe() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StorageProbe::Start() {
  if (!url_.empty()) thread_ = std::thread([this] { Run(); });
}

std::string StorageProbe::Degraded() const {
  std::lock_guard<std::mutex> l(mu_);
  if (reason_.empty()) return "";
  return reason_ +
         ": pushes with attachments fail (503, retried by the CLI) until it answers; pushes without"
         " attachments, manifests and the published site are unaffected";
}

void StorageProbe::Run() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    l.unlock();
    Record(Probe());
    l.lock();
    wake_.wait_for(l, kInterval, [this] { return stop_; });
  }
}

std::string StorageProbe::Probe() const {
  // Every replica of a list in turn (issue 23): degraded only when none answers.
  Result<http::ClientResponse> r = StorageClientFor({url_, token_}).Get("/blobs?limit=1", kTimeoutMs);
  const std::string at = "storage at " + url_;
  if (!r.ok()) return at + " unreachable (" + r.status().message() + ")";
  if (r->status == 401 || r->status == 403) {
    return at + " refuses ingest's --storage-token (HTTP " + std::to_string(r->status) + ")";
  }
  if (r->status != 200) return at + " is failing (HTTP " + std::to_string(r->status) + " to a listing)";
  return "";
}

// Logs the first outcome if it is bad, then each change.
void StorageProbe::Record(std::string why) {
  const bool up = why.empty();
  const bool changed = up_.exchange(up) != up || (first_ && !up);
  first_ = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    reason_ = why;
  }
  if (!changed) return;
  if (up) {
    log::Info("storage answers again: ingest is no longer degraded", {{"storage", url_}});
  } else {
    log::Warn("storage missing: ingest is ready but degraded (pushes with attachments fail)", {{"why", why}});
  }
}

}  // namespace folio::ingest
