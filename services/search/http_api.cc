#include "http_api.h"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "folio/bus/search_schema.h"

namespace folio::search {
namespace {

// A reply as the HTTP API answers it: the reply itself, or the one JSON
// error body with the status its code maps to.
http::Response ReplyResponse(const bus::SearchReply& r) {
  if (!r.error.empty()) return http::Response::Error(Status(r.code, r.error));
  return http::Response::Json(200, bus::EncodeSearchReply(r));
}

// Reads ?k= into *k when present: an error reply if it is not an integer in
// 1..max (*k then holds what was parsed), else an empty one.
bus::SearchReply ParseK(const http::Request& req, int max, int* k) {
  std::string text = req.QueryParam("k");
  if (text.empty()) return {};
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  *k = static_cast<int>(v);
  if (*end != '\0' || v < 1 || v > max) {
    return ErrorReply(Code::kInvalidArgument, "k must be an integer in 1.." + std::to_string(max));
  }
  return {};
}

// The query of a /api/v1/search request in *q; an error reply for bad input.
bus::SearchReply ParseSearchQuery(const http::Request& req, bus::SearchQuery* q) {
  q->site = req.QueryParam("site");
  if (q->site.empty()) q->site = "default";
  q->q = req.QueryParam("q");
  std::string mode = req.QueryParam("mode");
  bus::SearchReply early = ParseK(req, bus::kMaxSearchK, &q->k);
  if (early.error.empty() && !mode.empty() && !bus::ParseSearchMode(mode, &q->mode)) {
    early = ErrorReply(Code::kInvalidArgument, "mode must be one of vector, text, hybrid");
  }
  if (early.error.empty()) {
    // One validation for NATS and HTTP: the request's own decoder.
    bus::SearchQuery checked;
    if (Status s = bus::DecodeSearchQuery(bus::EncodeSearchQuery(*q), &checked); !s.ok()) {
      early = ErrorReply(Code::kInvalidArgument, s.message());
    }
  }
  return early;
}

void OnSearch(const QueryApi& api, const http::Request& req, http::Responder resp) {
  auto t0 = std::chrono::steady_clock::now();
  bus::SearchQuery q;
  bus::SearchReply early = ParseSearchQuery(req, &q);
  if (!early.error.empty()) {
    api.indexer->Observe(t0, early, &api.metrics->search_queries);
    resp.Send(ReplyResponse(early));
    return;
  }
  auto shared = std::make_shared<http::Responder>(std::move(resp));
  api.query_pool->Submit([api, q, shared, t0] {
    auto r = std::make_shared<bus::SearchReply>(api.engine->Search(q));
    api.indexer->Observe(t0, *r, &api.metrics->search_queries);
    api.loop->Post([shared, r] { shared->Send(ReplyResponse(*r)); });
  });
}

void OnRelated(const QueryApi& api, const http::Request& req, http::Responder resp) {
  auto t0 = std::chrono::steady_clock::now();
  bus::RelatedQuery q;
  q.site = req.QueryParam("site");
  if (q.site.empty()) q.site = "default";
  q.path = req.QueryParam("path");
  bus::SearchReply r = ParseK(req, bus::kMaxRelatedK, &q.k);
  if (r.error.empty()) {
    bus::RelatedQuery checked;
    if (Status s = bus::DecodeRelatedQuery(bus::EncodeRelatedQuery(q), &checked); !s.ok()) {
      r = ErrorReply(Code::kInvalidArgument, s.message());
    } else {
      r = api.engine->Related(q);  // a lookup of a precomputed list: cheap enough for the loop
    }
  }
  api.indexer->Observe(t0, r, &api.metrics->related_queries);
  resp.Send(ReplyResponse(r));
}

}  // namespace

void MountQueryApi(http::Router* router, QueryApi api) {
  router->Handle("GET", "/api/v1/search", [api](const http::Request& req, http::Responder resp) {
    OnSearch(api, req, std::move(resp));
  }, "query");
  router->Handle("GET", "/api/v1/related", [api](const http::Request& req, http::Responder resp) {
    OnRelated(api, req, std::move(resp));
  }, "related");
}

}  // namespace folio::search
