// The pieces of folio-storage's HTTP API (api.h) shared by its files; not
// for other code. api.cc mounts the routes, api_common.cc holds metrics and
// error mapping, api_upload.cc the streamed PUTs, api_download.cc the
// verified GET/HEAD. Threading: loop thread unless a function says
// otherwise, like every handler.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "api.h"
#include "damaged.h"
#include "folio/core/hash.h"
#include "folio/core/status.h"
#include "folio/core/text.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"

namespace folio::storage::api_internal {

inline constexpr std::string_view kBlobPrefix = "/blobs/sha256/";
inline constexpr std::string_view kObjectPrefix = "/objects/";
inline constexpr std::string_view kBlobKeyPrefix = "sha256/";
inline constexpr std::string_view kObjectKeyPrefix = "objects/";
inline constexpr size_t kMaxContentType = 255;
inline constexpr size_t kMaxObjectName = 512;
inline constexpr size_t kMaxListLimit = 10000;
inline constexpr const char* kImmutable = "public, max-age=31536000, immutable";
inline constexpr size_t kMinBlobPrefix = 16;  // hex digits: an asset URL's; shorter would be a listing

inline bool IsHex64(std::string_view s) { return s.size() == 64 && IsLowerHex(s); }
inline bool IsHexPrefix(std::string_view s) { return s.size() <= 64 && IsLowerHex(s); }

// The object name of /objects/<name>: a vault-style relative path.
// kInvalidArgument (the message says why) if it is not one.
Status ObjectName(std::string_view encoded, std::string* name);

// The API's counters (folio_storage_*), registered in ctx->registry on first use.
struct Metrics {
  explicit Metrics(metrics::Registry* r);
  metrics::Counter &puts, &gets, &deletes, &lists, &rejected, &bytes_in, &bytes_out, &corrupt_reads, &refused_full;
  metrics::Histogram& put_seconds;
};
Metrics* M(ApiContext* ctx);  // one registry per process

// The versions of blobs found damaged (one journal per process).
DamagedBlobs& Damaged();
// kDataLoss: "blob <key> is damaged on disk (checksum mismatch)".
Status DamagedStatus(const std::string& key);
// A read of version `seq` of `key` failed with `s` (`what` happens to the
// request: for the log). Damage is counted, remembered and logged once per
// version. Returns what to answer.
Status ReadFailed(ApiContext* ctx, const std::string& key, uint64_t seq, const Status& s, std::string_view what);
// After a journal write: a full disk marks ctx->disk, a success clears it.
void ObserveWrite(ApiContext* ctx, const Status& s);
// kNoSpace: `what` was not stored (nothing was kept).
Status DiskFullStatus(const std::string& what);
// What the client learns of a failed write of `what`: a full disk as
// DiskFullStatus; the journal's sticky error without its detail (it names
// the data directory; the journal logged it when the write failed);
// anything else as it is.
Status WriteFailedStatus(ApiContext* ctx, const Status& s, const std::string& what);

// Starts an upload of `key` (api_upload.cc): expect_hex is the SHA-256 the
// body must have ("" for a named object, no check); keep > 0 keeps only the
// newest `keep` objects of key's folder once it is stored. nullptr (after
// answering) when refused or already present.
std::shared_ptr<http::BodyReader> StartUpload(ApiContext* ctx, const http::Request& req, http::Responder resp,
                                              std::string key, std::string expect_hex, int keep);

// GET/HEAD of `key` (api_download.cc): verified before the status line,
// conditional and ranged; replicated, fetched through when the journal
// lacks it. immutable: blob caching headers, else no-cache.
void Serve(ApiContext* ctx, const http::Request& req, http::Responder resp, const std::string& key, bool immutable);
// GET/HEAD /blobs/sha256/<hex or a prefix of at least kMinBlobPrefix>.
void ServeBlob(ApiContext* ctx, const http::Request& req, http::Responder resp);

}  // namespace folio::storage::api_internal
