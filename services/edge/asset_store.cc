#include "asset_store.h"

#include <utility>

#include "folio/core/log.h"
#include "folio/http/client.h"

namespace folio::edge {
namespace {

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The first "sha256":"<64 hex>" of a /blobs listing, or "" if none.
std::string FirstBlob(std::string_view listing) {
  constexpr std::string_view kKey = "\"sha256\":\"";
  size_t at = listing.find(kKey);
  if (at == std::string_view::npos || listing.size() < at + kKey.size() + 64) return "";
  std::string_view hex = listing.substr(at + kKey.size(), 64);
  return IsLowerHex(hex) ? std::string(hex) : "";
}

Status StorageProblem(const Result<http::ClientResponse>& r) {
  return Status::Unavailable(r.ok() ? "storage answered HTTP " + std::to_string(r->status) : r.status().message());
}

}  // namespace

bool AssetStore::IsHash16(std::string_view s) { return s.size() == 16 && IsLowerHex(s); }

AssetStore::AssetStore(AssetOptions options, metrics::Registry* registry)
    : options_(std::move(options)),
      hits_(&registry->NewCounter("folio_edge_asset_hits_total", "Asset requests answered from the asset cache")),
      misses_(&registry->NewCounter("folio_edge_asset_misses_total", "Asset requests that needed a fetch from storage")),
      fetch_errors_(&registry->NewCounter("folio_edge_asset_fetch_errors_total",
                                          "Asset fetches from storage that failed (not counting 404)")),
      cached_bytes_(&registry->NewGauge("folio_edge_asset_cache_bytes", "Bytes of asset bodies held in the cache")),
      pool_(options_.threads == 0 ? 1 : options_.threads) {}

AssetStore::~AssetStore() = default;

void AssetStore::Get(const std::string& hash16, Done done) {
  std::shared_ptr<const Asset> hit;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = by_hash16_.find(hash16); it != by_hash16_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      hit = *it->second;
    } else {
      misses_->Increment();
      auto [waiting, first] = in_flight_.try_emplace(hash16);
      waiting->second.push_back(std::move(done));
      if (!first) return;  // the fetch under way answers this one too
    }
  }
  if (hit) {
    hits_->Increment();
    done(std::move(hit));
    return;
  }
  pool_.Submit([this, hash16] {
    Result<std::shared_ptr<const Asset>> r = Fetch(hash16);
    OnFetched(hash16, std::move(r));
  });
}

Result<std::shared_ptr<const Asset>> AssetStore::Fetch(const std::string& hash16) {
  http::ClientRequest list;
  list.url = options_.storage_url + "/blobs?prefix=" + hash16 + "&limit=1";
  list.timeout_ms = options_.timeout_ms;
  auto listed = http::Fetch(list);
  if (!listed.ok() || listed->status != 200) return StorageProblem(listed);
  std::string full = FirstBlob(listed->body);
  if (full.empty()) return Status::NotFound("no blob " + hash16);
  http::ClientRequest get;
  get.url = options_.storage_url + "/blobs/sha256/" + full;
  get.timeout_ms = options_.timeout_ms;
  auto got = http::Fetch(get);
  if (got.ok() && got->status == 404) return Status::NotFound("no blob " + full);
  if (!got.ok() || got->status != 200) return StorageProblem(got);
  auto a = std::make_shared<Asset>();
  a->sha256 = std::move(full);
  a->content_type = got->Header("content-type");
  if (a->content_type.empty()) a->content_type = "application/octet-stream";
  a->body = std::move(got->body);
  return std::shared_ptr<const Asset>(std::move(a));
}

void AssetStore::OnFetched(const std::string& hash16, Result<std::shared_ptr<const Asset>> r) {
  if (!r.ok() && r.status().code() != Code::kNotFound) {
    fetch_errors_->Increment();
    log::Warn("asset fetch failed", {{"hash", hash16}, {"error", r.status().message()}});
  }
  std::vector<Done> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = in_flight_.find(hash16);
    if (it != in_flight_.end()) {
      waiters = std::move(it->second);
      in_flight_.erase(it);
    }
    // Objects over 1/8 of the budget are served to their waiters, not kept.
    if (r.ok() && (*r)->body.size() <= options_.cache_bytes / 8 && !by_hash16_.count(hash16)) {
      lru_.push_front(*r);
      by_hash16_[hash16] = lru_.begin();
      bytes_ += (*r)->body.size();
      while (bytes_ > options_.cache_bytes && !lru_.empty()) {
        const std::string& evict = lru_.back()->sha256;
        bytes_ -= lru_.back()->body.size();
        by_hash16_.erase(evict.substr(0, 16));
        lru_.pop_back();
      }
      cached_bytes_->Set(static_cast<double>(bytes_));
    }
  }
  for (Done& d : waiters) d(r);
}

}  // namespace folio::edge
