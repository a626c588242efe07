// BlobGc: removes from folio-storage the blobs that no site's attachment
// uses any more (an image replaced or deleted in the vault), once they have
// gone unused for a grace period, so that pages still open in readers'
// browsers, and edges that have not swapped a page yet, can load them
// meanwhile.
//
// Threading: the writer loop only (main runs it on a timer there). A push
// uploads its blobs before its writer task commits them (blob_upload.h);
// meanwhile they are in BlobsInFlight, and a pass leaves them alone. The
// blocking HTTP calls hold the writer for the pass (a listing page per
// 1,000 blobs, a DELETE per collected blob).
//
// State: when each unused blob was first seen unused, in memory. After a
// restart the grace period starts again, which only delays deletions.
// Backups are not consulted: a backup older than the grace period may
// reference blobs already collected (main's default grace is a week).
// Assumes the storage's /blobs belong to this ingest alone (backups live
// under /objects and are not touched).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "folio/core/status.h"
#include "folio/metrics/metrics.h"
#include "blob_upload.h"
#include "storage_client.h"
#include "store.h"

namespace folio::ingest {

class BlobGc {
 public:
  // REQUIRES: storage.url and storage.token set (the write token);
  // in_flight outlives this.
  BlobGc(StorageAccess storage, int64_t grace_ms, Store* store, const BlobsInFlight* in_flight,
         metrics::Registry* registry);

  struct Pass {
    size_t blobs = 0;    // in storage
    size_t unused = 0;   // of those, used by no attachment (waiting out the grace period or deleted)
    size_t deleted = 0;  // by this pass
  };
  // One pass at now_ms: lists storage's blobs, compares them with every
  // site's attachments, deletes those unused since more than grace_ms.
  // kUnavailable if storage or the store fails; deletions made before the
  // failure stand (each is of an unused blob).
  Result<Pass> RunOnce(int64_t now_ms);

 private:
  const StorageAccess storage_;
  const int64_t grace_ms_;
  Store* store_;
  const BlobsInFlight* in_flight_;
  metrics::Counter& deleted_;
  metrics::Counter& failures_;
  std::map<std::string, int64_t> unused_since_;  // sha256 -> first pass that found it unused
};

}  // namespace folio::ingest
