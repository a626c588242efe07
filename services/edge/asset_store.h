// AssetStore: the edge's side of attachments held by folio-storage. Pages
// reference them as /assets/<first 16 hex of sha256>/<file name>; on a miss
// the store asks storage for the blob by that prefix (HEAD
// /blobs/sha256/<16 hex>: size, type, and the full hash as its ETag) and
// fetches it (GET /blobs/sha256/<hex>) on its own thread pool, never on a
// loop thread, through libs/storage_client. Every request carries storage's
// read token, which allows exactly these two (storage's auth.h).
// Fetched assets are kept in an LRU bounded by bytes. An asset larger than
// 1/8 of the budget (keep_limit()) is never fetched whole: the miss learns
// its size and type (HEAD), remembers them, and the worker streams each
// response from storage by ranged reads (ReadRange), so a video seeked
// through by many readers costs the edge ~1 MiB per response, not the file.
// Concurrent misses for one hash share one fetch. Failures are never cached.
// A kept asset that is text (CompressibleType, or untyped bytes that look
// like text) is gzip-compressed once, by the fetch on the pool thread, and
// the gzip bytes are kept beside it when they save at least 10%: readers get
// them (Content-Encoding: gzip) with no compression on the loop. Both copies
// count against the byte budget. Streamed assets are never compressed.
// With several storage replicas (--storage url1,url2) every request fails
// over inside the client (storage_client.h): a replica going away costs a
// reader one retried request here, never an error page.
//
// Ownership: main owns it and destroys it after the loops stop (its pool's
// Done callbacks post to them). Threading: every method is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folio/core/status.h"
#include "folio/core/thread_pool.h"
#include "folio/storage_client/storage_client.h"
#include "folio/metrics/metrics.h"

namespace folio::edge {

struct AssetOptions {
  // "http://127.0.0.1:8083", or replicas separated by ',' (fail-over:
  // storage_client.h); required.
  std::string storage_url;
  std::string storage_token;           // storage's read token (its <data>/read-token); required
  size_t cache_bytes = 256u << 20;     // LRU budget of asset bodies (default 256 MiB)
  size_t threads = 4;                  // fetching threads (default 4)
  int64_t timeout_ms = 30'000;         // per storage request (default 30 s)
};

// One blob as served. Immutable once built; shared by every worker.
struct Asset {
  std::string sha256;        // full hex, the ETag's value
  std::string content_type;  // as storage holds it
  std::string body;          // empty if streamed
  std::string body_gzip;     // gzip of body if text and >= 10% smaller; else empty
  uint64_t size = 0;         // of the blob
  bool streamed = false;     // over keep_limit(): served by ReadRange, body not held
};

class AssetStore {
 public:
  // Called exactly once per Get, on a pool thread (a miss) or inside Get (a
  // hit). Failure: kNotFound (storage has no such blob), kUnavailable
  // (storage unreachable or answering 503), kDataLoss (storage reports the
  // blob damaged), kInternal (storage answered something else).
  using Done = std::function<void(Result<std::shared_ptr<const Asset>>)>;
  // Called exactly once per ReadRange, on a pool thread.
  using ReadDone = std::function<void(Result<std::string>)>;

  AssetStore(AssetOptions options, metrics::Registry* registry);
  ~AssetStore();
  AssetStore(const AssetStore&) = delete;
  AssetStore& operator=(const AssetStore&) = delete;

  // REQUIRES: hash16 is 16 lower-case hex digits.
  void Get(const std::string& hash16, Done done);
  // Reads bytes [offset, offset + n) of a streamed asset's blob from storage
  // on the pool. Fails like Get, and with kUnavailable if storage sends
  // other than exactly those bytes. REQUIRES: n > 0.
  void ReadRange(const std::string& sha256, uint64_t offset, size_t n, ReadDone done);
  // Assets larger than this are streamed, not kept (1/8 of the budget).
  size_t keep_limit() const { return options_.cache_bytes / 8; }

  // True if `s` is 16 lower-case hex digits.
  static bool IsHash16(std::string_view s);
  // True for the types worth gzip: text/*, JavaScript, JSON, XML, SVG and
  // the +json/+xml families (parameters and case ignored).
  static bool CompressibleType(std::string_view content_type);
  // Sets a->body_gzip when a->body is worth compressing (see above).
  static void Compress(Asset* a);

 private:
  Result<std::shared_ptr<const Asset>> Fetch(const std::string& hash16);
  void OnFetched(const std::string& hash16, Result<std::shared_ptr<const Asset>> r);

  const AssetOptions options_;
  const storage_client::Client client_;  // storage's read token; failures classified (kClassify)
  metrics::Counter* hits_;
  metrics::Counter* misses_;
  metrics::Counter* fetch_errors_;
  metrics::Gauge* cached_bytes_;
  metrics::Counter* range_reads_;
  std::mutex mu_;
  // Most recently used first. GUARDED_BY(mu_), as are the maps below.
  std::list<std::shared_ptr<const Asset>> lru_;
  std::unordered_map<std::string, std::list<std::shared_ptr<const Asset>>::iterator> by_hash16_;
  std::unordered_map<std::string, std::vector<Done>> in_flight_;
  // Size and type of streamed assets by hash16 (no bodies; at most
  // kMaxStreamedMeta entries, forgotten all at once past that).
  std::unordered_map<std::string, std::shared_ptr<const Asset>> streamed_;
  size_t bytes_ = 0;
  ThreadPool pool_;  // last: joined first, while everything above still exists
};

}  // namespace folio::edge
