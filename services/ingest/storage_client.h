// How ingest reaches folio-storage: its URL and the write token (--storage,
// --storage-token or --storage-token-file, FOLIO_STORAGE_TOKEN), and the
// libs/storage_client Client that every storage request goes through
// (attachment uploads in blob_upload.cc, blob collection in blob_gc.cc,
// backups in backup.cc). Values and pure functions; thread-safe.
#pragma once

#include "folio/core/config.h"
#include "folio/core/status.h"
#include "folio/storage_client/storage_client.h"

namespace folio::ingest {

// url "" (default) = no storage; token: storage's write token, set whenever url is.
using StorageAccess = storage_client::Access;

// The flags "storage", "storage-token" and "storage-token-file" (declare
// the last two with AddSecretFlags). --storage is one URL or replicas
// separated by ',' (storage_client.h fails over between them).
// kInvalidArgument if an entry of --storage is not a URL, if --storage is set
// without a token (the message names the flag and where storage keeps its
// generated write token), or if the token flags are malformed.
Result<StorageAccess> StorageAccessFromFlags(const Flags& flags);

// Ingest's client: the write token; every failure kUnavailable (a push or a
// backup is retried), its message naming what to fix.
storage_client::Client StorageClientFor(const StorageAccess& storage);

}  // namespace folio::ingest
