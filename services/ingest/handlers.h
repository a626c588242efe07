// HTTP API of folio-ingest: POST /api/v1/push and GET /api/v1/manifest.
// Handlers run on the HTTP loop; they authenticate, copy the body, and hand
// the work to the writer loop, which answers back through the HTTP loop.
#pragma once

#include <string>

#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "push_request.h"
#include "site_writer.h"

namespace folio::ingest {

struct HandlerContext {
  http::Loop* http_loop;
  http::Loop* writer_loop;
  SiteWriter* writer;   // used on writer_loop only
  std::string token;
  PushLimits limits;
  metrics::Registry* registry;
};

// REQUIRES: ctx outlives the router.
void MountApi(http::Router* router, HandlerContext* ctx);

// Maps a Status code to its HTTP status (the one place this happens).
int HttpStatusFor(Code code);

}  // namespace folio::ingest
