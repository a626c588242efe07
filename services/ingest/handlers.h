// HTTP API of folio-ingest: POST /api/v1/push (also ?stage=ID&batch=N, a
// staged batch: stage.h), POST /api/v1/push/commit?stage=ID and
// GET /api/v1/manifest.
// Handlers run on the HTTP loop; they authenticate (the bearer token selects
// one site: Sites::Authenticate) and copy the body. A push is then parsed
// and its attachments uploaded on the prepare pool, and applied by that
// site's writer on the writer loop; the answer goes back through the HTTP
// loop. The reply JSON is written here, from the writer's PushSummary.
// A token no site knows triggers one reload of the sites table (at most one
// per second, shared by every request waiting for it) before the 401, so a
// site added by `folio-ingest site add` works at once.
#pragma once

#include <string>

#include "folio/core/thread_pool.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "blob_upload.h"
#include "crashed_notes.h"
#include "push_request.h"
#include "sites.h"
#include "stage.h"

namespace folio::ingest {

struct HandlerContext {
  http::Loop* http_loop;
  http::Loop* writer_loop;
  Sites* sites;         // Authenticate() on http_loop; the rest on writer_loop only
  PushLimits limits;
  metrics::Registry* registry;
  // One thread, so pushes reach the writer in the order they arrived: parses
  // push bodies and uploads attachments (blob_upload.h) while the writer
  // works on the push before.
  ThreadPool* prepare_pool;
  StorageAccess storage;             // url "" = attachments go to SQLite
  BlobsInFlight* blobs_in_flight;    // shared with the blob collector
  StageLimits stage{};
  const CrashedNotes* crashed = nullptr;  // writer loop: notes refused because they crashed ingest
};

// REQUIRES: ctx outlives the router.
void MountApi(http::Router* router, HandlerContext* ctx);

}  // namespace folio::ingest
