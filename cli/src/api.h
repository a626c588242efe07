// The CLI's two calls to folio-ingest, over folio::http's blocking client.
// Each call returns the parsed answer or a one-line error naming the problem
// ("cannot reach http://...: ...", "the server rejected the token ...").
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
};

// GET {url}/api/v1/manifest. Fails with kUnavailable if the server cannot be
// reached, with ErrorForResponse's status on a non-200 answer, and with
// kInvalidArgument if the answer is not a manifest.
Result<Manifest> FetchManifest(const ServerOptions& server);

// POST {url}/api/v1/push with `body` (from BuildPushBody). Failures as above.
Result<PushReply> SendPush(const ServerOptions& server, std::string body);

}  // namespace folio::cli
