#include "blob_census.h"

#include <chrono>
#include <utility>

#include "folio/core/log.h"

namespace folio::ingest {
namespace {

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

BlobCensus::BlobCensus(StorageAccess storage, BlobCensusOptions options)
    : client_(StorageClientFor(storage)), options_(options) {}

void BlobCensus::Check(std::vector<std::string> sha256, Done done) {
  pool_.Submit([this, sha256 = std::move(sha256), done = std::move(done)] { done(Missing(sha256)); });
}

Status BlobCensus::Refresh(bool force) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!force && listed_at_ms_ >= 0 && SteadyMs() - listed_at_ms_ < options_.max_age_ms) return Status::Ok();
  }
  const int64_t started = SteadyMs();
  auto all = client_.ListAllBlobs(options_.timeout_ms);
  if (!all.ok()) return all.status();
  std::unordered_set<std::string> held(std::make_move_iterator(all->begin()), std::make_move_iterator(all->end()));
  std::lock_guard<std::mutex> lock(mu_);
  held_ = std::move(held);
  listed_at_ms_ = started;
  return Status::Ok();
}

std::vector<size_t> BlobCensus::Unlisted(const std::vector<std::string>& sha256, int64_t* listed_at_ms) {
  std::vector<size_t> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < sha256.size(); ++i) {
    if (!held_.count(sha256[i])) out.push_back(i);
  }
  *listed_at_ms = listed_at_ms_;
  return out;
}

Result<std::vector<size_t>> BlobCensus::Missing(const std::vector<std::string>& sha256) {
  // The hashes were read before this call, and a blob is in storage before
  // its attachment is committed: a listing begun after now misses nothing.
  const int64_t asked = SteadyMs();
  if (sha256.empty()) return std::vector<size_t>{};
  if (Status s = Refresh(/*force=*/false); !s.ok()) return s;
  int64_t listed_at = 0;
  std::vector<size_t> unlisted = Unlisted(sha256, &listed_at);
  if (unlisted.empty() || listed_at >= asked) return unlisted;
  if (unlisted.size() > options_.max_heads) {  // many lost (storage wiped?): one new listing beats many HEADs
    if (Status s = Refresh(/*force=*/true); !s.ok()) return s;
    return Unlisted(sha256, &listed_at);
  }
  std::vector<size_t> missing;
  for (size_t i : unlisted) {
    // Uploaded after the listing? Then it is there; only a 404 is a loss.
    auto r = client_.HeadBlob(sha256[i], options_.timeout_ms);
    if (r.ok() && r->status == 200) {
      std::lock_guard<std::mutex> lock(mu_);
      held_.insert(sha256[i]);
    } else if (r.ok() && r->status == 404) {
      missing.push_back(i);
    } else {
      return client_.Error("checking attachment " + sha256[i], r);
    }
  }
  return missing;
}

}  // namespace folio::ingest
