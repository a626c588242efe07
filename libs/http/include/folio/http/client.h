// A small blocking HTTP/1.1 client over libcurl, for the CLI and tests.
// Not for services' hot paths. Thread-safe: each call uses its own handle.
// Responses are returned as sent: no automatic decompression, no redirects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folio/core/status.h"

namespace folio::http {

struct ClientRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  int64_t timeout_ms = 30'000;
};

struct ClientResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // in order received
  std::string body;
  // First header value by name, case-insensitive; "" if absent.
  std::string Header(std::string_view name) const;
};

// Fails with kUnavailable when the server cannot be reached or times out.
Result<ClientResponse> Fetch(const ClientRequest& req);
// As Fetch, but streamed through files so neither body is held in memory:
// if body_path is not empty the request body is read from that file (as it
// is sent; req.body is ignored); if response_path is not empty a 2xx body is
// written to that file (created or truncated) instead of resp.body, while
// other responses' bodies stay in resp.body. kUnavailable also when a file
// cannot be opened or written.
Result<ClientResponse> FetchFile(const ClientRequest& req, const std::string& body_path,
                                 const std::string& response_path);
Result<ClientResponse> Get(const std::string& url,
                           std::vector<std::pair<std::string, std::string>> headers = {});

// The JSON error body every folio server writes (Response::Error in
// server.h): {"error":{"code":"not_found","message":"...","path":"a.md"}}.
// "path" (the vault file a push failed on) is optional; so is "code" for a
// reader (an older or foreign server). Codes are CodeName's names plus a few
// of one API's own (libs/ingest_api/include/folio/ingest_api/error.h).
struct ErrorBody {
  std::string code;     // "" when the body has none
  std::string message;  // as sent: may hold newlines; callers bound it
  std::string path;     // "" when absent
};
// The body's fields; kInvalidArgument when it is not JSON or not an
// {"error":{...}} object, or a field has the wrong type.
Result<ErrorBody> DecodeErrorBody(std::string_view body);
// The same shape written: "path" only when not empty. Response::Error's bytes.
std::string EncodeErrorBody(const ErrorBody& e);

// The one reverse map of folio's errors (HttpStatusFor in server.h is the
// forward one): the Status an answer with `http_status` and `body` stands
// for. 2xx is OK. Otherwise the code is the error body's "code" when it is
// a Code's name (CodeNamed: so a 500 saying "data_loss" is kDataLoss, not
// kInternal), else CodeForHttpStatus(http_status) (folio/core/status.h:
// 401 kUnauthenticated, 503 kUnavailable, ...). The body is parsed as JSON,
// never searched for a word. The message is the body's "message" ("" when
// it has none); callers add whom they asked and what. Pure; any thread.
Status StatusFromHttp(int http_status, std::string_view body);

}  // namespace folio::http
