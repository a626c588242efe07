#include "page_server.h"

#include <doctest/doctest.h>

namespace folio::e2e {

PageServer::PageServer(std::map<std::string, FixedResponse> pages, FixedResponse not_found)
    : pages_(std::move(pages)), not_found_(std::move(not_found)) {
  router_.Fallback([this](const http::Request& req, http::Responder r) {
    auto it = pages_.find(std::string(req.path));
    const FixedResponse& page = it == pages_.end() ? not_found_ : it->second;
    http::Response resp;
    resp.status = page.status;
    resp.headers.emplace_back("Content-Type", page.content_type);
    for (const auto& h : page.headers) resp.headers.push_back(h);
    resp.body = page.body;
    r.Send(std::move(resp));
  });
  server_ = std::make_unique<http::Server>(&loop_, &router_);
  REQUIRE(server_->Listen("127.0.0.1", 0).ok());
  thread_ = std::thread([this] { loop_.Run(); });
}

PageServer::~PageServer() {
  loop_.Stop();
  thread_.join();
  server_.reset();
}

std::string PageServer::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(server_->port()) + path;
}

std::string HtmlDocument(const std::string& body) {
  return "<!doctype html><html><head><meta charset=\"utf-8\"><title>t</title>"
         "<link rel=\"icon\" href=\"data:,\"></head><body>" + body + "</body></html>";
}

}  // namespace folio::e2e
