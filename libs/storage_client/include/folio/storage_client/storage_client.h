// folio-storage's HTTP API as its clients speak it (ingest's attachment
// uploads, blob collection and backups; the edge's asset reads): the blob
// and object URLs, the bearer token on every request, PUT/GET/HEAD/DELETE,
// ranged reads, the /blobs and /objects listings parsed once, and what a
// failed request becomes as a Status. Storage's side of the same contract is
// services/storage (api.h, auth.h).
//
// Fail-over (issue 23): the URL may be a comma-separated list of storage
// replicas ("http://s1:8083,http://s2:8083"; one URL, e.g. a Kubernetes
// Service, works as before). Every request goes to the replica that last
// answered (sticky); one that cannot be reached, times out or answers 503
// is retried on the next replica, in list order, wrapping around, each
// replica tried at most once per call. The whole call is bounded: each
// attempt gets the caller's timeout_ms or what is left of 2 × timeout_ms,
// whichever is less (so a hung replica costs one timeout, and the call
// never takes longer than twice its timeout). Uploads (PutBlob,
// PutObjectFile) restart from their first byte on the next replica.
// Clients with the same URL list share the sticky choice process-wide.
//
// Ownership: a Client is a value (URLs, token, role); callers keep it as
// long as they like and copy it freely. Every call blocks on the network
// (libs/http's curl client): call it from a worker or pool thread, never
// from an event loop. Threading: all functions are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "folio/http/client.h"

namespace folio::storage_client {

// Which of storage's two tokens a client holds (storage's auth.h): the write
// token allows everything; the read token only GET/HEAD of one blob. Only
// used to say what to fix when storage refuses the token.
enum class TokenRole {
  kWrite,  // ingest: --storage-token is storage's <data>/write-token
  kRead,   // the edge: --storage-token is storage's <data>/read-token
};

// What an unexpected answer becomes (see Client::Error).
enum class FaultPolicy {
  kRetryable,  // every failure is kUnavailable: the caller's caller retries (ingest)
  kClassify,   // 503 and unreachable kUnavailable, a damaged blob kDataLoss, anything else kInternal (the edge)
};

struct Access {
  // "http://127.0.0.1:8083", or replicas separated by ',' (ParseUrlList);
  // "" (default) = no storage.
  std::string url;
  std::string token;  // the bearer token sent with every request; set whenever url is
};

// The replicas of a --storage value: entries split at ',', surrounding
// blanks and trailing '/' removed. kInvalidArgument naming `flag` (e.g.
// "--storage") and the entry if one is empty or not http://host[:port]
// (with an optional path). "" gives an empty list.
Result<std::vector<std::string>> ParseUrlList(std::string_view list, std::string_view flag);
// The same, as one normalized value (entries joined by ','), for Access::url.
Result<std::string> NormalizeUrlList(std::string_view list, std::string_view flag);

// Bound on the whole of one fail-over call, in units of its timeout_ms.
inline constexpr int64_t kFailoverTimeouts = 2;

// "/blobs/sha256/<hex>"; hex is 16..64 lower-case hex digits (a prefix
// names the one blob it starts).
std::string BlobPath(std::string_view hex);
// "/objects/<name>" with the name as given (storage takes '/' in names).
std::string ObjectPath(std::string_view name);

// One page of GET /blobs: the blobs' full hashes in order, and whether more
// follow (ask again with after = the last hash).
struct BlobListing {
  std::vector<std::string> sha256;
  bool truncated = false;
};
// One page of GET /objects: names with the storage sequence of each.
struct ObjectListing {
  struct Entry {
    std::string name;
    int64_t seq = 0;
  };
  std::vector<Entry> objects;
  bool truncated = false;
};
// Parse storage's listing JSON ({"blobs":[{"sha256":..,"size":..,
// "content_type":..,"seq":..}],"truncated":b}; "objects" with "name" for
// objects). kUnavailable ("storage answered malformed JSON ...") if the body
// is not that shape, or a blob's hash is not 64 lower-case hex digits.
Status ParseBlobListing(std::string_view json, BlobListing* out);
Status ParseObjectListing(std::string_view json, ObjectListing* out);

class Client {
 public:
  Client() = default;  // no storage: enabled() is false
  // access.url as ParseUrlList takes it; malformed entries are dropped here
  // (validate flags with ParseUrlList first, which names the flag).
  Client(Access access, TokenRole role, FaultPolicy policy);

  bool enabled() const { return !replicas_.empty(); }
  const Access& access() const { return access_; }
  const std::vector<std::string>& replicas() const { return replicas_; }
  // The replica the next request goes to first (the one that last answered).
  // REQUIRES: enabled().
  const std::string& preferred_url() const;

  // METHOD <preferred replica> + path_and_query ("/blobs?limit=10") with the
  // token and timeout (no fail-over: for callers that Fetch it themselves).
  http::ClientRequest Request(std::string method, std::string_view path_and_query, int64_t timeout_ms) const;

  // The requests themselves, with fail-over (above). Each returns what
  // storage answered (any status; a 503 only if every replica tried sent
  // one), or kUnavailable if no replica could be reached in time; callers
  // check the status they expect and pass anything else to Error.
  // GET of any path ("/blobs?limit=1"), e.g. a probe's one-item listing.
  Result<http::ClientResponse> Get(std::string_view path_and_query, int64_t timeout_ms) const;
  Result<http::ClientResponse> HeadBlob(std::string_view hex, int64_t timeout_ms) const;
  Result<http::ClientResponse> GetBlob(std::string_view hex, int64_t timeout_ms) const;
  // Bytes [offset, offset + n) of a blob: 206 when storage has them.
  // REQUIRES: n > 0.
  Result<http::ClientResponse> GetBlobRange(std::string_view sha256, uint64_t offset, uint64_t n,
                                            int64_t timeout_ms) const;
  Result<http::ClientResponse> PutBlob(std::string_view sha256, std::string body, std::string_view content_type,
                                       int64_t timeout_ms) const;
  Result<http::ClientResponse> DeleteBlob(std::string_view sha256, int64_t timeout_ms) const;
  // PUT /objects/<name>?keep=<keep> from a file (never held in memory).
  Result<http::ClientResponse> PutObjectFile(std::string_view name, int keep, std::string_view content_type,
                                             const std::string& path, int64_t timeout_ms) const;
  // GET /objects/<name> into a file (a 2xx body only; see http::FetchFile).
  Result<http::ClientResponse> GetObjectFile(std::string_view name, const std::string& path,
                                             int64_t timeout_ms) const;

  // Every blob's full hash, all pages (1000 per request). Fails with
  // Error("listing blobs", ...) or a malformed listing.
  Result<std::vector<std::string>> ListAllBlobs(int64_t timeout_ms) const;
  // Every object whose name starts with `prefix`, all pages.
  Result<std::vector<ObjectListing::Entry>> ListAllObjects(std::string_view prefix, int64_t timeout_ms) const;

  // The Status for a request that failed or did not get the answer the
  // caller wanted: "<what>: " and why (unreachable; the token refused, with
  // which token the flag must hold; or the status storage sent), its code
  // by the client's FaultPolicy. REQUIRES: !r.ok() or r is unwanted.
  Status Error(std::string_view what, const Result<http::ClientResponse>& r) const;

 private:
  // One request to a replica's base URL.
  using Attempt = std::function<Result<http::ClientResponse>(const std::string& base, int64_t timeout_ms)>;
  Result<http::ClientResponse> WithFailover(int64_t timeout_ms, const Attempt& attempt) const;
  http::ClientRequest RequestTo(const std::string& base, std::string method, std::string_view path_and_query,
                                int64_t timeout_ms) const;

  Access access_;
  std::vector<std::string> replicas_;
  // Index into replicas_ of the one that last answered; shared by every
  // Client on the same list (see the .cc's registry).
  std::shared_ptr<std::atomic<size_t>> preferred_;
  TokenRole role_ = TokenRole::kWrite;
  FaultPolicy policy_ = FaultPolicy::kRetryable;
};

}  // namespace folio::storage_client
