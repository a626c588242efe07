// http_api.h: folio-search's HTTP query API, GET /api/v1/search and
// GET /api/v1/related. Both validate their parameters with the NATS
// request's own decoder and answer bad input with a 400 JSON error; a search
// runs on the query pool (embedding a query may block on --embed-url) and its
// answer is posted back to the loop; a related lookup (a precomputed list)
// is answered on the loop. Each query is counted by Indexer::Observe.
//
// Ownership: everything in QueryApi is borrowed and must outlive the router's
// server and the query pool's tasks. Threads: call MountQueryApi on the loop's
// thread before the server starts; the handlers run on the loop.
#pragma once

#include "engine.h"
#include "folio/core/thread_pool.h"
#include "folio/http/loop.h"
#include "folio/http/server.h"
#include "indexer.h"

namespace folio::search {

struct QueryApi {
  Engine* engine;
  Indexer* indexer;
  Metrics* metrics;
  ThreadPool* query_pool;
  http::Loop* loop;
};

// Mounts /api/v1/search (route class "query") and /api/v1/related ("related").
void MountQueryApi(http::Router* router, QueryApi api);

}  // namespace folio::search
