// RouterInternal: what the Server needs of a Router beyond Dispatch: finding
// the route of a request once its headers are in, before its body is read.
// Loop thread only (a Router is read-only once serving).
#pragma once

#include <string_view>

#include "folio/http/server.h"

namespace folio::http {

class RouterInternal {
 public:
  using Route = Router::Route;

  // The route that answers method + path (rules in router.cc), or null when
  // none does (then Router::Dispatch answers 405, the fallback or 404).
  static const Route* Find(const Router& router, std::string_view method, std::string_view path);
  // The route class of a request no route matches: the Fallback's, else
  // kOtherRouteClass.
  static std::string_view UnroutedClass(const Router& router);
  static bool HasFallback(const Router& router) { return router.fallback_ != nullptr; }
  // Runs a streaming route's handler for a request whose body is complete
  // (Router::Dispatch's rule: req.body as one OnData, then OnEnd).
  static void RunWithBody(const Route& route, const Request& req, Responder r);
};

}  // namespace folio::http
