#include "handlers.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/log.h"
#include "folio/core/memory.h"
#include "folio/core/time.h"
#include "blob_upload.h"
#include "site_check.h"
#include "site_writer.h"
#include "stage.h"

namespace folio::ingest {
namespace {

// A push that rendered this many pages is a burst worth trimming the heap after.
constexpr size_t kReleaseHeapAfterPages = 1000;

// Push bodies are parsed where the connection holds them (no copy): the
// server leaves kBodyPadding readable bytes after a body for simdjson.
static_assert(http::kBodyPadding >= kPushBodyPadding);

// HTTP loop, in a handler behind SiteTokenCheck: the site of the request's
// token. The check found one but cannot hand it on, so it is looked up
// again; "" (after answering 401) if the site was removed since.
std::string SiteOf(HandlerContext* ctx, const http::Request& req, http::Responder& r, metrics::Counter* rejected) {
  std::string site = ctx->sites->Authenticate(req.BearerToken());
  if (site.empty()) {
    if (rejected != nullptr) rejected->Increment();
    r.Send(UnauthenticatedResponse());
  }
  return site;
}

// Sends `resp` from the HTTP loop (any thread).
void Answer(HandlerContext* ctx, std::shared_ptr<http::Responder> responder, http::Response resp) {
  auto r = std::make_shared<http::Response>(std::move(resp));
  ctx->http_loop->Post([responder, r] { responder->Send(std::move(*r)); });
}

// Runs `work` on the writer loop and sends its response from the HTTP loop.
void OnWriter(HandlerContext* ctx, std::shared_ptr<http::Responder> responder, std::function<http::Response()> work) {
  ctx->writer_loop->Post([ctx, responder, work = std::move(work)]() mutable { Answer(ctx, responder, work()); });
}

// Writer loop, before a write is applied: the lease may have lapsed since the
// request was admitted. An empty optional while this process may write.
std::optional<http::Response> NotLeader(const HandlerContext* ctx) {
  if (ctx->leader == nullptr || ctx->leader->leading()) return std::nullopt;
  return ctx->leader->NotLeaderResponse();
}

}  // namespace

namespace {

struct PushCounters {
  metrics::Counter& ok;
  metrics::Counter& rejected;
  metrics::Counter& error;
  metrics::Counter& replayed;
  metrics::Histogram& seconds;
  metrics::Counter& heap_releases;        // after pushes of kReleaseHeapAfterPages+ pages
  metrics::Counter& heap_released_bytes;  // RSS before minus after each of them
  metrics::Gauge& heap_bytes;             // malloc's bytes in use after the last of them
};

constexpr size_t kMaxKeyBytes = 128;

void WriteReport(const NoteReport& r, JsonWriter* w) {
  w->BeginObject().Key("path").String(r.path).Key("url").String(r.url);
  if (r.kind == NoteReport::Kind::kPushed && !r.published) w->Key("published").Bool(false);
  if (r.kind == NoteReport::Kind::kAttachment) w->Key("attachment").Bool(true);
  if (r.kind == NoteReport::Kind::kRerendered) w->Key("rerendered").Bool(true);
  w->Key("warnings").BeginArray();
  for (const auto& s : r.warnings) w->String(s);
  w->EndArray().EndObject();
}

// The part of a push's reply that a retry with the same Idempotency-Key
// gets again: {"version","received","changed","rendered","listings",
// "deleted","attachments_received","attachments_changed",
// "attachments_deleted","notes":[{"path","url",("published":false|
// "attachment":true|"rerendered":true),"warnings":[...]}],
// "settings":{"strict_line_breaks":B},("settings_changed":true)} (received,
// changed and deleted count notes and attachments; attachments_* the
// attachments among them; settings: the site's after the push).
std::string PushReplyRecord(const PushSummary& sum) {
  JsonWriter w;
  w.BeginObject().Key("version").Int(sum.version);
  w.Key("received").Int(static_cast<int64_t>(sum.received)).Key("changed").Int(static_cast<int64_t>(sum.changed));
  w.Key("rendered").Int(static_cast<int64_t>(sum.rendered)).Key("listings").Int(static_cast<int64_t>(sum.listings));
  w.Key("deleted").Int(static_cast<int64_t>(sum.deleted));
  w.Key("attachments_received").Int(static_cast<int64_t>(sum.att_received));
  w.Key("attachments_changed").Int(static_cast<int64_t>(sum.att_changed));
  w.Key("attachments_deleted").Int(static_cast<int64_t>(sum.att_deleted));
  w.Key("notes").BeginArray();
  for (const NoteReport& r : sum.notes) WriteReport(r, &w);
  w.EndArray();
  w.Key("settings").BeginObject().Key("strict_line_breaks").Bool(sum.strict_line_breaks).EndObject();
  if (sum.settings_changed) w.Key("settings_changed").Bool(true);
  w.EndObject();
  return w.Take();
}

// The reply: the recorded part, then whether it is published, how long it
// took (in total and per phase: "phases_ms":"hash=1 meta=3 ...", absent on
// a replay) and, for a retry answered from the record, "replayed".
std::string ReplyBody(std::string_view record, bool published, int64_t took_ms, bool replayed,
                      std::string_view phases = {}) {
  JsonWriter w;
  w.BeginObject().RawMembers(record).Key("published").Bool(published).Key("took_ms").Int(took_ms);
  if (!phases.empty()) w.Key("phases_ms").String(phases);
  if (replayed) w.Key("replayed").Bool(true);
  w.EndObject();
  return w.Take();
}

// Writer loop. A push whose Idempotency-Key is recorded already: the
// recorded reply again (nothing is applied), or 422 if the body differs.
http::Response Replay(SiteWriter* writer, const PushRecord& rec, const std::string& body_sha256,
                      PushCounters& m) {
  if (rec.body_sha256 != body_sha256) {
    m.rejected.Increment();
    return http::Response::Json(
        422, JsonError("idempotency_key_reused",
                       "Idempotency-Key " + rec.key +
                           " was already used for a push with a different body; send each new push with a new key"));
  }
  m.replayed.Increment();
  log::Info("push replayed", {{"site", writer->site()}, {"key", rec.key}});
  http::Response r = http::Response::Json(200, ReplyBody(rec.reply, writer->PublishPending(), 0, true));
  r.headers.emplace_back("Idempotent-Replayed", "true");
  return r;
}

// A push parsed, its attachments in storage, on its way to the writer.
struct PreparedPush {
  std::string site;
  PushKey key;          // key.key "" = no Idempotency-Key
  PushRequest request;
  std::string stage;    // "" = a plain push; else the staged import it commits
  int64_t started_us = 0;
  std::shared_ptr<void> blobs_held;  // its blobs, safe from collection until it is done
};

// Writer loop. One prepared push to its site's writer.
http::Response RunPush(HandlerContext* ctx, PreparedPush* p, PushCounters& m) {
  if (auto refused = NotLeader(ctx)) return std::move(*refused);
  SiteWriter* writer = ctx->sites->writer(p->site);
  if (!writer) {  // removed since the request was authenticated
    m.rejected.Increment();
    return http::Response::Error(Status::Unauthenticated(std::string(kUnauthenticated)));
  }
  const bool keyed = !p->key.key.empty();
  if (std::string path; ctx->crashed != nullptr) {
    if (Status s = ctx->crashed->Check(p->site, p->request, &path); !s.ok()) {
      m.rejected.Increment();
      log::Warn("push refused: a note crashed ingest", {{"site", p->site}, {"path", path}});
      return http::Response::Error(s, path);
    }
  }
  if (keyed) {
    auto found = writer->FindPush(p->key.key);
    if (!found.ok()) {
      m.error.Increment();
      log::Error("push key lookup failed", {{"site", p->site}, {"error", found.status().message()}});
      return http::Response::Error(Status::Internal("push key lookup failed"));
    }
    if (*found) return Replay(writer, **found, p->key.body_sha256, m);
  }
  size_t deletes = p->request.deletes.size();
  auto sum = writer->Push(std::move(p->request), keyed ? &p->key : nullptr, p->stage);
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
                               {"stage", p->stage}});
  if (sum->rendered + sum->listings >= kReleaseHeapAfterPages) {
    // The push's pages are freed by now, but malloc keeps their memory:
    // hand it back once the reply is on its way (the next writer task).
    // The counters belong to the registry, which outlives the writer loop.
    ctx->writer_loop->Post([store = ctx->sites->store(), releases = &m.heap_releases,
                            bytes = &m.heap_released_bytes, heap = &m.heap_bytes] {
      uint64_t before = ResidentBytes();
      if (Status s = store->ReleaseCache(); !s.ok()) log::Warn("freeing SQLite's cache failed", {{"error", s.message()}});
      ReleaseFreeHeap();
      uint64_t after = ResidentBytes();
      if (after < before) bytes->Increment(static_cast<double>(before - after));
      heap->Set(static_cast<double>(HeapInUseBytes()));
      // Last: a scrape that sees the release sees its bytes (fidelity_test
      // read a heap of 0 once, polling this counter on a loaded machine).
      releases->Increment();
    });
  }
  return http::Response::Json(200, ReplyBody(PushReplyRecord(*sum), sum->published, took_us / 1000, false,
                                             sum->phases));
}

void UploadAndRun(HandlerContext* ctx, std::shared_ptr<PreparedPush> p, std::shared_ptr<http::Responder> responder,
                  std::shared_ptr<PushCounters> m);

// Prepare pool. Parses the body, puts the attachments into storage, then
// hands the push to the writer loop; answers errors itself.
// `body` is the request's, valid until `responder` answers (server.h).
void PreparePush(HandlerContext* ctx, std::string site, std::string key, std::string_view body,
                 std::shared_ptr<http::Responder> responder, std::shared_ptr<PushCounters> m) {
  auto p = std::make_shared<PreparedPush>();
  p->started_us = MonotonicUs();
  p->site = std::move(site);
  p->key.key = std::move(key);
  p->key.encode_reply = &PushReplyRecord;
  if (!p->key.key.empty()) p->key.body_sha256 = Sha256Hex(body);
  PushError err;
  if (!ParsePushRequest(body, ctx->limits, &p->request, &err, /*padded=*/true)) {
    m->rejected.Increment();
    log::Info("push rejected", {{"site", p->site}, {"error", err.status.message()}});
    Answer(ctx, responder, http::Response::Error(err.status, err.path));
    return;
  }
  UploadAndRun(ctx, p, std::move(responder), std::move(m));  // the parsed request holds what is needed
}

// Prepare pool. Puts the attachments of `p` into storage, then hands it to
// the writer loop; answers errors itself.
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

// HTTP loop. The request's Idempotency-Key ("" if none), or an error.
Result<std::string> IdempotencyKey(const http::Request& req) {
  std::string_view key = req.GetHeader("Idempotency-Key");
  bool ok = key.size() <= kMaxKeyBytes;
  for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  if (!ok) {
    return Status::Invalid("Idempotency-Key must be 1 to " + std::to_string(kMaxKeyBytes) +
                           " characters of A-Z, a-z, 0-9, '-' and '_' (e.g. 32 random hex digits)");
  }
  return std::string(key);
}


// ---- Staged imports (stage.h) ----

// Writer loop. Drops the stages (of every site) unused for --stage-ttl.
void DropStaleStages(HandlerContext* ctx) {
  auto dropped = ctx->sites->store()->DropStaleStages(NowUnixMs() - ctx->stage.ttl_ms);
  if (!dropped.ok()) {
    log::Warn("dropping stale stages failed", {{"error", dropped.status().message()}});
  } else if (*dropped > 0) {
    log::Info("stale stages dropped", {{"batches", std::to_string(*dropped)}});
  }
}

// {"stage","batch","received","batches","bytes","expires_in_ms"}
std::string StagedReply(const std::string& stage, int64_t batch, size_t received, const StageInfo& info,
                        int64_t ttl_ms) {
  JsonWriter w;
  w.BeginObject().Key("stage").String(stage).Key("batch").Int(batch);
  w.Key("received").Int(static_cast<int64_t>(received)).Key("batches").Int(info.batches);
  w.Key("bytes").Int(info.bytes).Key("expires_in_ms").Int(ttl_ms).EndObject();
  return w.Take();
}

struct StagedBatch {
  std::string site, stage;
  int64_t batch = 0;
  std::string_view body;  // the request's, valid until it is answered
};

// Prepare pool. Validates a staged batch as a push (the same errors), then
// stores its body on the writer loop; nothing is applied.
void StageBatch(HandlerContext* ctx, StagedBatch b, std::shared_ptr<http::Responder> responder,
                std::shared_ptr<PushCounters> m) {
  size_t received = 0;
  {
    PushRequest parsed;
    PushError err;
    if (!ParsePushRequest(b.body, ctx->limits, &parsed, &err, /*padded=*/true)) {
      m->rejected.Increment();
      log::Info("staged batch rejected", {{"site", b.site}, {"stage", b.stage}, {"error", err.status.message()}});
      Answer(ctx, responder, http::Response::Error(err.status, err.path));
      return;
    }
    received = parsed.notes.size() + parsed.attachments.size() + parsed.deletes.size() +
               parsed.delete_attachments.size();
  }
  OnWriter(ctx, responder, [ctx, b = std::move(b), received, m] {
    if (auto refused = NotLeader(ctx)) return std::move(*refused);
    if (!ctx->sites->writer(b.site)) return http::Response::Error(Status::Unauthenticated(std::string(kUnauthenticated)));
    DropStaleStages(ctx);
    auto info = ctx->sites->store()->PutStageBatch(b.site, b.stage, b.batch, b.body, NowUnixMs(),
                                                   ctx->stage.max_bytes);
    if (!info.ok()) {
      (info.status().code() == Code::kTooLarge ? m->rejected : m->error).Increment();
      log::Warn("staged batch not stored", {{"site", b.site}, {"stage", b.stage}, {"error", info.status().message()}});
      return http::Response::Error(info.status());
    }
    log::Info("batch staged", {{"site", b.site}, {"stage", b.stage}, {"batch", std::to_string(b.batch)},
                               {"batches", std::to_string(info->batches)}, {"bytes", std::to_string(info->bytes)}});
    return http::Response::Json(200, StagedReply(b.stage, b.batch, received, *info, ctx->stage.ttl_ms));
  });
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
    if (!ParsePushRequest(body, ctx->limits, &r, &err)) return reject(err.status, err.path);
    std::string().swap(body);  // each body goes once parsed: the merge holds what is needed
    if (Status s = merged.Add(std::move(r)); !s.ok()) return reject(s, "");
  }
  if (Status s = merged.Add(std::move(*own)); !s.ok()) return reject(s, "");
  p->request = merged.Take();
  UploadAndRun(ctx, std::move(p), std::move(responder), std::move(m));
}

// Writer loop. A commit: the recorded reply if its key committed already,
// 404 if the stage has no batches, else the batches on to MergeStage.
void LoadStageForCommit(HandlerContext* ctx, std::shared_ptr<PreparedPush> p, std::shared_ptr<PushRequest> own,
                        std::shared_ptr<http::Responder> responder, std::shared_ptr<PushCounters> m) {
  SiteWriter* writer = ctx->sites->writer(p->site);
  if (!writer) {
    return Answer(ctx, responder, http::Response::Error(Status::Unauthenticated(std::string(kUnauthenticated))));
  }
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
    return Answer(ctx, responder, http::Response::Json(404, JsonError("stage_not_found",
        "stage " + p->stage + " holds no batches: none was uploaded, it was committed already, or it was dropped "
        "after --stage-ttl unused; upload its batches again")));
  }
  auto shared = std::make_shared<std::vector<std::string>>(std::move(*bodies));
  ctx->prepare_pool->Submit([ctx, p, shared, own, responder, m] { MergeStage(ctx, p, shared, own, responder, m); });
}

// Prepare pool. Parses the commit's own body (may be empty), then loads the
// stage on the writer loop.
void CommitStage(HandlerContext* ctx, std::string site, std::string stage, std::string key,
                 std::string_view body, std::shared_ptr<http::Responder> responder,
                 std::shared_ptr<PushCounters> m) {
  auto p = std::make_shared<PreparedPush>();
  p->started_us = MonotonicUs();
  p->site = std::move(site);
  p->stage = std::move(stage);
  p->key.key = std::move(key);
  p->key.encode_reply = &PushReplyRecord;
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
    if (!ParsePushRequest(body, ctx->limits, own.get(), &err, /*padded=*/true)) {
      m->rejected.Increment();
      Answer(ctx, responder, http::Response::Error(err.status, err.path));
      return;
    }
  }
  ctx->writer_loop->Post([ctx, p, own, responder, m] { LoadStageForCommit(ctx, p, own, responder, m); });
}

// HTTP loop. POST /api/v1/push?stage=ID&batch=N of `site`.
void HandleStagedBatch(HandlerContext* ctx, const std::shared_ptr<PushCounters>& counters, const http::Request& req,
                       std::string site, std::string stage, http::Responder r) {
  Result<int64_t> batch = ParseStageBatch(req.QueryParam("batch"));
  Status bad = batch.ok() ? CheckStageId(stage) : batch.status();
  if (!bad.ok()) {
    counters->rejected.Increment();
    r.SendError(bad);
    return;
  }
  auto responder = std::make_shared<http::Responder>(std::move(r));
  StagedBatch b{std::move(site), std::move(stage), *batch, req.body};
  ctx->prepare_pool->Submit([ctx, counters, b = std::move(b), responder]() mutable {
    StageBatch(ctx, std::move(b), responder, counters);
  });
}

// HTTP loop. The manifest's ?since=VERSION: -1 when absent (the full
// manifest), else a version >= 0, or an error naming the problem.
constexpr size_t kMaxExportAfter = 4096;
constexpr int kExportPageUrls = 1000;  // URLs per answer: ~50 KB of JSON

std::string ExportJson(const std::vector<std::string>& urls, int limit) {
  std::string out = "{\"urls\":[";
  for (size_t i = 0; i < urls.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(urls[i], &out);
  }
  out += "],\"next\":";
  AppendJsonString(static_cast<int>(urls.size()) == limit ? urls.back() : std::string(), &out);
  out += '}';
  return out;
}

Result<int64_t> ParseSince(const http::Request& req) {
  bool present = false;
  for (std::string_view q = req.query; !q.empty();) {
    std::string_view part = q.substr(0, q.find('&'));
    q.remove_prefix(std::min(q.size(), part.size() + 1));
    present = present || part == "since" || part.starts_with("since=");
  }
  if (!present) return int64_t{-1};
  std::string v = req.QueryParam("since");
  if (v.starts_with('-')) return Status::Invalid("since must not be negative, not '" + v + "'");
  bool digits = !v.empty() && v.size() <= 18;
  for (char c : v) digits = digits && c >= '0' && c <= '9';
  if (!digits) return Status::Invalid("since must be a version number (at most 18 digits), not '" + v + "'");
  return static_cast<int64_t>(std::stoll(v));
}

// Writer loop. The manifest (full, or the delta since `since`); with
// storage, the census then adds "missing_attachments": the paths of the
// site's attachments whose blobs storage cannot serve, so the CLI sends
// them again instead of counting them unchanged (issue 23). A census that
// cannot list storage leaves the key out (the manifest still answers).
void AnswerManifest(HandlerContext* ctx, std::shared_ptr<http::Responder> responder, const std::string& site,
                    int64_t since) {
  SiteWriter* writer = ctx->sites->writer(site);
  if (!writer) {
    return Answer(ctx, responder, http::Response::Error(Status::Unauthenticated(std::string(kUnauthenticated))));
  }
  Result<std::string> json = since < 0 ? writer->Epoch() : writer->ManifestDeltaJson(ctx->limits, since);
  if (!json.ok()) return Answer(ctx, responder, http::Response::Error(json.status()));
  if (since < 0) json = writer->ManifestJson(ctx->limits, *json);  // json held the epoch
  std::vector<std::pair<std::string, std::string>> attachments;
  if (ctx->census) attachments = writer->AttachmentHashes();
  if (attachments.empty()) return Answer(ctx, responder, http::Response::Json(200, std::move(json).value()));
  std::vector<std::string> hashes;
  hashes.reserve(attachments.size());
  for (const auto& a : attachments) hashes.push_back(a.second);
  auto on_checked = [ctx, responder, json = std::move(json).value(),
                     attachments = std::move(attachments)](Result<std::vector<size_t>> missing) mutable {
    if (!missing.ok()) {
      log::Warn("manifest: could not check storage for the attachments' blobs",
                {{"error", missing.status().message()}});
    } else if (!json.empty() && json.back() == '}') {
      JsonWriter w;
      w.BeginArray();
      for (size_t i : *missing) w.String(attachments[i].first);
      w.EndArray();
      json.pop_back();
      json += ",\"missing_attachments\":" + w.Take() + "}";
    }
    Answer(ctx, responder, http::Response::Json(200, std::move(json)));
  };
  ctx->census->Check(std::move(hashes), std::move(on_checked));
}

}  // namespace

void MountApi(http::Router* router, HandlerContext* ctx) {
  if (!ctx->storage.url.empty() && !ctx->census) ctx->census = std::make_shared<BlobCensus>(ctx->storage);
  auto counters = std::make_shared<PushCounters>(PushCounters{
      ctx->registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "ok"}}),
      ctx->registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "rejected"}}),
      ctx->registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "error"}}),
      ctx->registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "replayed"}}),
      ctx->registry->NewHistogram("folio_ingest_push_seconds", "Push latency", {0.001, 0.005, 0.02, 0.1, 0.5, 2, 10}),
      ctx->registry->NewCounter("folio_ingest_heap_releases_total",
                                "Freed heap handed back to the kernel after a push of 1,000 pages or more"),
      ctx->registry->NewCounter("folio_ingest_heap_released_bytes_total",
                                "Resident bytes those hand-backs returned (0 under sanitizers)"),
      ctx->registry->NewGauge("folio_ingest_heap_bytes",
                              "Heap bytes in use (malloc) after the last hand-back; the rest of the resident set is"
                              " code, stacks and freed heap")});
  // Every route of the API needs a site's token, checked from the headers
  // before a body is read (site_check.h).
  auto reload = std::make_shared<ReloadGate>(ctx->http_loop, ctx->writer_loop, ctx->sites);
  http::AdmissionCheck push_check = LeaderFirst(ctx->leader, SiteTokenCheck(reload, ctx->sites, &counters->rejected));
  http::AdmissionCheck read_check = SiteTokenCheck(reload, ctx->sites, nullptr);

  router->Handle("POST", "/api/v1/push", push_check, [ctx, counters](const http::Request& req, http::Responder r) {
    Result<std::string> key = IdempotencyKey(req);
    if (!key.ok()) {
      counters->rejected.Increment();
      r.SendError(key.status());
      return;
    }
    std::string site = SiteOf(ctx, req, r, &counters->rejected);
    if (site.empty()) return;
    if (std::string stage = req.QueryParam("stage"); !stage.empty()) {
      return HandleStagedBatch(ctx, counters, req, std::move(site), std::move(stage), std::move(r));
    }
    auto responder = std::make_shared<http::Responder>(std::move(r));
    ctx->prepare_pool->Submit([ctx, counters, key = *key, site, body = req.body, responder] {
      PreparePush(ctx, site, key, body, responder, counters);
    });
  }, "push");

  router->Handle("POST", "/api/v1/push/commit", push_check, [ctx, counters](const http::Request& req,
                                                                             http::Responder r) {
    Result<std::string> key = IdempotencyKey(req);
    std::string stage = req.QueryParam("stage");
    Status bad = key.ok() ? CheckStageId(stage) : key.status();
    if (!bad.ok()) {
      counters->rejected.Increment();
      r.SendError(bad);
      return;
    }
    std::string site = SiteOf(ctx, req, r, &counters->rejected);
    if (site.empty()) return;
    auto responder = std::make_shared<http::Responder>(std::move(r));
    ctx->prepare_pool->Submit([ctx, counters, key = *key, stage, site, body = req.body, responder] {
      CommitStage(ctx, site, stage, key, body, responder, counters);
    });
  }, "push_commit");

  router->Handle("GET", "/api/v1/manifest", read_check, [ctx](const http::Request& req, http::Responder r) {
    Result<int64_t> since = ParseSince(req);
    if (!since.ok()) {
      r.SendError(since.status());
      return;
    }
    std::string site = SiteOf(ctx, req, r, nullptr);
    if (site.empty()) return;
    auto responder = std::make_shared<http::Responder>(std::move(r));
    ctx->writer_loop->Post([ctx, responder, site, since = *since] { AnswerManifest(ctx, responder, site, since); });
  }, "manifest");

  // Every URL the site publishes, in bounded pages, for `folio export`:
  // {"urls":["/",...],"next":"URL"}; "next" is "" on the last page, else
  // the value of ?after= for the next one.
  router->Handle("GET", "/api/v1/export", read_check, [ctx](const http::Request& req, http::Responder r) {
    std::string after = req.QueryParam("after");
    if (after.size() > kMaxExportAfter) {
      r.SendError(Status::Invalid("after must be a URL path of at most 4096 bytes"));
      return;
    }
    std::string site = SiteOf(ctx, req, r, nullptr);
    if (site.empty()) return;
    OnWriter(ctx, std::make_shared<http::Responder>(std::move(r)), [ctx, site, after] {
      SiteWriter* writer = ctx->sites->writer(site);
      if (!writer) return http::Response::Error(Status::Unauthenticated(std::string(kUnauthenticated)));
      Result<std::vector<std::string>> urls = writer->PageUrls(after, kExportPageUrls);
      if (!urls.ok()) return http::Response::Error(urls.status());
      return http::Response::Json(200, ExportJson(*urls, kExportPageUrls));
    });
  }, "export");
}

}  // namespace folio::ingest
