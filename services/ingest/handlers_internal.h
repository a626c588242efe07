// The pieces of the ingest API's handlers (handlers.h) that its files share:
// the gate and thread hops (handlers_gate.cc), push and commit
// (handlers_push.cc), staged batches (handlers_stage.cc) and the reads
// (handlers_read.cc). Threads: each function says where it runs; the HTTP
// loop, the prepare pool and the writer loop are HandlerContext's. Replies
// are encoded with libs/ingest_api; the writer returns results, not JSON.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "handlers.h"
#include "site_check.h"
#include "site_writer.h"

namespace folio::ingest {

struct PushCounters {
  metrics::Counter& ok;
  metrics::Counter& rejected;
  metrics::Counter& error;
  metrics::Counter& replayed;
  metrics::Histogram& seconds;
  metrics::Counter& heap_releases;        // after pushes of kReleaseHeapAfterPages+ pages
  metrics::Counter& heap_released_bytes;  // RSS before minus after each of them
  metrics::Gauge& heap_bytes;             // malloc's bytes in use, read after some of them
};

// ---- The gate and thread hops (handlers_gate.cc) ----

// The push counters, registered in `registry` (which outlives them).
std::shared_ptr<PushCounters> NewPushCounters(metrics::Registry* registry);
// HTTP loop, in a handler behind SiteTokenCheck: the site of the request's
// token; "" (after answering 401 and counting `rejected` if not null) if the
// site was removed since.
std::string SiteOf(HandlerContext* ctx, const http::Request& req, http::Responder& r, metrics::Counter* rejected);
// Any thread: sends `resp` from the HTTP loop.
void Answer(HandlerContext* ctx, std::shared_ptr<http::Responder> responder, http::Response resp);
// Runs `work` on the writer loop and sends its response from the HTTP loop.
void OnWriter(HandlerContext* ctx, std::shared_ptr<http::Responder> responder, std::function<http::Response()> work);
// Writer loop, before a write is applied: the 503 not_leader answer if the
// lease lapsed since the request was admitted; nullopt while this process may write.
std::optional<http::Response> NotLeader(const HandlerContext* ctx);
// The 401 for a site removed since its request was authenticated.
http::Response SiteGone();
// HTTP loop. The request's Idempotency-Key ("" if none), or kInvalidArgument.
Result<std::string> IdempotencyKey(const http::Request& req);

// ---- Push and commit (handlers_push.cc) ----

// A push parsed, its attachments in storage, on its way to the writer.
struct PreparedPush {
  std::string site;
  PushKey key;          // key.key "" = no Idempotency-Key
  PushRequest request;
  std::string stage;    // "" = a plain push; else the staged import it commits
  int64_t started_us = 0;
  std::shared_ptr<void> blobs_held;  // its blobs, safe from collection until it is done
};

// Writer loop. A push whose Idempotency-Key is recorded already: the
// recorded reply again (nothing is applied), or 422 if the body differs.
http::Response Replay(SiteWriter* writer, const PushRecord& rec, const std::string& body_sha256, PushCounters& m);
// Prepare pool. Puts the attachments of `p` into storage, then hands it to
// the writer loop; answers errors itself.
void UploadAndRun(HandlerContext* ctx, std::shared_ptr<PreparedPush> p, std::shared_ptr<http::Responder> responder,
                  std::shared_ptr<PushCounters> m);
// HTTP loop: POST /api/v1/push (a staged batch goes to HandleStagedBatch)
// and POST /api/v1/push/commit?stage=ID.
void HandlePush(HandlerContext* ctx, const std::shared_ptr<PushCounters>& m, const http::Request& req,
                http::Responder r);
void HandleCommit(HandlerContext* ctx, const std::shared_ptr<PushCounters>& m, const http::Request& req,
                  http::Responder r);

// ---- Staged batches (handlers_stage.cc) ----

// HTTP loop. POST /api/v1/push?stage=ID&batch=N of `site`.
void HandleStagedBatch(HandlerContext* ctx, const std::shared_ptr<PushCounters>& m, const http::Request& req,
                       std::string site, std::string stage, http::Responder r);
// Writer loop. A commit: the recorded reply if its key committed already,
// 404 stage_not_found if the stage has no batches, else the batches merged
// with the commit's own request (`own`) on the prepare pool, then uploaded
// and run like a push.
void LoadStageForCommit(HandlerContext* ctx, std::shared_ptr<PreparedPush> p, std::shared_ptr<PushRequest> own,
                        std::shared_ptr<http::Responder> responder, std::shared_ptr<PushCounters> m);

// ---- Reads (handlers_read.cc) ----

// HTTP loop: GET /api/v1/manifest[?since=V] and GET /api/v1/export?after=URL.
void HandleManifest(HandlerContext* ctx, const http::Request& req, http::Responder r);
void HandleExport(HandlerContext* ctx, const http::Request& req, http::Responder r);

}  // namespace folio::ingest
