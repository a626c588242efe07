// The worker's side of private sites (issue 29): which requests a site with
// readers answers, the sign-in page, sign-in and sign-out. The session
// cookie and the form are libs/auth's; password checks run on the Signins
// pool (signins.h). Nothing here is on a public site's hot path: Serve
// comes here only for a site with a SiteAuth.
#include <algorithm>
#include <ctime>

#include "folio/auth/form.h"
#include "folio/auth/session.h"
#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/site/i18n.h"
#include "folio/site/layout.h"
#include "worker.h"

namespace folio::edge {
namespace {

constexpr std::string_view kSigninPath = "/_/signin";
constexpr std::string_view kSignoutPath = "/_/signout";

// Data a script fetches (JSON, search fragments): a 401 it can read, not a page.
bool IsDataRequest(const http::Request& req, std::string_view decoded_path) {
  return EndsWith(decoded_path, ".json") || req.query.find("format=json") != std::string_view::npos ||
         req.query.find("fragment=1") != std::string_view::npos;
}

http::Response Unauthorized() {
  http::Response resp = http::Response::Json(401, JsonError("unauthorized", "sign in to read this site"));
  resp.headers.emplace_back("Cache-Control", "no-store");
  resp.headers.emplace_back("X-Robots-Tag", "noindex");
  return resp;
}

// True if the Origin header names the request's own Host ("http://h:1" vs "h:1").
bool SameOrigin(std::string_view origin, std::string_view host) {
  size_t scheme = origin.find("://");
  if (scheme == std::string_view::npos || host.empty()) return false;
  return EqualsIgnoreAsciiCase(origin.substr(scheme + 3), host);
}

// Where a sign-in at /_/signin goes next: a path of this site, else "/".
std::string SafeNext(std::string_view next) {
  if (next.empty() || next[0] != '/' || (next.size() > 1 && (next[1] == '/' || next[1] == '\\')) ||
      next.size() > 2048) {
    return "/";
  }
  for (char c : next) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f || c == '\\') return "/";
  }
  return std::string(next);
}

http::Response SeeOther(std::string location, std::string set_cookie) {
  http::Response resp = http::Response::Text(303, "See " + location + "\n");
  resp.headers.emplace_back("Location", std::move(location));
  resp.headers.emplace_back("Set-Cookie", std::move(set_cookie));
  resp.headers.emplace_back("Cache-Control", "no-store");
  return resp;
}

}  // namespace

bool Worker::HasSession(const http::Request& req, const SiteAuth& auth, auth::Session* out) const {
  std::string_view cookie = auth::CookieValue(req.GetHeader("cookie"), auth::kSessionCookie);
  auth::Session s;
  return !cookie.empty() && auth::VerifySession(cookie, auth.key, auth.site, time(nullptr), out ? out : &s);
}

void Worker::ServeGuarded(const http::Request& req, http::Responder r, const PageTable* pages,
                          const SiteAuth& auth) {
  if (!DecodePagePath(req, r, "GET, HEAD, POST")) return;  // a sign-in form posts too
  if (!auth.private_site) {  // a public site with readers: only its signed-in pages check
    ServePath(req, std::move(r), pages, &auth, Session::kUnknown, auth.site);
    return;
  }
  if (HasSession(req, auth)) {
    ServePath(req, std::move(r), pages, &auth, Session::kYes, auth.site);
    return;
  }
  if (scratch_ == site::StyleSheetUrl() || scratch_ == site::SiteScriptUrl()) {
    ServePath(req, std::move(r), pages, &auth, Session::kNo, auth.site);  // folio's own, nothing of the site: the sign-in page's look
    return;
  }
  counters_.other->Increment();
  if (scratch_ == "/robots.txt") {
    http::Response robots = http::Response::Text(200, "User-agent: *\nDisallow: /\n");
    robots.headers.emplace_back("Cache-Control", "no-store");
    r.Send(std::move(robots));
  } else if (IsDataRequest(req, scratch_)) {
    r.Send(Unauthorized());
  } else {
    SendSignin(std::move(r), pages, auth.site, 401);
  }
}

bool Worker::GateSearch(const http::Request& req, http::Responder* r, bool data) {
  const SiteAuth* auth = nullptr;
  const PageTable* pages = sites_.Find(req.GetHeader("host"), &auth);
  if (auth == nullptr || !auth->private_site || HasSession(req, *auth)) return false;
  counters_.other->Increment();
  if (data) {
    r->Send(Unauthorized());
  } else {
    SendSignin(std::move(*r), pages, auth->site, 401);
  }
  return true;
}

const site::Strings& Worker::WordsOf(std::string_view site) const { return site::StringsFor(sites_.LangOf(site)); }

void Worker::SendSignin(http::Responder r, const PageTable* pages, std::string_view site, int status,
                        std::string_view error, int64_t retry_after_s) {
  const site::Strings& words = WordsOf(site);
  const auto& tables = site::AllStrings();
  const size_t lang = std::find(tables.begin(), tables.end(), &words) - tables.begin();
  std::shared_ptr<const Page>& builtin = builtin_signin_[lang < tables.size() ? lang : 0];
  if (builtin == nullptr) builtin = BuiltinSigninPage(words.code);
  std::shared_ptr<const Page> page = builtin;
  if (pages != nullptr) {
    if (auto it = pages->find(kSigninKey); it != pages->end() && it->second->blob() == nullptr) page = it->second;
  }
  Result<std::string> html = page->Identity();
  if (!html.ok()) html = builtin->Identity();
  std::string body = std::move(html).value();
  if (!error.empty()) {
    const std::string p = "<p class=\"signin-error\" role=\"alert\">" + HtmlEscape(error) + "</p>";
    size_t at = body.find(kSigninErrorMark);
    if (at == std::string::npos) at = body.find("<form");
    if (at == std::string::npos) at = body.find("</body>");
    body.insert(at == std::string::npos ? body.size() : at, p);
  }
  http::Response resp;
  resp.status = status;
  resp.headers = {{"Content-Type", "text/html; charset=utf-8"}, {"Cache-Control", "no-store"},
                  {"X-Robots-Tag", "noindex"}};
  for (auto& h : SecurityHeaders("")) resp.headers.push_back(std::move(h));
  if (retry_after_s > 0) resp.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  resp.body = std::move(body);
  r.Send(std::move(resp));
}

void Worker::AdmitPost(const http::Request& req, http::AdmissionGate gate) {
  const SiteAuth* auth = nullptr;
  sites_.Find(req.GetHeader("host"), &auth);
  const bool body = !req.GetHeader("content-length").empty() || !req.GetHeader("transfer-encoding").empty();
  if (auth == nullptr && body && req.GetHeader("content-length") != "0") {
    // Readers of a public site send no bodies: refused unread, as ever (issue 22).
    gate.Refuse(http::Response::Json(413, JsonError("too_large", "pages take no request body")));
    return;
  }
  gate.Admit();
}

void Worker::ServePost(const http::Request& req, http::Responder r) {
  std::shared_ptr<const SiteAuth> auth = sites_.AuthOf(req.GetHeader("host"));
  if (auth == nullptr) {
    http::Response resp = http::Response::Json(405, JsonError("method_not_allowed", "pages answer GET and HEAD"));
    resp.headers.emplace_back("Allow", "GET, HEAD");
    counters_.other->Increment();
    r.Send(std::move(resp));
    return;
  }
  r.SetRouteClass("signin");
  std::string_view origin = req.GetHeader("origin");
  if (!origin.empty() && !SameOrigin(origin, req.GetHeader("host"))) {
    r.SendError(403, "forbidden", "a sign-in or sign-out from another site is refused");
    return;
  }
  if (!PercentDecode(req.path, &scratch_)) {
    r.SendError(400, "invalid_argument", "malformed percent-encoding in the path");
    return;
  }
  if (scratch_ == kSignoutPath) {
    Signout(req, std::move(r));
    return;
  }
  StartSignin(req, std::move(r), *auth);
}

void Worker::Signout(const http::Request& req, http::Responder r) {
  const bool secure = signins_ != nullptr && signins_->SecureFor(req);
  r.Send(SeeOther("/", auth::SessionSetCookie("", 0, secure)));
}

void Worker::StartSignin(const http::Request& req, http::Responder r, const SiteAuth& auth) {
  const PageTable* pages = sites_.Find(req.GetHeader("host"));
  if (signins_ == nullptr) {
    r.SendError(503, "unavailable", "signing in is off on this edge");
    return;
  }
  if (int64_t wait = signins_->TakeAttempt(req, auth.site); wait > 0) {
    signins_->Count(SigninResult::kLimited);
    const site::Strings& words = WordsOf(auth.site);
    SendSignin(std::move(r), pages, auth.site, 429,
               site::Plural(words, words.signin_limited, static_cast<size_t>(wait)), wait);
    return;
  }
  std::string name, password, next;
  if (!auth::FormField(req.body, "password", &password)) {
    r.SendError(400, "invalid_argument", "a sign-in is a form (application/x-www-form-urlencoded) with a password");
    return;
  }
  (void)auth::FormField(req.body, "name", &name);
  (void)auth::FormField(req.body, "next", &next);
  auto p = std::make_unique<PendingSignin>();
  p->host = std::string(req.GetHeader("host"));
  // Back to the page it was shown on (as GET), or, from /_/signin, to `next`.
  p->location = scratch_ == kSigninPath ? SafeNext(next)
                                        : SafeNext(std::string(req.path) + (req.query.empty() ? "" : "?") +
                                                   std::string(req.query));
  p->site = auth.site;
  p->key = auth.key;
  p->ttl_s = auth.ttl_s;
  p->secure = signins_->SecureFor(req);
  const uint64_t id = next_signin_id_++;
  p->responder = std::move(r);
  pending_signins_.emplace(id, std::move(p));
  auto done = [this, id](std::optional<bus::SiteReader> reader) {  // on the pool: posts only
    loop_.Post([this, id, reader = std::move(reader)]() mutable { FinishSignin(id, std::move(reader)); });
  };
  if (!signins_->StartVerify(sites_.AuthOf(req.GetHeader("host")), std::move(name), std::move(password), done)) {
    auto it = pending_signins_.find(id);
    http::Response busy = http::Response::Json(503, JsonError("unavailable", "too many sign-ins at once; try again"));
    busy.headers.emplace_back("Retry-After", "1");
    it->second->responder.Send(std::move(busy));
    pending_signins_.erase(it);
  }
}

void Worker::FinishSignin(uint64_t id, std::optional<bus::SiteReader> reader) {
  auto it = pending_signins_.find(id);
  if (it == pending_signins_.end()) return;
  std::unique_ptr<PendingSignin> p = std::move(it->second);
  pending_signins_.erase(it);
  if (!reader || p->key.empty()) {  // no key: no session could be checked, so none is made
    signins_->Count(SigninResult::kWrong);
    SendSignin(std::move(p->responder), sites_.Find(p->host), p->site, 401, WordsOf(p->site).signin_wrong);
    return;
  }
  signins_->Count(SigninResult::kOk);
  const int64_t now = time(nullptr);
  auth::Session s{p->site, reader->name, reader->owner, now, now + p->ttl_s};
  std::string cookie = auth::SessionSetCookie(auth::SignSession(s, p->key), p->ttl_s, p->secure);
  p->responder.Send(SeeOther(p->location, std::move(cookie)));
}

}  // namespace folio::edge
