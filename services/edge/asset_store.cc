#include "asset_store.h"

#include <charconv>
#include <utility>

#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/core/text.h"

namespace folio::edge {
namespace {

// The full hash a blob's ETag names ("\"<64 hex>\""), or "" if it names none.
std::string HashOfETag(std::string_view etag) {
  if (etag.size() != 66 || etag.front() != '"' || etag.back() != '"') return "";
  std::string_view hex = etag.substr(1, 64);
  return IsLowerHex(hex) ? std::string(hex) : "";
}

constexpr size_t kMaxStreamedMeta = 4096;
// How much of an untyped blob is looked at to decide whether it is text.
constexpr size_t kSniffBytes = 4096;

// Untyped bytes (storage holds application/octet-stream for names it has no
// type for, e.g. .js, .css and .json attachments and the bundled mermaid)
// that are text: no NUL and no other control byte but tab, CR, LF, FF, ESC.
bool LooksLikeText(std::string_view body) {
  for (unsigned char c : body.substr(0, kSniffBytes)) {
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b) return false;
  }
  return !body.empty();
}

}  // namespace

bool AssetStore::IsHash16(std::string_view s) { return s.size() == 16 && IsLowerHex(s); }

bool AssetStore::CompressibleType(std::string_view content_type) {
  std::string t = AsciiLower(TrimAsciiSpace(content_type.substr(0, content_type.find(';'))));
  if (t.starts_with("text/")) return true;
  for (std::string_view known : {"application/javascript", "application/x-javascript", "application/ecmascript",
                                 "application/json", "application/xml", "application/xhtml+xml", "image/svg+xml",
                                 "application/x-ndjson", "application/toml", "application/yaml"}) {
    if (t == known) return true;
  }
  return t.ends_with("+json") || t.ends_with("+xml");
}

void AssetStore::Compress(Asset* a) {
  const std::string_view type = a->content_type;
  const bool untyped = type.empty() || type.starts_with("application/octet-stream");
  if (!CompressibleType(type) && !(untyped && LooksLikeText(a->body))) return;
  std::string gz = GzipCompress(a->body);
  if (gz.size() <= a->body.size() / 10 * 9) a->body_gzip = std::move(gz);
}

AssetStore::AssetStore(AssetOptions options, metrics::Registry* registry)
    : options_(std::move(options)),
      client_({options_.storage_url, options_.storage_token}, storage_client::TokenRole::kRead,
              storage_client::FaultPolicy::kClassify),
      hits_(&registry->NewCounter("folio_edge_asset_hits_total", "Asset requests answered from the asset cache")),
      misses_(&registry->NewCounter("folio_edge_asset_misses_total", "Asset requests that needed a fetch from storage")),
      fetch_errors_(&registry->NewCounter("folio_edge_asset_fetch_errors_total",
                                          "Asset fetches from storage that failed (not counting 404)")),
      cached_bytes_(&registry->NewGauge("folio_edge_asset_cache_bytes", "Bytes of asset bodies held in the cache")),
      range_reads_(&registry->NewCounter("folio_edge_asset_range_reads_total",
                                         "Ranged reads from storage for assets too large to keep")),
      pool_(options_.threads == 0 ? 1 : options_.threads) {}

AssetStore::~AssetStore() = default;

void AssetStore::Get(const std::string& hash16, Done done) {
  std::shared_ptr<const Asset> hit;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = by_hash16_.find(hash16); it != by_hash16_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      hit = *it->second;
    } else if (auto s = streamed_.find(hash16); s != streamed_.end()) {
      hit = s->second;
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
  // Size and full hash first: a blob too large to keep is streamed, never held whole.
  auto headed = client_.HeadBlob(hash16, options_.timeout_ms);
  if (headed.ok() && headed->status == 404) return Status::NotFound("no blob " + hash16);
  if (!headed.ok() || headed->status != 200) return client_.Error("", headed);
  std::string full = HashOfETag(headed->Header("etag"));
  if (full.rfind(hash16, 0) != 0) {
    return Status::Unavailable("storage sent no usable ETag for the blob starting with " + hash16);
  }
  uint64_t size = 0;
  const std::string length = headed->Header("content-length");
  auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), size);
  if (ec != std::errc() || end != length.data() + length.size()) {
    return Status::Unavailable("storage sent no usable Content-Length for " + full);
  }
  if (size > keep_limit()) {
    auto a = std::make_shared<Asset>();
    a->sha256 = std::move(full);
    a->content_type = headed->Header("content-type");
    if (a->content_type.empty()) a->content_type = "application/octet-stream";
    a->size = size;
    a->streamed = true;
    return std::shared_ptr<const Asset>(std::move(a));
  }
  auto got = client_.GetBlob(full, options_.timeout_ms);
  if (got.ok() && got->status == 404) return Status::NotFound("no blob " + full);
  if (!got.ok() || got->status != 200) return client_.Error("", got);
  auto a = std::make_shared<Asset>();
  a->sha256 = std::move(full);
  a->content_type = got->Header("content-type");
  if (a->content_type.empty()) a->content_type = "application/octet-stream";
  a->body = std::move(got->body);
  a->size = a->body.size();
  Compress(a.get());  // here, on the pool: never on a loop thread
  return std::shared_ptr<const Asset>(std::move(a));
}

void AssetStore::ReadRange(const std::string& sha256, uint64_t offset, size_t n, ReadDone done) {
  range_reads_->Increment();
  pool_.Submit([this, sha256, offset, n, done = std::move(done)] {
    auto got = client_.GetBlobRange(sha256, offset, n, options_.timeout_ms);
    if (!got.ok() || got->status != 206 || got->body.size() != n) {
      fetch_errors_->Increment();
      Status why = got.ok() && got->status == 206
                       ? Status::Unavailable("storage sent " + std::to_string(got->body.size()) + " bytes, not " +
                                             std::to_string(n))
                       : client_.Error("", got);
      log::Warn("asset range read failed", {{"sha256", sha256}, {"error", why.message()}});
      done(why);
      return;
    }
    done(std::move(got->body));
  });
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
    if (r.ok() && (*r)->streamed) {
      if (streamed_.size() >= kMaxStreamedMeta) streamed_.clear();
      streamed_[hash16] = *r;
    } else if (r.ok() && !by_hash16_.count(hash16)) {
      lru_.push_front(*r);
      by_hash16_[hash16] = lru_.begin();
      bytes_ += (*r)->body.size() + (*r)->body_gzip.size();
      while (bytes_ > options_.cache_bytes && !lru_.empty()) {
        const std::string& evict = lru_.back()->sha256;
        bytes_ -= lru_.back()->body.size() + lru_.back()->body_gzip.size();
        by_hash16_.erase(evict.substr(0, 16));
        lru_.pop_back();
      }
      cached_bytes_->Set(static_cast<double>(bytes_));
    }
  }
  for (Done& d : waiters) d(r);
}

}  // namespace folio::edge
