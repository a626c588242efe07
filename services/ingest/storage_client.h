// How ingest reaches folio-storage: its URL and the write token (--storage,
// --storage-token or --storage-token-file, FOLIO_STORAGE_TOKEN). Every
// request carries "Authorization: Bearer <token>"; an answer that is not
// the expected one becomes a Status that says what to fix (401: the token
// is not storage's; 403: it is storage's read token, not the write token).
// Used by attachment uploads (site_writer.cc), blob collection (blob_gc.cc)
// and backups (backup.cc). Values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "folio/core/config.h"
#include "folio/core/status.h"
#include "folio/http/client.h"

namespace folio::ingest {

struct StorageAccess {
  std::string url;    // "http://127.0.0.1:8083", no trailing '/'; "" (default) = no storage
  std::string token;  // storage's write token; set whenever url is
};

// The flags "storage", "storage-token" and "storage-token-file" (declare
// the last two with AddSecretFlags). kInvalidArgument if --storage is set
// without a token (the message names the flag and where storage keeps its
// generated write token), or if the token flags are malformed.
Result<StorageAccess> StorageAccessFromFlags(const Flags& flags);

// A request for url + path_and_query ("/blobs?limit=10") with the token.
http::ClientRequest StorageRequest(const StorageAccess& storage, std::string method,
                                   std::string_view path_and_query, int64_t timeout_ms);

// kUnavailable for a failed storage request: "<what>: " and why
// (unreachable; the token refused; or the status and body storage sent).
// REQUIRES: !r.ok() or r is not the answer the caller wanted.
Status StorageError(std::string_view what, const Result<http::ClientResponse>& r);

}  // namespace folio::ingest
