// The HTTP side of the reader-facing search: how search results and
// failures become responses. Worker::ServeSearch and Worker::FinishSearch
// (declared in worker.h) are defined in search_handler.cc with these.
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "folio/bus/search_schema.h"
#include "folio/core/status.h"
#include "folio/http/server.h"
#include "folio/site/search_page.h"
#include "search_params.h"

namespace folio::edge {

// What the reader is told when the search service cannot answer (any failure
// but bad input); the detail goes to metrics, never to the page.
inline constexpr std::string_view kSearchUnavailable = "Search is unavailable right now. Please try again in a moment.";
inline constexpr std::string_view kSearchBusy = "Search is busy right now. Please try again in a moment.";

// Fills p->results and p->took_us from a successful reply (at most
// kMaxSearchResults hits), or p->error from one that carries an error.
// Returns the HTTP status: 200, or http::UpstreamHttpStatusFor(reply.code)
// (the edge is a gateway to search: a search fault is 502, a timeout 504).
int ApplySearchReply(const bus::SearchReply& reply, site::SearchPage* p);

// The page (or, with fragment, only its results element) as a response:
// text/html, Cache-Control: no-store, the search page's CSP, nosniff.
http::Response SearchHttpResponse(int status, const site::SearchPage& p, bool fragment);

}  // namespace folio::edge
