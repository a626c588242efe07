// folio-storage's HTTP API as its clients speak it (ingest's attachment
// uploads, blob collection and backups; the edge's asset reads): the blob
// and object URLs, the bearer token on every request, PUT/GET/HEAD/DELETE,
// ranged reads, the /blobs and /objects listings parsed once, and what a
// failed request becomes as a Status. Storage's side of the same contract is
// services/storage (api.h, auth.h).
//
// Ownership: a Client is a value (URL, token, role); callers keep it as
// long as they like and copy it freely. Every call blocks on the network
// (libs/http's curl client): call it from a worker or pool thread, never
// from an event loop. Threading: all functions are thread-safe.
#pragma once

#include <cstdint>
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
  std::string url;    // "http://127.0.0.1:8083", no trailing '/'; "" (default) = no storage
  std::string token;  // the bearer token sent with every request; set whenever url is
};

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
  Client(Access access, TokenRole role, FaultPolicy policy);

  bool enabled() const { return !access_.url.empty(); }
  const Access& access() const { return access_; }

  // METHOD url + path_and_query ("/blobs?limit=10") with the token and timeout.
  http::ClientRequest Request(std::string method, std::string_view path_and_query, int64_t timeout_ms) const;

  // The requests themselves. Each returns what storage answered (any
  // status), or kUnavailable if storage cannot be reached or timed out;
  // callers check the status they expect and pass anything else to Error.
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
  Access access_;
  TokenRole role_ = TokenRole::kWrite;
  FaultPolicy policy_ = FaultPolicy::kRetryable;
};

}  // namespace folio::storage_client
