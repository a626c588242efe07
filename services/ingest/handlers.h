// HTTP API of folio-ingest: POST /api/v1/push and GET /api/v1/manifest.
// Handlers run on the HTTP loop; they authenticate (the bearer token selects
// one site: Sites::Authenticate), copy the body, and hand the work to that
// site's writer on the writer loop, which answers back through the HTTP loop.
// A token no site knows triggers one reload of the sites table (at most one
// per second, shared by every request waiting for it) before the 401, so a
// site added by `folio-ingest site add` works at once.
#pragma once

#include <string>

#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "push_request.h"
#include "sites.h"

namespace folio::ingest {

struct HandlerContext {
  http::Loop* http_loop;
  http::Loop* writer_loop;
  Sites* sites;         // Authenticate() on http_loop; the rest on writer_loop only
  PushLimits limits;
  metrics::Registry* registry;
};

// REQUIRES: ctx outlives the router.
void MountApi(http::Router* router, HandlerContext* ctx);

}  // namespace folio::ingest
