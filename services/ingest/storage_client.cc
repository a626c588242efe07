#include "storage_client.h"

#include "folio/core/secret.h"

namespace folio::ingest {

Result<StorageAccess> StorageAccessFromFlags(const Flags& flags) {
  StorageAccess s;
  s.url = flags.Get("storage");
  while (!s.url.empty() && s.url.back() == '/') s.url.pop_back();
  auto token = SecretFromFlags(flags, "storage-token");
  if (!token.ok()) return token.status();
  s.token = *token;
  if (!s.url.empty() && s.token.empty()) {
    return Status::Invalid("--storage needs --storage-token (or --storage-token-file, FOLIO_STORAGE_TOKEN): "
                           "folio-storage's write token, which it writes to <its data>/write-token on its first "
                           "start");
  }
  return s;
}

http::ClientRequest StorageRequest(const StorageAccess& storage, std::string method,
                                   std::string_view path_and_query, int64_t timeout_ms) {
  http::ClientRequest req;
  req.method = std::move(method);
  req.url = storage.url + std::string(path_and_query);
  req.headers.emplace_back("Authorization", "Bearer " + storage.token);
  req.timeout_ms = timeout_ms;
  return req;
}

Status StorageError(std::string_view what, const Result<http::ClientResponse>& r) {
  std::string w(what);
  if (!r.ok()) return Status::Unavailable(w + ": storage unreachable: " + r.status().message());
  if (r->status == 401) {
    return Status::Unavailable(w + ": storage refused ingest's token (HTTP 401): --storage-token must be "
                               "folio-storage's write token (its <data>/write-token)");
  }
  if (r->status == 403) {
    return Status::Unavailable(w + ": storage refused ingest's token for this (HTTP 403): --storage-token is "
                               "folio-storage's read token; ingest needs the write token (its <data>/write-token)");
  }
  return Status::Unavailable(w + ": storage answered HTTP " + std::to_string(r->status) + " " + r->body.substr(0, 300));
}

}  // namespace folio::ingest
