// PageServer: a small HTTP server (libs/http, on its own loop thread) that
// answers fixed responses by exact path, for browser tests that need pages
// which break the rules on purpose (positive controls: the checks must be
// seen to fail). Unknown paths get the `not_found` response.
//
// Ownership: the server owns copies of the responses. Threading: construct
// and destroy on one thread; requests are served on the server's own thread.
// Listening failures abort the test (REQUIRE).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "folio/http/loop.h"
#include "folio/http/server.h"

namespace folio::e2e {

struct FixedResponse {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers = {};  // more headers
};

class PageServer {
 public:
  PageServer(std::map<std::string, FixedResponse> pages, FixedResponse not_found);
  ~PageServer();  // stops the loop and joins its thread
  PageServer(const PageServer&) = delete;
  PageServer& operator=(const PageServer&) = delete;

  // "http://127.0.0.1:<port>" + path.
  std::string Url(const std::string& path) const;

 private:
  std::map<std::string, FixedResponse> pages_;
  FixedResponse not_found_;
  http::Loop loop_;
  http::Router router_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
};

// A minimal complete HTML document around `body` (charset, title, and an
// empty icon so Chromium never asks for /favicon.ico).
std::string HtmlDocument(const std::string& body);

}  // namespace folio::e2e
