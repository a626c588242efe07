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
Result<ClientResponse> Get(const std::string& url,
                           std::vector<std::pair<std::string, std::string>> headers = {});

}  // namespace folio::http
