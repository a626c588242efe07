// The ingest API's staged imports (handlers_internal.h, stage.h): batches
// are validated like a push and stored; a commit merges them into one push.
#include "folio/core/log.h"
#include "folio/core/time.h"
#include "folio/ingest_api/error.h"
#include "handlers_internal.h"

namespace folio::ingest {
namespace {

// Writer loop. Drops the stages (of every site) unused for --stage-ttl.
void DropStaleStages(HandlerContext* ctx) {
  auto dropped = ctx->sites->store()->DropStaleStages(NowUnixMs() - ctx->stage.ttl_ms);
  if (!dropped.ok()) {
    log::Warn("dropping stale stages failed", {{"error", dropped.status().message()}});
  } else if (*dropped > 0) {
    log::Info("stale stages dropped", {{"batches", std::to_string(*dropped)}});
  }
}

struct StagedBatch {
  std::string site, stage;
  int64_t batch = 0;
  std::string_view body;  // the request's, valid until it is answered
};

// Writer loop. Stores a validated batch of `received` items.
http::Response StoreBatch(HandlerContext* ctx, const StagedBatch& b, size_t received, PushCounters& m) {
  if (auto refused = NotLeader(ctx)) return std::move(*refused);
  if (!ctx->sites->writer(b.site)) return SiteGone();
  DropStaleStages(ctx);
  auto info = ctx->sites->store()->PutStageBatch(b.site, b.stage, b.batch, b.body, NowUnixMs(), ctx->stage.max_bytes);
  if (!info.ok()) {
    (info.status().code() == Code::kTooLarge ? m.rejected : m.error).Increment();
    log::Warn("staged batch not stored", {{"site", b.site}, {"stage", b.stage}, {"error", info.status().message()}});
    return http::Response::Error(info.status());
  }
  log::Info("batch staged", {{"site", b.site}, {"stage", b.stage}, {"batch", std::to_string(b.batch)},
                             {"batches", std::to_string(info->batches)}, {"bytes", std::to_string(info->bytes)}});
  ingest_api::StageReply reply;
  reply.staged = true;
  reply.stage = b.stage;
  reply.batch = b.batch;
  reply.received = static_cast<int64_t>(received);
  reply.batches = info->batches;
  reply.bytes = info->bytes;
  reply.expires_in_ms = ctx->stage.ttl_ms;
  return http::Response::Json(200, ingest_api::EncodeStageReply(reply));
}

// Prepare pool. Validates a staged batch as a push (the same errors), then
// stores its body on the writer loop; nothing is applied.
void StageBatch(HandlerContext* ctx, StagedBatch b, std::shared_ptr<http::Responder> responder,
                std::shared_ptr<PushCounters> m) {
  size_t received = 0;
  {
    PushRequest parsed;
    PushError err;
    if (!ingest_api::DecodePushRequest(b.body, ctx->limits, &parsed, &err, /*padded=*/true)) {
      m->rejected.Increment();
      log::Info("staged batch rejected", {{"site", b.site}, {"stage", b.stage}, {"error", err.status.message()}});
      Answer(ctx, responder, http::Response::Error(err.status, err.path));
      return;
    }
    received = parsed.notes.size() + parsed.attachments.size() + parsed.deletes.size() +
               parsed.delete_attachments.size();
  }
  OnWriter(ctx, responder, [ctx, b = std::move(b), received, m] { return StoreBatch(ctx, b, received, *m); });
}

// Prepare pool. The stage's batches (bodies, in order) and the commit's own
// request merged into p->request, then uploaded and run like a push.
void MergeStage(HandlerContext* ctx, std::shared_ptr<PreparedPush> p, std::shared_ptr<std::vector<std::string>> bodies,
                std::shared_ptr<PushRequest> own, std::shared_ptr<http::Responder> responder,
                std::shared_ptr<PushCounters> m) {
  StagedPush merged;
  auto reject = [&](const Status& s, const std::string& path) {
    m->rejected.Increment();
    log::Info("stage commit rejected", {{"site", p->site}, {"stage", p->stage}, {"error", s.message()}});
    Answer(ctx, responder, http::Response::Error(s, path));
  };
  for (std::string& body : *bodies) {
    PushRequest r;
    PushError err;
    if (!ingest_api::DecodePushRequest(body, ctx->limits, &r, &err)) return reject(err.status, err.path);
    std::string().swap(body);  // each body goes once parsed: the merge holds what is needed
    if (Status s = merged.Add(std::move(r)); !s.ok()) return reject(s, "");
  }
  if (Status s = merged.Add(std::move(*own)); !s.ok()) return reject(s, "");
  p->request = merged.Take();
  UploadAndRun(ctx, std::move(p), std::move(responder), std::move(m));
}

}  // namespace

void LoadStageForCommit(HandlerContext* ctx, std::shared_ptr<PreparedPush> p, std::shared_ptr<PushRequest> own,
                        std::shared_ptr<http::Responder> responder, std::shared_ptr<PushCounters> m) {
  SiteWriter* writer = ctx->sites->writer(p->site);
  if (!writer) return Answer(ctx, responder, SiteGone());
  if (!p->key.key.empty()) {
    auto found = writer->FindPush(p->key.key);
    if (!found.ok()) return Answer(ctx, responder, http::Response::Error(Status::Internal("push key lookup failed")));
    if (*found) return Answer(ctx, responder, Replay(writer, **found, p->key.body_sha256, *m));
  }
  DropStaleStages(ctx);
  auto bodies = ctx->sites->store()->LoadStage(p->site, p->stage);
  if (!bodies.ok()) {
    m->error.Increment();
    log::Error("stage load failed", {{"site", p->site}, {"error", bodies.status().message()}});
    return Answer(ctx, responder, http::Response::Error(Status::Internal("stage load failed")));
  }
  if (bodies->empty()) {
    m->rejected.Increment();
    return Answer(ctx, responder, http::Response::Json(404, http::EncodeErrorBody({
        std::string(ingest_api::kStageNotFound),
        "stage " + p->stage + " holds no batches: none was uploaded, it was committed already, or it was dropped "
        "after --stage-ttl unused; upload its batches again", ""})));
  }
  auto shared = std::make_shared<std::vector<std::string>>(std::move(*bodies));
  ctx->prepare_pool->Submit([ctx, p, shared, own, responder, m] { MergeStage(ctx, p, shared, own, responder, m); });
}

void HandleStagedBatch(HandlerContext* ctx, const std::shared_ptr<PushCounters>& m, const http::Request& req,
                       std::string site, std::string stage, http::Responder r) {
  Result<int64_t> batch = ParseStageBatch(req.QueryParam("batch"));
  Status bad = batch.ok() ? CheckStageId(stage) : batch.status();
  if (!bad.ok()) {
    m->rejected.Increment();
    r.SendError(bad);
    return;
  }
  auto responder = std::make_shared<http::Responder>(std::move(r));
  StagedBatch b{std::move(site), std::move(stage), *batch, req.body};
  ctx->prepare_pool->Submit([ctx, m, b = std::move(b), responder]() mutable {
    StageBatch(ctx, std::move(b), responder, m);
  });
}

}  // namespace folio::ingest
