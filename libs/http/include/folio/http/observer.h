// RequestObserver: what a Server reports about each request it answered,
// for request metrics (libs/metrics implements it). Set on a Router
// (Router::Observe); every Server serving that Router calls it.
//
// Route classes: each route carries a small fixed class name given when it
// is registered (Router::Handle's route_class: "page", "push", "ops", ...;
// default kOtherRouteClass); a handler may narrow it for one request
// (Responder::SetRouteClass). Requests answered before routing (a malformed
// request, 408, 414, 431) and unrouted ones without a Fallback count as
// kOtherRouteClass.
//
// Threading: called on the loop thread of the Server that answered; a
// Router served by several Servers on several loops (the edge's workers)
// calls it from each at once, so implementations are thread-safe. It runs on
// the hot path: no I/O, no locks held long, no allocation in steady state.
#pragma once

#include <string_view>

namespace folio::http {

inline constexpr std::string_view kOtherRouteClass = "other";

class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  // A response was written whole: the route class, its HTTP status, and the
  // seconds from the request's first byte read to the response's last byte
  // written. A response the client never read whole (it went away, or the
  // connection closed first) is not reported.
  virtual void OnRequestDone(std::string_view route_class, int status, double seconds) = 0;
};

}  // namespace folio::http
