// The CLI's calls to folio-ingest, over folio::http's blocking client.
// Each call returns the parsed answer or a one-line error naming the problem
// ("cannot reach http://...: ...", "the server rejected the token ...").
//
// Retries: while the server cannot be reached, times out or answers 500,
// 502, 503 or 504 (e.g. ingest restarting, or busy: its request-body budget
// full), a call is sent again with exponential backoff (0.25 s doubling to
// 4 s, with jitter; longer if the answer's Retry-After asks for more) until
// it gets another answer or retry_for_ms has passed since its first attempt; each
// retry prints one "folio: ...; retrying in ..." line on stderr. A push is
// safe to retry: each SendPush carries one random Idempotency-Key on all
// its attempts, and the server applies a key at most once (a retry of a
// push it committed gets the recorded reply, "replayed":true).
// Thread-safety: each call is independent; call from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "folio/core/status.h"
#include "plan.h"
#include "wire.h"

namespace folio::cli {

struct ServerOptions {
  std::string url = "http://127.0.0.1:8080";  // base URL, no trailing '/'
  std::string token;                          // "" sends no Authorization header
  int64_t timeout_ms = 120'000;               // per request; default 120 s
  int64_t retry_for_ms = 60'000;              // retries stop this long after the first attempt;
                                              // default 60 s; 0 = no retries
};

// Whether an attempt that failed so is worth another: the transport's
// Status, or the server's answer mapped by ErrorForResponse (the one reverse
// map, http::StatusFromHttp). Only what is transient: kUnavailable (no
// answer, 429, 502, 503 and a 5xx saying "unavailable") and
// kDeadlineExceeded (timeouts, 504). Never a 500 that says it is internal
// or data loss, nor a 4xx: the same request would fail the same way.
bool IsRetryable(const Status& failure);

// The wait before retry number `retry` (1, 2, ...): 250 ms doubling, at
// most 4 s, times a factor in [0.75, 1.25) from `jitter` in [0, 1).
int64_t BackoffMs(int retry, double jitter);

// GET {url}/api/v1/manifest, or with since >= 0 GET
// {url}/api/v1/manifest?since=SINCE (a delta; see Manifest). Fails with
// kUnavailable if the server cannot be reached, with ErrorForResponse's
// status on a non-200 answer, and with kInvalidArgument if the answer is
// not a manifest.
Result<Manifest> FetchManifest(const ServerOptions& server, int64_t since = -1);

// POST {url}/api/v1/push with `body` (from BuildPushBody) and a new random
// Idempotency-Key (the same on every retry). Failures as above.
Result<PushReply> SendPush(const ServerOptions& server, std::string body);

// Staged pushes (several batches, one commit; wire.h): POST
// {url}/api/v1/push?stage=STAGE&batch=N with `body` (from BuildPushBody).
// The server stores the batch and applies nothing; a retry replaces it.
// Failures as above.
Result<StageReply> StageBatch(const ServerOptions& server, const std::string& stage, size_t batch,
                              std::string body);
// POST {url}/api/v1/push/commit?stage=STAGE with a new random
// Idempotency-Key: every staged batch applied as one push, then `body` (""
// or a push body, e.g. only "settings"). Failures as above (kNotFound if
// the server holds no batch of the stage).
Result<PushReply> CommitStage(const ServerOptions& server, const std::string& stage, std::string body = "");

// GET {url}/api/v1/export?after=AFTER: the next page of the site's URLs
// (wire.h ExportPage). Failures as FetchManifest.
Result<ExportPage> FetchExportPage(const ServerOptions& server, const std::string& after);

}  // namespace folio::cli
