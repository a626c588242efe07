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
// but bad input), in the page's language (i18n.h search_unavailable,
// search_busy); the detail goes to metrics, never to the page.
std::string SearchUnavailable(const site::SearchPage& p);
std::string SearchBusy(const site::SearchPage& p);

// Fills p->results and p->took_us from a successful reply (at most
// kMaxSearchResults hits), or p->error from one that carries an error.
// Returns the HTTP status: 200, or http::UpstreamHttpStatusFor(reply.code)
// (the edge is a gateway to search: a search fault is 502, a timeout 504).
int ApplySearchReply(const bus::SearchReply& reply, site::SearchPage* p);

// The answer in the shape asked for. kPage and kFragment: the page, or only
// its results element, as text/html with the search page's CSP. kJson:
// SearchJson(p) when p.error is empty, else the usual JSON error body
// (http::Response::Error) with `error_code` and p.error as its message. All
// carry Cache-Control: no-store (an answer is only as fresh as the last
// push, and a query can be private), nosniff, X-Robots-Tag: noindex.
// REQUIRES: error_code != kOk when p.error is not empty and format is kJson.
http::Response SearchHttpResponse(int status, const site::SearchPage& p, SearchFormat format,
                                  Code error_code = Code::kOk);

// The JSON answer for the header's search box:
// {"query":"..","mode":"hybrid","hits":[{"title":"..","url":"/a%20b#h",
//  "path":"A/b.md","breadcrumb":"A","snippet":"..<mark>b</mark>..","score":0.5}],"took_us":123}
// url is ready to use as an href (site::SearchResultHref), snippet is
// site::SafeSnippetHtml (escaped text, only <mark> kept), breadcrumb is
// SearchBreadcrumb(path) and left out when empty.
std::string SearchJson(const site::SearchPage& p);

// The folders of a vault path, joined by " › ": "Features/Graph/Local.md"
// -> "Features › Graph"; "" for a note at the root.
std::string SearchBreadcrumb(std::string_view path);

}  // namespace folio::edge
