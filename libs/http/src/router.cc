// Router and the Request helpers.
//
// Matching: among routes whose path matches (exact: equal; prefix: starts
// with) and whose method matches (GET also answers HEAD), an exact route
// beats a prefix one, a longer prefix beats a shorter one, and the earlier
// registration wins a tie. If some route's path matched but none its method,
// the answer is 405 with Allow listing every method those routes accept.
// Streaming routes (HandleStreaming*) match by the same rules; the Server
// finds the route once the headers are in, to know how to read the body and
// whether an AdmissionCheck vets the request first.
#include <string>
#include <utility>

#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/http/client.h"
#include "folio/http/server.h"
#include "router_internal.h"

namespace folio::http {

namespace {

bool MethodMatches(std::string_view route_method, std::string_view method) {
  return route_method == method || (method == "HEAD" && route_method == "GET");
}

bool PathMatches(bool prefix, std::string_view route_path, std::string_view path) {
  return prefix ? StartsWith(path, route_path) : path == route_path;
}

void AddAllowed(std::string_view method, std::string* allow) {
  size_t pos = 0;
  while (pos < allow->size()) {
    size_t comma = allow->find(", ", pos);
    if (comma == std::string::npos) comma = allow->size();
    if (std::string_view(*allow).substr(pos, comma - pos) == method) return;
    pos = comma + 2;
  }
  if (!allow->empty()) allow->append(", ");
  allow->append(method);
}

// '+' is a space in query strings; "%2B" still decodes to '+'. A malformed
// escape leaves the text as sent rather than dropping it.
std::string DecodeQueryComponent(std::string_view in) {
  std::string plus(in);
  for (char& ch : plus) {
    if (ch == '+') ch = ' ';
  }
  std::string out;
  return PercentDecode(plus, &out) ? out : plus;
}

}  // namespace

std::string_view Request::GetHeader(std::string_view name) const {
  for (const Header& h : headers) {
    if (EqualsIgnoreAsciiCase(h.name, name)) return h.value;
  }
  return {};
}

std::string_view Request::BearerToken() const {
  std::string_view auth = GetHeader("authorization");
  constexpr std::string_view kScheme = "bearer";
  if (auth.size() <= kScheme.size() || !EqualsIgnoreAsciiCase(auth.substr(0, kScheme.size()), kScheme)) return {};
  std::string_view token = auth.substr(kScheme.size());
  if (token.front() != ' ' && token.front() != '\t') return {};  // "Bearerx": another scheme
  while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  return token;
}

int HttpStatusFor(Code code) {
  switch (code) {
    case Code::kOk: return 500;  // a caller bug: never "200 error"
    case Code::kInvalidArgument: return 400;
    case Code::kUnauthenticated: return 401;
    case Code::kPermissionDenied: return 403;
    case Code::kNotFound: return 404;
    case Code::kConflict: return 409;
    case Code::kTooLarge: return 413;
    case Code::kUnavailable: return 503;
    case Code::kDeadlineExceeded: return 504;
    case Code::kNoSpace: return 507;
    case Code::kDataLoss: return 500;
    case Code::kInternal: return 500;
    case Code::kUnprocessable: return 422;
  }
  return 500;
}

int UpstreamHttpStatusFor(Code code) {
  int status = HttpStatusFor(code);
  return status == 500 ? 502 : status;
}

Status StatusFromHttp(int http_status, std::string_view body) {
  if (http_status >= 200 && http_status < 300) return Status::Ok();
  Code code = CodeForHttpStatus(http_status);
  Result<ErrorBody> e = DecodeErrorBody(body);
  if (!e.ok()) return Status(code, "");
  if (std::optional<Code> named = CodeNamed(e->code); named && *named != Code::kOk) code = *named;
  return Status(code, std::move(e->message));
}

std::string Request::QueryParam(std::string_view key) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    size_t eq = pair.find('=');
    std::string_view name = pair.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    bool encoded = name.find_first_of("%+") != std::string_view::npos;
    if (name == key || (encoded && DecodeQueryComponent(name) == key)) {
      return DecodeQueryComponent(value);
    }
  }
  return {};
}

void Router::Handle(std::string_view method, std::string path, Handler h, std::string_view route_class,
                    uint64_t max_body_bytes) {
  Handle(method, std::move(path), nullptr, std::move(h), route_class, max_body_bytes);
}

void Router::HandlePrefix(std::string_view method, std::string prefix, Handler h, std::string_view route_class,
                          uint64_t max_body_bytes) {
  HandlePrefix(method, std::move(prefix), nullptr, std::move(h), route_class, max_body_bytes);
}

void Router::Handle(std::string_view method, std::string path, AdmissionCheck admission, Handler h,
                    std::string_view route_class, uint64_t max_body_bytes) {
  routes_.push_back({std::string(method), std::move(path), false, std::move(h), nullptr, max_body_bytes,
                     std::string(route_class), std::move(admission)});
}

void Router::HandlePrefix(std::string_view method, std::string prefix, AdmissionCheck admission, Handler h,
                          std::string_view route_class, uint64_t max_body_bytes) {
  routes_.push_back({std::string(method), std::move(prefix), true, std::move(h), nullptr, max_body_bytes,
                     std::string(route_class), std::move(admission)});
}

void Router::HandleStreaming(std::string_view method, std::string path, StreamingHandler h,
                             uint64_t max_body_bytes, std::string_view route_class) {
  HandleStreaming(method, std::move(path), nullptr, std::move(h), max_body_bytes, route_class);
}

void Router::HandleStreamingPrefix(std::string_view method, std::string prefix, StreamingHandler h,
                                   uint64_t max_body_bytes, std::string_view route_class) {
  HandleStreamingPrefix(method, std::move(prefix), nullptr, std::move(h), max_body_bytes, route_class);
}

void Router::HandleStreaming(std::string_view method, std::string path, AdmissionCheck admission, StreamingHandler h,
                             uint64_t max_body_bytes, std::string_view route_class) {
  routes_.push_back({std::string(method), std::move(path), false, nullptr, std::move(h), max_body_bytes,
                     std::string(route_class), std::move(admission)});
}

void Router::HandleStreamingPrefix(std::string_view method, std::string prefix, AdmissionCheck admission,
                                   StreamingHandler h, uint64_t max_body_bytes, std::string_view route_class) {
  routes_.push_back({std::string(method), std::move(prefix), true, nullptr, std::move(h), max_body_bytes,
                     std::string(route_class), std::move(admission)});
}

void Router::Fallback(Handler h, std::string_view route_class) {
  fallback_ = std::move(h);
  fallback_class_ = std::string(route_class);
}

const Router::Route* RouterInternal::Find(const Router& router, std::string_view method,
                                          std::string_view path) {
  const Route* best = nullptr;
  for (const Route& route : router.routes_) {
    if (!PathMatches(route.prefix, route.path, path) || !MethodMatches(route.method, method)) continue;
    bool better = best == nullptr || (best->prefix && !route.prefix) ||
                  (best->prefix && route.prefix && route.path.size() > best->path.size());
    if (better) best = &route;
  }
  return best;
}

std::string_view RouterInternal::UnroutedClass(const Router& router) {
  return router.fallback_ ? std::string_view(router.fallback_class_) : kOtherRouteClass;
}

void RouterInternal::RunWithBody(const Route& route, const Request& req, Responder r) {
  std::shared_ptr<BodyReader> reader = route.streaming(req, std::move(r));
  if (reader == nullptr) return;
  Status s = req.body.empty() ? Status::Ok() : reader->OnData(req.body);
  if (s.ok()) {
    reader->OnEnd();
  } else {
    reader->OnAbort(s);
  }
}

void Router::Dispatch(const Request& req, Responder r) const {
  if (const Route* best = RouterInternal::Find(*this, req.method, req.path)) {
    if (best->handler) {
      best->handler(req, std::move(r));
    } else {
      RouterInternal::RunWithBody(*best, req, std::move(r));
    }
    return;
  }
  std::string allow;
  for (const Route& route : routes_) {
    if (!PathMatches(route.prefix, route.path, req.path)) continue;
    AddAllowed(route.method, &allow);
    if (route.method == "GET") AddAllowed("HEAD", &allow);
  }
  if (!allow.empty()) {
    Response resp = Response::Json(405, JsonError("method_not_allowed", "method not allowed here"));
    resp.headers.emplace_back("Allow", std::move(allow));
    r.Send(std::move(resp));
    return;
  }
  if (fallback_) {
    fallback_(req, std::move(r));
    return;
  }
  r.SendError(404, "not_found", "no route for this path");
}

}  // namespace folio::http
