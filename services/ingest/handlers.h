// HTTP API of folio-ingest: POST /api/v1/push (also ?stage=ID&batch=N, a
// staged batch: stage.h), POST /api/v1/push/commit?stage=ID,
// GET /api/v1/manifest and GET /api/v1/export. Their contract (shapes,
// limits, error codes, fixtures) is libs/ingest_api; the handlers are split
// by concern behind handlers_internal.h.
// Every writing route first checks that this process holds the lease
// (leader.h: else 503 not_leader naming the holder, with Retry-After).
// Every route checks the bearer token from the headers, before a byte of
// the body is read (site_check.h: the token selects one site; a token no
// site knows waits for one reload of the sites table, then gets 401).
// Handlers run on the HTTP loop and copy no body: a push is parsed in place
// and its attachments uploaded on the prepare pool, then applied by that
// site's writer on the writer loop; the answer goes back through the HTTP
// loop, and the body stays the connection's until then (request views live
// while the Responder is unanswered, http/server.h). Replies are written
// with libs/ingest_api's encoders from what the writer returns.
#pragma once

#include <string>

#include "folio/core/thread_pool.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "blob_census.h"
#include "blob_upload.h"
#include "crashed_notes.h"
#include "leader.h"
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
  // Writes (push, staged batches, commit) only while leading: refused with
  // 503 not_leader before the body is read, and checked again on the writer
  // before anything is applied. nullptr = no lease (--lease-ttl 0).
  const Leadership* leader = nullptr;
  // With storage: which attachments' blobs storage lacks, for the manifest
  // (issue 23). Made by MountApi when storage.url is set; null otherwise.
  std::shared_ptr<BlobCensus> census = nullptr;
};

// REQUIRES: ctx outlives the router.
void MountApi(http::Router* router, HandlerContext* ctx);

}  // namespace folio::ingest
