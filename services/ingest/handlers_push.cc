// The ingest API's push and commit (handlers_internal.h): a push is parsed
// in place and its attachments uploaded on the prepare pool, then applied by
// its site's writer on the writer loop; the reply is libs/ingest_api's.
#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/core/memory.h"
#include "folio/core/time.h"
#include "folio/ingest_api/error.h"
#include "handlers_internal.h"

namespace folio::ingest {
namespace {

// A push that rendered this many pages is a burst worth trimming the heap after.
constexpr size_t kReleaseHeapAfterPages = 1000;
// folio_ingest_heap_bytes is read after the first hand-back, then at most
// this often: reading it walks malloc's free lists, which grow with the vault
// (about 120 ms after a 1,000-note push at 100,000 notes, holding the writer).
constexpr int64_t kHeapReadIntervalUs = 30'000'000;

// Push bodies are parsed where the connection holds them (no copy): the
// server leaves kBodyPadding readable bytes after a body for simdjson.
static_assert(http::kBodyPadding >= kPushBodyPadding);

// Writer loop, once a push of many pages is answered: malloc keeps their
// freed memory, so hand it back (the next writer task). The counters belong
// to the registry, which outlives the writer loop.
void ReleaseHeapLater(HandlerContext* ctx, PushCounters& m) {
  ctx->writer_loop->Post([store = ctx->sites->store(), releases = &m.heap_releases, bytes = &m.heap_released_bytes,
                          heap = &m.heap_bytes] {
    static int64_t heap_read_us = 0;  // writer loop only
    uint64_t before = ResidentBytes();
    if (Status s = store->ReleaseCache(); !s.ok()) log::Warn("freeing SQLite's cache failed", {{"error", s.message()}});
    ReleaseFreeHeap();
    uint64_t after = ResidentBytes();
    if (after < before) bytes->Increment(static_cast<double>(before - after));
    if (const int64_t now = MonotonicUs(); heap_read_us == 0 || now - heap_read_us >= kHeapReadIntervalUs) {
      heap->Set(static_cast<double>(HeapInUseBytes()));
      heap_read_us = now;
    }
    // Last: a scrape that sees the release sees its bytes (fidelity_test
    // read a heap of 0 once, polling this counter on a loaded machine).
    releases->Increment();
  });
}

// Writer loop. The checks before a push is applied: the lease, the site,
// a note that crashed ingest, a key recorded already. nullopt: go on.
std::optional<http::Response> Refused(HandlerContext* ctx, PreparedPush* p, SiteWriter* writer, PushCounters& m) {
  if (auto refused = NotLeader(ctx)) return refused;
  if (!writer) {  // removed since the request was authenticated
    m.rejected.Increment();
    return SiteGone();
  }
  if (std::string path; ctx->crashed != nullptr) {
    if (Status s = ctx->crashed->Check(p->site, p->request, &path); !s.ok()) {
      m.rejected.Increment();
      log::Warn("push refused: a note crashed ingest", {{"site", p->site}, {"path", path}});
      return http::Response::Error(s, path);
    }
  }
  if (p->key.key.empty()) return std::nullopt;
  auto found = writer->FindPush(p->key.key);
  if (!found.ok()) {
    m.error.Increment();
    log::Error("push key lookup failed", {{"site", p->site}, {"error", found.status().message()}});
    return http::Response::Error(Status::Internal("push key lookup failed"));
  }
  if (*found) return Replay(writer, **found, p->key.body_sha256, m);
  return std::nullopt;
}

// Writer loop. One prepared push to its site's writer.
http::Response RunPush(HandlerContext* ctx, PreparedPush* p, PushCounters& m) {
  SiteWriter* writer = ctx->sites->writer(p->site);
  if (auto refused = Refused(ctx, p, writer, m)) return std::move(*refused);
  size_t deletes = p->request.deletes.size();
  auto sum = writer->Push(std::move(p->request), p->key.key.empty() ? nullptr : &p->key, p->stage);
  if (!sum.ok()) {
    m.error.Increment();
    log::Error("push failed", {{"site", p->site}, {"error", sum.status().message()}});
    return http::Response::Error(sum.status());
  }
  int64_t took_us = MonotonicUs() - p->started_us;
  m.seconds.Observe(static_cast<double>(took_us) / 1e6);
  m.ok.Increment();
  log::Info("push committed", {{"site", p->site}, {"version", std::to_string(sum->version)},
                               {"received", std::to_string(sum->received)},
                               {"changed", std::to_string(sum->changed)},
                               {"rendered", std::to_string(sum->rendered)},
                               {"deleted", std::to_string(sum->deleted)},
                               {"requested_deletes", std::to_string(deletes)},
                               {"rows", std::to_string(sum->rows)},
                               {"took_ms", std::to_string(took_us / 1000)}, {"phases_ms", sum->phases},
                               {"phases_cpu_ms", sum->phases_cpu},
                               {"stage", p->stage}});
  if (sum->rendered + sum->listings >= kReleaseHeapAfterPages) ReleaseHeapLater(ctx, m);
  ingest_api::PushReply reply = ReplyOf(*sum);
  reply.published = sum->published;
  reply.took_ms = took_us / 1000;
  reply.phases = sum->phases;
  return http::Response::Json(200, ingest_api::EncodePushReply(reply));
}

// Prepare pool. Parses the body, then uploads and runs it; answers errors itself.
// `body` is the request's, valid until `responder` answers (server.h).
void PreparePush(HandlerContext* ctx, std::string site, std::string key, std::string_view body,
                 std::shared_ptr<http::Responder> responder, std::shared_ptr<PushCounters> m) {
  auto p = std::make_shared<PreparedPush>();
  p->started_us = MonotonicUs();
  p->site = std::move(site);
  p->key.key = std::move(key);
  if (!p->key.key.empty()) p->key.body_sha256 = Sha256Hex(body);
  PushError err;
  if (!ingest_api::DecodePushRequest(body, ctx->limits, &p->request, &err, /*padded=*/true)) {
    m->rejected.Increment();
    log::Info("push rejected", {{"site", p->site}, {"error", err.status.message()}});
    Answer(ctx, responder, http::Response::Error(err.status, err.path));
    return;
  }
  UploadAndRun(ctx, p, std::move(responder), std::move(m));  // the parsed request holds what is needed
}

// Prepare pool. Parses the commit's own body (may be empty), then loads the
// stage on the writer loop.
void CommitStage(HandlerContext* ctx, std::string site, std::string stage, std::string key, std::string_view body,
                 std::shared_ptr<http::Responder> responder, std::shared_ptr<PushCounters> m) {
  auto p = std::make_shared<PreparedPush>();
  p->started_us = MonotonicUs();
  p->site = std::move(site);
  p->stage = std::move(stage);
  p->key.key = std::move(key);
  // The key covers the stage too: the same key on another stage is refused.
  if (!p->key.key.empty()) {
    Sha256Stream h;  // of "stage <ID>\n<body>", without copying the body
    h.Update("stage ");
    h.Update(p->stage);
    h.Update("\n");
    h.Update(body);
    p->key.body_sha256 = h.FinishHex();
  }
  auto own = std::make_shared<PushRequest>();
  if (body.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    PushError err;
    if (!ingest_api::DecodePushRequest(body, ctx->limits, own.get(), &err, /*padded=*/true)) {
      m->rejected.Increment();
      Answer(ctx, responder, http::Response::Error(err.status, err.path));
      return;
    }
  }
  ctx->writer_loop->Post([ctx, p, own, responder, m] { LoadStageForCommit(ctx, p, own, responder, m); });
}

}  // namespace

http::Response Replay(SiteWriter* writer, const PushRecord& rec, const std::string& body_sha256, PushCounters& m) {
  if (rec.body_sha256 != body_sha256) {
    m.rejected.Increment();
    return http::Response::Json(
        422, http::EncodeErrorBody({std::string(ingest_api::kIdempotencyKeyReused),
                                    "Idempotency-Key " + rec.key +
                                        " was already used for a push with a different body; send each new push "
                                        "with a new key",
                                    ""}));
  }
  m.replayed.Increment();
  log::Info("push replayed", {{"site", writer->site()}, {"key", rec.key}});
  ingest_api::PushReply replay;
  replay.published = writer->PublishPending();
  replay.replayed = true;
  http::Response r = http::Response::Json(200, ingest_api::EncodePushReply(rec.reply, replay));
  r.headers.emplace_back("Idempotent-Replayed", "true");
  return r;
}

void UploadAndRun(HandlerContext* ctx, std::shared_ptr<PreparedPush> p, std::shared_ptr<http::Responder> responder,
                  std::shared_ptr<PushCounters> m) {
  if (Status s = UploadAttachments(ctx->storage, &p->request.attachments); !s.ok()) {
    m->error.Increment();
    log::Error("push failed", {{"site", p->site}, {"error", s.message()}});
    Answer(ctx, responder, http::Response::Error(s));
    return;
  }
  std::vector<std::string> hashes;
  for (const PushAttachment& a : p->request.attachments) hashes.push_back(a.sha256);
  p->blobs_held = ctx->blobs_in_flight->Hold(std::move(hashes));
  OnWriter(ctx, responder, [ctx, p, m] { return RunPush(ctx, p.get(), *m); });
}

void HandlePush(HandlerContext* ctx, const std::shared_ptr<PushCounters>& m, const http::Request& req,
                http::Responder r) {
  Result<std::string> key = IdempotencyKey(req);
  if (!key.ok()) {
    m->rejected.Increment();
    r.SendError(key.status());
    return;
  }
  std::string site = SiteOf(ctx, req, r, &m->rejected);
  if (site.empty()) return;
  if (std::string stage = req.QueryParam("stage"); !stage.empty()) {
    return HandleStagedBatch(ctx, m, req, std::move(site), std::move(stage), std::move(r));
  }
  auto responder = std::make_shared<http::Responder>(std::move(r));
  ctx->prepare_pool->Submit([ctx, m, key = *key, site, body = req.body, responder] {
    PreparePush(ctx, site, key, body, responder, m);
  });
}

void HandleCommit(HandlerContext* ctx, const std::shared_ptr<PushCounters>& m, const http::Request& req,
                  http::Responder r) {
  Result<std::string> key = IdempotencyKey(req);
  std::string stage = req.QueryParam("stage");
  Status bad = key.ok() ? CheckStageId(stage) : key.status();
  if (!bad.ok()) {
    m->rejected.Increment();
    r.SendError(bad);
    return;
  }
  std::string site = SiteOf(ctx, req, r, &m->rejected);
  if (site.empty()) return;
  auto responder = std::make_shared<http::Responder>(std::move(r));
  ctx->prepare_pool->Submit([ctx, m, key = *key, stage, site, body = req.body, responder] {
    CommitStage(ctx, site, stage, key, body, responder, m);
  });
}

}  // namespace folio::ingest
