#include "search_handler.h"

#include <algorithm>
#include <utility>

#include "folio/core/json.h"
#include "folio/site/i18n.h"
#include "worker.h"
#include "search_params.h"

namespace folio::edge {

std::string SearchUnavailable(const site::SearchPage& p) {
  return std::string(site::StringsFor(site::PageLang("", p.site.lang)).search_unavailable);
}

std::string SearchBusy(const site::SearchPage& p) {
  return std::string(site::StringsFor(site::PageLang("", p.site.lang)).search_busy);
}

int ApplySearchReply(const bus::SearchReply& reply, site::SearchPage* p) {
  if (!reply.error.empty()) {
    p->error = reply.error;
    return http::UpstreamHttpStatusFor(reply.code);
  }
  size_t n = std::min(reply.hits.size(), static_cast<size_t>(kMaxSearchResults));
  p->results.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const bus::SearchHit& h = reply.hits[i];
    p->results.push_back({h.title, h.url, h.snippet, h.score, h.path});
  }
  p->took_us = reply.took_us;
  return 200;
}

http::Response SearchHttpResponse(int status, const site::SearchPage& p, SearchFormat format, Code error_code) {
  http::Response resp;
  if (format == SearchFormat::kJson) {
    resp = p.error.empty() ? http::Response::Json(status, SearchJson(p))
                           : http::Response::Error(status, Status(error_code, p.error));
  } else {
    resp.status = status;
    resp.headers = {{"Content-Type", "text/html; charset=utf-8"},
                    {"Content-Security-Policy", site::SearchPageCsp(p.site)},
                    {"Referrer-Policy", "same-origin"}};
    resp.body = format == SearchFormat::kFragment ? site::AssembleSearchResultsFragment(p)
                                                  : site::AssembleSearchPage(p);
  }
  resp.headers.insert(resp.headers.end(), {{"Cache-Control", "no-store"},
                                           {"X-Content-Type-Options", "nosniff"},
                                           {"X-Robots-Tag", "noindex"}});
  return resp;
}

std::string SearchBreadcrumb(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  std::string out;
  for (std::string_view dirs = path.substr(0, slash); !dirs.empty();) {
    size_t next = dirs.find('/');
    std::string_view part = dirs.substr(0, next);
    if (!part.empty()) {
      if (!out.empty()) out += " \u203a ";
      out += part;
    }
    dirs = next == std::string_view::npos ? std::string_view() : dirs.substr(next + 1);
  }
  return out;
}

std::string SearchJson(const site::SearchPage& p) {
  JsonWriter w;
  w.BeginObject().Key("query").String(p.query).Key("mode").String(p.mode.empty() ? "hybrid" : p.mode);
  w.Key("hits").BeginArray();
  for (const site::SearchResultItem& r : p.results) {
    w.BeginObject().Key("title").String(r.title.empty() ? r.url : r.title);
    w.Key("url").String(site::SearchResultHref(r.url)).Key("path").String(r.path);
    if (std::string crumb = SearchBreadcrumb(r.path); !crumb.empty()) w.Key("breadcrumb").String(crumb);
    w.Key("snippet").String(site::SafeSnippetHtml(r.snippet_html)).Key("score").Double(r.score).EndObject();
  }
  w.EndArray().Key("took_us").Int(p.took_us).EndObject();
  return w.Take();
}

void Worker::ServeSearch(const http::Request& req, http::Responder r) {
  SearchParams params;
  Status parsed = ParseSearchParams(req.query, &params);
  // A private site's search answers only its signed-in readers.
  if (GateSearch(req, &r, params.format != SearchFormat::kPage)) return;
  std::string site = sites_.SiteOf(req.GetHeader("host"));
  site::SearchPage page;
  page.site.name = sites_.NameOf(site);
  page.site.lang = sites_.LangOf(site);  // the site's language, as its 404 page says (issue 29)
  page.site.analytics = sites_.AnalyticsOf(site);  // the site's analytics, as on its published pages
  page.query = params.q;
  page.mode = std::string(bus::SearchModeName(params.mode));
  auto count = [this](SearchOutcome o) {
    if (search_ != nullptr) search_->Count(o);
  };
  if (!parsed.ok()) {
    count(SearchOutcome::kInvalid);
    page.error = parsed.message();
    r.Send(SearchHttpResponse(400, page, params.format, Code::kInvalidArgument));
    return;
  }
  if (params.q.empty()) {
    count(SearchOutcome::kEmptyQuery);
    r.Send(SearchHttpResponse(200, page, params.format));
    return;
  }
  const uint64_t id = next_search_id_++;
  const SearchFormat format = params.format;
  // Runs on a pool thread: owns only values, so dropping it there (a loop
  // that stopped meanwhile refuses the Post) is harmless.
  auto done = [this, id, page, format](Result<bus::SearchReply> reply) mutable {
    loop_.Post([this, id, page = std::move(page), format, reply = std::move(reply)]() mutable {
      FinishSearch(id, std::move(page), format, std::move(reply));
    });
  };
  bus::SearchQuery query{std::move(site), params.q, params.k, params.mode};
  if (search_ == nullptr || !search_->Start(std::move(query), std::move(done))) {
    page.error = search_ == nullptr ? SearchUnavailable(page) : SearchBusy(page);
    http::Response resp = SearchHttpResponse(503, page, format, Code::kUnavailable);
    resp.headers.emplace_back("Retry-After", "1");
    r.Send(std::move(resp));
    return;
  }
  // FinishSearch runs on this thread, so after this returns: no race.
  pending_searches_.emplace(id, std::move(r));
}

void Worker::FinishSearch(uint64_t id, site::SearchPage page, SearchFormat format, Result<bus::SearchReply> reply) {
  auto it = pending_searches_.find(id);
  if (it == pending_searches_.end()) return;
  http::Responder r = std::move(it->second);
  pending_searches_.erase(it);
  int status;
  Code code;
  if (!reply.ok()) {
    code = reply.status().code();
    status = http::UpstreamHttpStatusFor(code);
    page.error = SearchUnavailable(page);
  } else {
    code = reply->code;
    status = ApplySearchReply(*reply, &page);
  }
  r.Send(SearchHttpResponse(status, page, format, code));  // a no-op if the reader left meanwhile
}

}  // namespace folio::edge
