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

}  // namespace folio::http
