// The ingest API's gate and thread hops (handlers_internal.h).
#include <cctype>

#include "folio/ingest_api/limits.h"
#include "handlers_internal.h"

namespace folio::ingest {

std::shared_ptr<PushCounters> NewPushCounters(metrics::Registry* registry) {
  return std::make_shared<PushCounters>(PushCounters{
      registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "ok"}}),
      registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "rejected"}}),
      registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "error"}}),
      registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "replayed"}}),
      registry->NewHistogram("folio_ingest_push_seconds", "Push latency", {0.001, 0.005, 0.02, 0.1, 0.5, 2, 10}),
      registry->NewCounter("folio_ingest_heap_releases_total",
                           "Freed heap handed back to the kernel after a push of 1,000 pages or more"),
      registry->NewCounter("folio_ingest_heap_released_bytes_total",
                           "Resident bytes those hand-backs returned (0 under sanitizers)"),
      registry->NewGauge("folio_ingest_heap_bytes",
                         "Heap bytes in use (malloc), read after a hand-back at most every 30 s; the rest of the"
                         " resident set is code, stacks and freed heap")});
}

// The check found the site but cannot hand it on, so it is looked up again.
std::string SiteOf(HandlerContext* ctx, const http::Request& req, http::Responder& r, metrics::Counter* rejected) {
  std::string site = ctx->sites->Authenticate(req.BearerToken());
  if (site.empty()) {
    if (rejected != nullptr) rejected->Increment();
    r.Send(UnauthenticatedResponse());
  }
  return site;
}

void Answer(HandlerContext* ctx, std::shared_ptr<http::Responder> responder, http::Response resp) {
  auto r = std::make_shared<http::Response>(std::move(resp));
  ctx->http_loop->Post([responder, r] { responder->Send(std::move(*r)); });
}

void OnWriter(HandlerContext* ctx, std::shared_ptr<http::Responder> responder, std::function<http::Response()> work) {
  ctx->writer_loop->Post([ctx, responder, work = std::move(work)]() mutable { Answer(ctx, responder, work()); });
}

std::optional<http::Response> NotLeader(const HandlerContext* ctx) {
  if (ctx->leader == nullptr || ctx->leader->leading()) return std::nullopt;
  return ctx->leader->NotLeaderResponse();
}

http::Response SiteGone() { return http::Response::Error(Status::Unauthenticated(std::string(kUnauthenticated))); }

Result<std::string> IdempotencyKey(const http::Request& req) {
  constexpr size_t kMaxKeyBytes = ingest_api::kMaxIdempotencyKeyBytes;
  std::string_view key = req.GetHeader(ingest_api::kIdempotencyKeyHeader);
  bool ok = key.size() <= kMaxKeyBytes;
  for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  if (!ok) {
    return Status::Invalid("Idempotency-Key must be 1 to " + std::to_string(kMaxKeyBytes) +
                           " characters of A-Z, a-z, 0-9, '-' and '_' (e.g. 32 random hex digits)");
  }
  return std::string(key);
}

}  // namespace folio::ingest
