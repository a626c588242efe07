#include "page_cache.h"

#include "folio/core/text.h"

namespace folio::edge {

Worker::Worker(ServeCounters counters, metrics::Registry* registry, metrics::ReadinessCheck ready)
    : builtin_404_(BuiltinNotFoundPage()), counters_(counters) {
  metrics::MountOpsEndpoints(&router_, registry, std::move(ready));
  router_.Fallback([this](const http::Request& req, http::Responder r) { Serve(req, std::move(r)); });
  http::ServerOptions opts;
  opts.max_body_bytes = 0;  // readers send no bodies
  server_ = std::make_unique<http::Server>(&loop_, &router_, opts);
  scratch_.reserve(1024);
}

void Worker::Put(const std::string& url, std::shared_ptr<const Page> page) { pages_[url] = std::move(page); }

void Worker::Erase(const std::string& url) { pages_.erase(url); }

// The hot path: no allocation (scratch_ is reused; the shared_ptr copy is a
// reference count), no lock, no compression.
void Worker::Serve(const http::Request& req, http::Responder r) {
  if (req.method != "GET" && req.method != "HEAD") {
    http::Response resp = http::Response::Json(405, "{\"error\":{\"code\":\"method_not_allowed\",\"message\":\"pages answer GET and HEAD\"}}");
    resp.headers.emplace_back("Allow", "GET, HEAD");
    counters_.other->Increment();
    r.Send(std::move(resp));
    return;
  }
  if (!PercentDecode(req.path, &scratch_)) {
    counters_.other->Increment();
    r.SendError(400, "invalid_argument", "malformed percent-encoding in the path");
    return;
  }
  const Page* page;
  std::shared_ptr<const Page> keep;
  auto it = pages_.find(std::string_view(scratch_));
  if (it != pages_.end() && it->first != kNotFoundKey) {
    keep = it->second;
  } else {
    auto nf = pages_.find(kNotFoundKey);
    keep = nf != pages_.end() ? nf->second : builtin_404_;
  }
  page = keep.get();
  bool gz = AcceptsGzip(req.GetHeader("accept-encoding"));
  const std::string& etag = gz ? page->etag_gzip : page->etag;
  http::PreparedResponse resp;
  std::string_view inm = req.GetHeader("if-none-match");
  if (page->status == 200 && !inm.empty() && EtagMatches(inm, etag)) {
    resp.head = gz ? page->head_304_gzip : page->head_304;
    counters_.not_modified->Increment();
  } else {
    resp.head = gz ? page->head_gzip : page->head;
    resp.body = gz ? page->body_gzip : page->body;
    (page->status == 200 ? counters_.ok : page->status == 404 ? counters_.not_found : counters_.other)->Increment();
  }
  resp.keep = std::move(keep);
  r.SendPrepared(resp);
}

}  // namespace folio::edge
