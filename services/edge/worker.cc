#include "worker.h"

#include "folio/auth/form.h"
#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/core/utf8.h"
#include "folio/http/conditional.h"
#include "folio/markdown/slug.h"
#include "folio/site/search_page.h"
#include "view_stats.h"

#include <vector>

namespace folio::edge {

Worker::Worker(std::string default_site, ServeCounters counters, SearchBackend* search, AssetStore* assets,
               Signins* signins)
    : sites_(std::move(default_site)), builtin_404_(BuiltinNotFoundPage()),
      signins_(signins), counters_(counters), search_(search), assets_(assets) {
  router_.Handle("GET", std::string(markdown::kSearchUrl), [this](const http::Request& req, http::Responder r) { ServeSearch(req, std::move(r)); },
                 "search", 0);
  router_.Handle("GET", std::string(kStatsUrl), [this](const http::Request& req, http::Responder r) { ServeStats(req, std::move(r)); },
                 "stats", 0);
  // Pages, listings and attachments (Serve narrows those to "asset"). They
  // take no body: one is refused (413) before a byte of it is read (issue 22).
  auto serve = [this](const http::Request& req, http::Responder r) { Serve(req, std::move(r)); };
  // Other methods get 405 from Serve, or 413 for a body, unread (as GET).
  for (const char* method : {"GET", "PUT", "DELETE", "PATCH", "OPTIONS"}) router_.HandlePrefix(method, "/", serve, "page", 0);
  router_.Fallback(serve, "page");
  // Sign-in forms (signin_handler.cc): the only bodies readers send, and
  // only to a site with readers (AdmitPost refuses the others unread).
  router_.HandlePrefix(
      "POST", "/", [this](const http::Request& req, http::AdmissionGate g) { AdmitPost(req, std::move(g)); },
      [this](const http::Request& req, http::Responder r) { ServePost(req, std::move(r)); }, "signin",
      auth::kMaxFormBytes);
  http::ServerOptions opts;
  opts.max_body_bytes = auth::kMaxFormBytes;  // the most any route takes
  opts.body_budget = &body_budget_;
  server_ = std::make_unique<http::Server>(&loop_, &router_, opts);
  scratch_.reserve(1024);
}

// The hot path (gzip, 304, HEAD): no allocation (scratch_ and the host
// buffer are reused; the shared_ptr copy is a reference count), no
// compression, no lock but the view counter's own (view_counter.h: taken by
// this worker only, contended only while /metrics or /_/stats reads). An identity GET allocates and inflates its body (Respond).
namespace {

// ?page=N of a listing: N in [2, 10000], else 0 (ignored).
int PageParam(std::string_view query) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (kv.substr(0, 5) != "page=") continue;
    std::string_view v = kv.substr(5);
    if (v.empty() || v.size() > 5) return 0;
    int n = 0;
    for (char c : v) {
      if (c < '0' || c > '9') return 0;
      n = n * 10 + (c - '0');
    }
    return n >= 2 && n <= 10000 ? n : 0;
  }
  return 0;
}

// The canonical URL for another spelling of it, or "" if none: case folded
// (ASCII, and the scripts slugs lower-case: "/Гайд" -> "/гайд"), a ".md"
// suffix or a trailing slash dropped (or added). A signed-in-only page is
// one only for a signed-in reader: its URL says what the note is called.
std::string_view CanonicalSpelling(const PageTable& pages, std::string_view raw_path, bool signed_in) {
  std::string path;
  if (!PercentDecode(raw_path, &path)) return {};
  std::string lower = Utf8Lower(path);
  std::vector<std::string> candidates = {lower};
  if (EndsWith(lower, ".md")) candidates.push_back(lower.substr(0, lower.size() - 3));
  if (lower.size() > 1 && lower.back() == '/') candidates.push_back(lower.substr(0, lower.size() - 1));
  else candidates.push_back(lower + "/");
  for (const auto& c : candidates) {
    if (c == path) continue;
    auto it = pages.find(std::string_view(c));
    if (it != pages.end() && it->second->status() == 200 && it->first != kNotFoundKey &&
        (signed_in || !it->second->signed_in_only())) {
      return it->first;
    }
  }
  return {};
}

// Where a generated page that moved under markdown::kGeneratedPrefix now
// lives, for its old URL ("/tags", "/tags/x", "/recent", "/search"; raw,
// percent-encoded path); "" for any other path.
std::string MovedGeneratedUrl(std::string_view raw_path) {
  if (raw_path == "/tags" || StartsWith(raw_path, "/tags/") || raw_path == "/recent" || raw_path == "/search") {
    return "/_" + std::string(raw_path);
  }
  return "";
}

// 301 to `location` (already percent-encoded). Off the hot path.
// `private_answer`: for a signed-in reader (never for a shared cache).
http::Response MovedTo(std::string location, bool private_answer) {
  http::Response moved;
  moved.status = 301;
  moved.headers.emplace_back("Location", location);
  moved.headers.emplace_back("Cache-Control", private_answer ? "private, no-cache" : "public, max-age=300");
  if (private_answer) moved.headers.emplace_back("Vary", "Cookie");
  moved.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  for (auto& h : SecurityHeaders("")) moved.headers.push_back(std::move(h));
  moved.body = "Moved to " + location + "\n";
  return moved;
}

}  // namespace

void Worker::Serve(const http::Request& req, http::Responder r) {
  const SiteAuth* auth = nullptr;
  std::string_view site;
  // The site by Host; its own 404 page when the path has none.
  const PageTable* pages = sites_.Find(req.GetHeader("host"), &auth, &site);
  if (auth != nullptr) {  // a private site, or one with readers: off the hot path
    ServeGuarded(req, std::move(r), pages, *auth);
    return;
  }
  if (!DecodePagePath(req, r, "GET, HEAD")) return;
  ServePath(req, std::move(r), pages, nullptr, Session::kUnknown, site);
}

bool Worker::DecodePagePath(const http::Request& req, http::Responder& r, std::string_view allow) {
  if (req.method != "GET" && req.method != "HEAD") {
    http::Response resp = http::Response::Json(405, JsonError("method_not_allowed", "pages answer GET and HEAD"));
    resp.headers.emplace_back("Allow", std::string(allow));
    counters_.other->Increment();
    r.Send(std::move(resp));
    return false;
  }
  if (!PercentDecode(req.path, &scratch_)) {
    counters_.other->Increment();
    r.SendError(400, "invalid_argument", "malformed percent-encoding in the path");
    return false;
  }
  return true;
}

void Worker::ServePath(const http::Request& req, http::Responder r, const PageTable* pages, const SiteAuth* auth,
                       Session session, std::string_view site) {
  std::shared_ptr<const Page> keep = builtin_404_;
  if (pages) {
    // Paginated listings are published under their query: "/recent?page=2".
    if (int pg = PageParam(req.query); pg >= 2) {
      scratch_ += "?page=";
      scratch_ += std::to_string(pg);  // SSO: no allocation for small numbers
    }
    auto it = pages->find(std::string_view(scratch_));
    // A page for signed-in readers is never served to anyone else: the
    // sign-in page instead, or, on a site nobody can sign in to, nothing.
    if (it != pages->end() && it->second->signed_in_only() && session != Session::kYes) {
      if (auth != nullptr && session == Session::kUnknown && HasSession(req, *auth)) {
        session = Session::kYes;
      } else if (auth != nullptr) {
        counters_.other->Increment();
        SendSignin(std::move(r), pages, site, 401);
        return;
      } else {
        it = pages->end();
      }
    }
    const bool signed_in = session == Session::kYes;
    if (it != pages->end() && it->first != kNotFoundKey) {
      if (const BlobRef* blob = it->second->blob()) {
        ServeBlobPage(req, *blob, std::move(r));  // off the hot path: its body is in storage
        return;
      }
      keep = it->second;
      // A reader's view (view_counter.h): counted before the answer, whose
      // status (200 or 304) does not change it. No allocation once seen.
      if (views_ != nullptr && keep->status() == 200 && keep->is_html() && IsCountedView(req)) {
        views_->Count(site, it->first, UtcDay(NowUnixMs()));
      }
    } else if (assets_ != nullptr && ServeAsset(req, &r, signed_in)) {
      return;  // an attachment held by folio-storage; off the hot path
    } else if (std::string_view canonical = CanonicalSpelling(*pages, req.path, signed_in); !canonical.empty()) {
      // Another spelling of a page's URL (letter case, ".md", a trailing
      // slash): 301 to the canonical one. Off the hot path.
      counters_.other->Increment();
      r.Send(MovedTo(PercentEncodePath(canonical), signed_in));
      return;
    } else if (std::string moved = MovedGeneratedUrl(req.path); !moved.empty()) {
      // A generated page's URL from before they moved under "/_/", which no
      // note claims: 301 there, query kept ("/recent?page=2", "/search?q=x").
      counters_.other->Increment();
      r.Send(MovedTo(req.query.empty() ? moved : moved + "?" + std::string(req.query), signed_in));
      return;
    } else if (auto nf = pages->find(kNotFoundKey); nf != pages->end()) {
      keep = nf->second;
    }
  }
  const Page* page = keep.get();
  bool gz = AcceptsGzip(req.GetHeader("accept-encoding"));
  std::string_view inm = req.GetHeader("if-none-match");
  bool not_modified = page->status() == 200 && !inm.empty() && http::EtagMatches(inm, gz ? page->etag_gzip() : page->etag());
  // gzip (nearly every reader): the page's bytes as they are. Identity: the
  // body is inflated for this answer (not for HEAD or 304).
  const bool private_answer = session == Session::kYes || page->signed_in_only();
  SendPage(std::move(r), std::move(keep), gz, not_modified, req.is_head, private_answer);
}

bool Worker::IsOwner(const http::Request& req, const SiteAuth* auth) const {
  auth::Session session;
  return auth != nullptr && HasSession(req, *auth, &session) && session.owner;
}

void Worker::ServeStats(const http::Request& req, http::Responder r) {
  const SiteAuth* auth = nullptr;
  std::string_view site_view;
  const PageTable* pages = sites_.Find(req.GetHeader("host"), &auth, &site_view);
  std::string site(site_view);
  if (all_views_ == nullptr || !IsOwner(req, auth)) {
    if (auth != nullptr && auth->private_site && !HasSession(req, *auth)) {
      SendSignin(std::move(r), pages, site, 401);  // a private site shows strangers nothing else
      return;
    }
    SendNotFound(std::move(r), req.GetHeader("host"), req.is_head);
    return;
  }
  const int64_t today = UtcDay(NowUnixMs());
  http::Response resp;
  resp.headers = {{"Content-Type", "text/html; charset=utf-8"},
                  {"Cache-Control", "private, no-store"},
                  {"Content-Security-Policy", std::string(kStatsPageCsp)},
                  {"X-Content-Type-Options", "nosniff"},
                  {"X-Frame-Options", "DENY"},
                  {"X-Robots-Tag", "noindex"}};
  resp.body = AssembleStatsPage(sites_.NameOf(site), all_views_->Summarize(site, today, 30), today);
  counters_.other->Increment();
  r.Send(std::move(resp));
}

void Worker::SendPage(http::Responder r, std::shared_ptr<const Page> page, bool gzip, bool not_modified,
                      bool head_only, bool private_answer) {
  const uint16_t status = page->status();
  Result<http::PreparedResponse> answer = private_answer ? RespondPrivate(std::move(page), gzip, not_modified, head_only)
                                                         : Respond(std::move(page), gzip, not_modified, head_only);
  if (!answer.ok()) {
    counters_.corrupt_body->Increment();
    counters_.other->Increment();
    r.SendError(500, CodeName(answer.status().code()), answer.status().message());
    return;
  }
  if (not_modified) {
    counters_.not_modified->Increment();
  } else {
    (status == 200 ? counters_.ok : status == 404 ? counters_.not_found : counters_.other)->Increment();
  }
  r.SendPrepared(*answer);
}

}  // namespace folio::edge
