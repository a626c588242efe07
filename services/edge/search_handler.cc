#include "search_handler.h"

#include <algorithm>
#include <utility>

#include "worker.h"
#include "search_params.h"

namespace folio::edge {

int ApplySearchReply(const bus::SearchReply& reply, site::SearchPage* p) {
  if (!reply.error.empty()) {
    p->error = reply.error;
    return http::UpstreamHttpStatusFor(reply.code);
  }
  size_t n = std::min(reply.hits.size(), static_cast<size_t>(kMaxSearchResults));
  p->results.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const bus::SearchHit& h = reply.hits[i];
    p->results.push_back({h.title, h.url, h.snippet, h.score});
  }
  p->took_us = reply.took_us;
  return 200;
}

http::Response SearchHttpResponse(int status, const site::SearchPage& p, bool fragment) {
  http::Response resp;
  resp.status = status;
  resp.headers = {{"Content-Type", "text/html; charset=utf-8"},
                  {"Cache-Control", "no-store"},
                  {"Content-Security-Policy", site::SearchPageCsp()},
                  {"X-Content-Type-Options", "nosniff"},
                  {"X-Robots-Tag", "noindex"},
                  {"Referrer-Policy", "same-origin"}};
  resp.body = fragment ? site::AssembleSearchResultsFragment(p) : site::AssembleSearchPage(p);
  return resp;
}

void Worker::ServeSearch(const http::Request& req, http::Responder r) {
  SearchParams params;
  Status parsed = ParseSearchParams(req.query, &params);
  std::string site = sites_.SiteOf(req.GetHeader("host"));
  site::SearchPage page;
  page.site.name = sites_.NameOf(site);
  page.query = params.q;
  page.mode = std::string(bus::SearchModeName(params.mode));
  auto count = [this](SearchOutcome o) {
    if (search_ != nullptr) search_->Count(o);
  };
  if (!parsed.ok()) {
    count(SearchOutcome::kInvalid);
    page.error = parsed.message();
    r.Send(SearchHttpResponse(400, page, params.fragment));
    return;
  }
  if (params.q.empty()) {
    count(SearchOutcome::kEmptyQuery);
    r.Send(SearchHttpResponse(200, page, params.fragment));
    return;
  }
  const uint64_t id = next_search_id_++;
  const bool fragment = params.fragment;
  // Runs on a pool thread: owns only values, so dropping it there (a loop
  // that stopped meanwhile refuses the Post) is harmless.
  auto done = [this, id, page, fragment](Result<bus::SearchReply> reply) mutable {
    loop_.Post([this, id, page = std::move(page), fragment, reply = std::move(reply)]() mutable {
      FinishSearch(id, std::move(page), fragment, std::move(reply));
    });
  };
  bus::SearchQuery query{std::move(site), params.q, params.k, params.mode};
  if (search_ == nullptr || !search_->Start(std::move(query), std::move(done))) {
    page.error = search_ == nullptr ? kSearchUnavailable : kSearchBusy;
    http::Response resp = SearchHttpResponse(503, page, fragment);
    resp.headers.emplace_back("Retry-After", "1");
    r.Send(std::move(resp));
    return;
  }
  // FinishSearch runs on this thread, so after this returns: no race.
  pending_searches_.emplace(id, std::move(r));
}

void Worker::FinishSearch(uint64_t id, site::SearchPage page, bool fragment, Result<bus::SearchReply> reply) {
  auto it = pending_searches_.find(id);
  if (it == pending_searches_.end()) return;
  http::Responder r = std::move(it->second);
  pending_searches_.erase(it);
  int status;
  if (!reply.ok()) {
    status = http::UpstreamHttpStatusFor(reply.status().code());
    page.error = kSearchUnavailable;
  } else {
    status = ApplySearchReply(*reply, &page);
  }
  r.Send(SearchHttpResponse(status, page, fragment));  // a no-op if the reader left meanwhile
}

}  // namespace folio::edge
