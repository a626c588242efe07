#include "api.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <utility>

#include "folio/core/secret.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/http/client.h"

namespace folio::cli {
namespace {

// Sends one request, retrying as the header says; a transport failure or a
// non-200 answer becomes the user-facing Status, so callers only parse bodies.
Result<http::ClientResponse> Call(const ServerOptions& server, std::string method, std::string_view path,
                                  std::string body, std::vector<std::pair<std::string, std::string>> headers = {}) {
  http::ClientRequest req;
  req.method = std::move(method);
  req.url = server.url + std::string(path);
  req.timeout_ms = server.timeout_ms;
  req.body = std::move(body);
  req.headers = std::move(headers);
  req.headers.emplace_back("Accept", "application/json");
  if (!req.body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  if (!server.token.empty()) req.headers.emplace_back("Authorization", "Bearer " + server.token);
  const int64_t start_us = MonotonicUs();
  std::mt19937 rng(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    Result<http::ClientResponse> resp = http::Fetch(req);
    Status st;
    if (!resp.ok()) {
      const Status& t = resp.status();
      bool unreachable = t.code() == Code::kUnavailable || t.code() == Code::kDeadlineExceeded;
      st = Status(t.code(), (unreachable ? "cannot reach " : "") + server.url + ": " + t.message());
    } else if (resp->status != 200) {
      st = ErrorForResponse(server.url, path, resp->status, resp->body);
    } else {
      return resp;
    }
    const int64_t elapsed_ms = (MonotonicUs() - start_us) / 1000;
    // A server that says when to come back (Retry-After, e.g. ingest's 503
    // while its request-body budget is full) is not asked sooner.
    const int64_t asked_ms = resp.ok() ? RetryAfterMs(resp->Header("Retry-After"), NowUnixMs() / 1000) : 0;
    const int64_t wait_ms =
        std::max(BackoffMs(attempt, std::uniform_real_distribution<double>(0, 1)(rng)), asked_ms);
    if (!IsRetryable(st)) return st;
    if (elapsed_ms + wait_ms > server.retry_for_ms) {
      if (attempt == 1) return st;
      return Status(st.code(), st.message() + " (gave up after " + std::to_string(attempt) + " attempts in " +
                                   std::to_string((elapsed_ms + 500) / 1000) + " s; --retry-for " +
                                   std::to_string(server.retry_for_ms / 1000) + " s)");
    }
    std::fprintf(stderr, "folio: %s; retrying in %.1f s (attempt %d; giving up %lld s after the first)\n",
                 st.message().c_str(), static_cast<double>(wait_ms) / 1000, attempt + 1,
                 static_cast<long long>(server.retry_for_ms / 1000));
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
}

// POST `path` with a new random Idempotency-Key (the same on every
// retry); the answer is a push reply.
Result<PushReply> SendKeyed(const ServerOptions& server, std::string_view path, std::string body) {
  Result<std::string> key = RandomHex(16);  // 128 bits: one push, all its attempts
  if (!key.ok()) return key.status();
  Result<http::ClientResponse> resp =
      Call(server, "POST", path, std::move(body), {{std::string(kIdempotencyKeyHeader), *key}});
  if (!resp.ok()) return resp.status();
  Result<PushReply> r = ParsePushReply(resp->body);
  if (!r.ok()) return Status::Invalid(server.url + ": " + r.status().message());
  return r;
}

}  // namespace

bool IsRetryable(const Status& failure) {
  return failure.code() == Code::kUnavailable || failure.code() == Code::kDeadlineExceeded;
}

int64_t BackoffMs(int retry, double jitter) {
  int64_t base = 250;
  for (int i = 1; i < retry && base < 4000; ++i) base *= 2;
  base = std::min<int64_t>(base, 4000);
  return static_cast<int64_t>(static_cast<double>(base) * (0.75 + 0.5 * jitter));
}

Result<Manifest> FetchManifest(const ServerOptions& server, int64_t since) {
  std::string path(kManifestPath);
  if (since >= 0) path += "?since=" + std::to_string(since);
  Result<http::ClientResponse> resp = Call(server, "GET", path, "");
  if (!resp.ok()) return resp.status();
  Result<Manifest> m = ParseManifest(resp->body);
  if (!m.ok()) return Status::Invalid(server.url + ": " + m.status().message());
  return m;
}

Result<ExportPage> FetchExportPage(const ServerOptions& server, const std::string& after) {
  std::string path = std::string(kExportPath) + "?after=" + PercentEncodePath(after);
  Result<http::ClientResponse> resp = Call(server, "GET", path, "");
  if (!resp.ok()) return resp.status();
  Result<ExportPage> page = ParseExportPage(resp->body);
  if (!page.ok()) return Status::Invalid(server.url + ": " + page.status().message());
  return page;
}

Result<PushReply> SendPush(const ServerOptions& server, std::string body) {
  return SendKeyed(server, kPushPath, std::move(body));
}

Result<StageReply> StageBatch(const ServerOptions& server, const std::string& stage, size_t batch,
                              std::string body) {
  std::string path = std::string(kPushPath) + "?stage=" + stage + "&batch=" + std::to_string(batch);
  Result<http::ClientResponse> resp = Call(server, "POST", path, std::move(body));
  if (!resp.ok()) return resp.status();
  Result<StageReply> r = ParseStageReply(resp->body);
  if (!r.ok()) return Status::Invalid(server.url + ": " + r.status().message());
  return r;
}

Result<PushReply> CommitStage(const ServerOptions& server, const std::string& stage, std::string body) {
  return SendKeyed(server, std::string(kCommitPath) + "?stage=" + stage, std::move(body));
}

}  // namespace folio::cli
