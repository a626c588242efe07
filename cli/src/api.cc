#include "api.h"

#include <utility>

#include "folio/http/client.h"

namespace folio::cli {
namespace {

// Sends one request; a transport failure or a non-200 answer becomes the
// user-facing Status, so callers only parse bodies.
Result<http::ClientResponse> Call(const ServerOptions& server, std::string method,
                                  std::string_view path, std::string body) {
  http::ClientRequest req;
  req.method = std::move(method);
  req.url = server.url + std::string(path);
  req.timeout_ms = server.timeout_ms;
  req.body = std::move(body);
  req.headers.emplace_back("Accept", "application/json");
  if (!req.body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  if (!server.token.empty()) req.headers.emplace_back("Authorization", "Bearer " + server.token);
  Result<http::ClientResponse> resp = http::Fetch(req);
  if (!resp.ok()) {
    const Status& st = resp.status();
    if (st.code() == Code::kUnavailable || st.code() == Code::kDeadlineExceeded) {
      return Status(st.code(), "cannot reach " + server.url + ": " + st.message());
    }
    return Status(st.code(), server.url + ": " + st.message());
  }
  if (resp->status != 200) return ErrorForResponse(server.url, path, resp->status, resp->body);
  return resp;
}

}  // namespace

Result<Manifest> FetchManifest(const ServerOptions& server) {
  Result<http::ClientResponse> resp = Call(server, "GET", kManifestPath, "");
  if (!resp.ok()) return resp.status();
  Result<Manifest> m = ParseManifest(resp->body);
  if (!m.ok()) return Status::Invalid(server.url + ": " + m.status().message());
  return m;
}

Result<PushReply> SendPush(const ServerOptions& server, std::string body) {
  Result<http::ClientResponse> resp = Call(server, "POST", kPushPath, std::move(body));
  if (!resp.ok()) return resp.status();
  Result<PushReply> r = ParsePushReply(resp->body);
  if (!r.ok()) return Status::Invalid(server.url + ": " + r.status().message());
  return r;
}

}  // namespace folio::cli
