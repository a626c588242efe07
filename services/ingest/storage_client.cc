#include "storage_client.h"

#include "folio/core/secret.h"

namespace folio::ingest {

Result<StorageAccess> StorageAccessFromFlags(const Flags& flags) {
  StorageAccess s;
  auto urls = storage_client::NormalizeUrlList(flags.Get("storage"), "--storage");
  if (!urls.ok()) return urls.status();
  s.url = std::move(urls).value();
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

storage_client::Client StorageClientFor(const StorageAccess& storage) {
  return storage_client::Client(storage, storage_client::TokenRole::kWrite, storage_client::FaultPolicy::kRetryable);
}

}  // namespace folio::ingest
