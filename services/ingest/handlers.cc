#include "handlers.h"

#include <memory>

#include "folio/core/json.h"
#include "folio/core/log.h"
#include "folio/core/time.h"

namespace folio::ingest {
namespace {

// Constant-time comparison so the token cannot be guessed byte by byte.
bool SameSecret(std::string_view given, std::string_view token) {
  if (token.empty()) return false;
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ token[i % token.size()]);
  }
  return diff == 0;
}

bool Authorized(const http::Request& req, const std::string& token) {
  std::string_view auth = req.GetHeader("authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() <= kBearer.size() || auth.substr(0, kBearer.size()) != kBearer) return false;
  return SameSecret(auth.substr(kBearer.size()), token);
}

std::string ErrorBody(const Status& s, std::string_view path) {
  JsonWriter w;
  w.BeginObject().Key("error").BeginObject().Key("code").String(CodeName(s.code())).Key("message").String(s.message());
  if (!path.empty()) w.Key("path").String(path);
  w.EndObject().EndObject();
  return w.Take();
}

// Runs `work` on the writer loop and sends its response from the HTTP loop.
void OnWriter(HandlerContext* ctx, http::Responder r, std::function<http::Response()> work) {
  auto responder = std::make_shared<http::Responder>(std::move(r));
  ctx->writer_loop->Post([ctx, responder, work = std::move(work)]() mutable {
    auto resp = std::make_shared<http::Response>(work());
    ctx->http_loop->Post([responder, resp] { responder->Send(std::move(*resp)); });
  });
}

}  // namespace

int HttpStatusFor(Code code) {
  switch (code) {
    case Code::kOk: return 200;
    case Code::kInvalidArgument: return 400;
    case Code::kUnauthenticated: return 401;
    case Code::kPermissionDenied: return 403;
    case Code::kNotFound: return 404;
    case Code::kConflict: return 409;
    case Code::kTooLarge: return 413;
    case Code::kUnavailable: return 503;
    case Code::kDeadlineExceeded: return 504;
    case Code::kInternal: return 500;
  }
  return 500;
}

void MountApi(http::Router* router, HandlerContext* ctx) {
  auto& pushes_ok = ctx->registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "ok"}});
  auto& pushes_bad = ctx->registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "rejected"}});
  auto& pushes_err = ctx->registry->NewCounter("folio_ingest_pushes_total", "Push requests", {{"result", "error"}});
  auto& push_seconds = ctx->registry->NewHistogram("folio_ingest_push_seconds", "Push latency",
                                                   {0.001, 0.005, 0.02, 0.1, 0.5, 2, 10});

  router->Handle("POST", "/api/v1/push", [ctx, &pushes_ok, &pushes_bad, &pushes_err, &push_seconds](
                                              const http::Request& req, http::Responder r) {
    if (!Authorized(req, ctx->token)) {
      pushes_bad.Increment();
      r.SendError(401, "unauthenticated", "missing or wrong bearer token (Authorization: Bearer TOKEN)");
      return;
    }
    // The body view dies with the connection; the writer needs its own copy.
    auto body = std::make_shared<std::string>(req.body);
    OnWriter(ctx, std::move(r), [ctx, body, &pushes_ok, &pushes_bad, &pushes_err, &push_seconds] {
      int64_t t0 = MonotonicUs();
      PushRequest pr;
      PushError err;
      if (!ParsePushRequest(*body, ctx->limits, &pr, &err)) {
        pushes_bad.Increment();
        log::Info("push rejected", {{"error", err.status.message()}});
        return http::Response::Json(HttpStatusFor(err.status.code()), ErrorBody(err.status, err.path));
      }
      body->clear();
      body->shrink_to_fit();
      size_t deletes = pr.deletes.size();
      auto sum = ctx->writer->Push(std::move(pr));
      if (!sum.ok()) {
        pushes_err.Increment();
        log::Error("push failed", {{"error", sum.status().message()}});
        return http::Response::Json(HttpStatusFor(sum.status().code()), ErrorBody(sum.status(), ""));
      }
      int64_t took_ms = (MonotonicUs() - t0) / 1000;
      push_seconds.Observe(static_cast<double>(MonotonicUs() - t0) / 1e6);
      pushes_ok.Increment();
      log::Info("push committed", {{"site", ctx->writer->site()}, {"version", std::to_string(sum->version)},
                                   {"received", std::to_string(sum->received)},
                                   {"changed", std::to_string(sum->changed)},
                                   {"rendered", std::to_string(sum->rendered)},
                                   {"deleted", std::to_string(sum->deleted)},
                                   {"requested_deletes", std::to_string(deletes)},
                                   {"took_ms", std::to_string(took_ms)}});
      std::string out = "{\"version\":" + std::to_string(sum->version) +
                        ",\"received\":" + std::to_string(sum->received) +
                        ",\"changed\":" + std::to_string(sum->changed) +
                        ",\"rendered\":" + std::to_string(sum->rendered) +
                        ",\"deleted\":" + std::to_string(sum->deleted) +
                        ",\"published\":" + (sum->published ? "true" : "false") +
                        ",\"took_ms\":" + std::to_string(took_ms) + ",\"notes\":" + sum->notes_json + "}";
      return http::Response::Json(200, std::move(out));
    });
  });

  router->Handle("GET", "/api/v1/manifest", [ctx](const http::Request& req, http::Responder r) {
    if (!Authorized(req, ctx->token)) {
      r.SendError(401, "unauthenticated", "missing or wrong bearer token (Authorization: Bearer TOKEN)");
      return;
    }
    OnWriter(ctx, std::move(r), [ctx] { return http::Response::Json(200, ctx->writer->ManifestJson()); });
  });
}

}  // namespace folio::ingest
