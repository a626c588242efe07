// The sign-in page a real Worker (Loop + Server on 127.0.0.1, no NATS)
// shows a stranger on a private site, and the errors it writes into it, in
// the site's language: read off the site's 404 page (issue 29).
#include <doctest/doctest.h>

#include <future>
#include <string>
#include <thread>

#include "folio/core/gzip.h"
#include "folio/http/client.h"
#include "folio/site/i18n.h"
#include "folio/site/layout.h"
#include "worker.h"

using namespace folio;
using namespace folio::edge;

namespace {

bool Has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

struct PrivateEdge {
  metrics::Registry registry;
  ServeCounters counters{&registry.NewCounter("t_requests", "t", {{"code", "200"}}),
                         &registry.NewCounter("t_requests", "t", {{"code", "304"}}),
                         &registry.NewCounter("t_requests", "t", {{"code", "404"}}),
                         &registry.NewCounter("t_requests", "t", {{"code", "other"}}),
                         &registry.NewCounter("t_corrupt", "t")};
  Signins signins{SigninOptions{}, &registry};
  Worker worker{"default", counters, nullptr, nullptr, &signins};
  std::thread thread;

  explicit PrivateEdge(const std::string& lang) {
    bus::SiteAccess access;
    access.private_site = true;
    access.session_key = std::string(bus::kSessionKeyHexBytes, 'a');
    site::SiteInfo info;
    info.name = "Notes";
    info.lang = lang;
    bus::PageRecord rec;
    rec.status = 404;
    rec.content_type = "text/html; charset=utf-8";
    rec.etag = "\"x\"";
    rec.body_gzip = GzipCompress(site::Assemble404Page(info));
    auto page = BuildPage(rec, kNotFoundKey);
    REQUIRE(page.ok());
    worker.sites().SetAuth("default", MakeSiteAuth("default", access));
    worker.sites().Put("default", *page);
    REQUIRE(worker.server().Listen("127.0.0.1", 0).ok());
    thread = std::thread([this] { worker.loop().Run(); });
  }
  ~PrivateEdge() {
    worker.loop().Stop();
    thread.join();
  }
  http::ClientResponse Send(const std::string& method, const std::string& path, const std::string& body = "") {
    http::ClientRequest req;
    req.method = method;
    req.url = "http://127.0.0.1:" + std::to_string(worker.server().port()) + path;
    req.body = body;
    if (!body.empty()) req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    auto r = http::Fetch(req);
    REQUIRE(r.ok());
    return *r;
  }
};

}  // namespace

TEST_CASE("edge sign-in: the built-in page and a wrong password's message in the site's language (issue 29)") {
  PrivateEdge e("ru");
  const site::Strings& ru = site::StringsFor("ru");
  const site::Strings& en = site::StringsFor("en");
  auto page = e.Send("GET", "/note");
  CHECK(page.status == 401);
  CHECK(Has(page.body, "<html lang=\"ru\">"));
  CHECK(Has(page.body, std::string(ru.signin_submit)));
  CHECK(!Has(page.body, std::string(en.signin_submit)));
  auto wrong = e.Send("POST", "/note", "name=ann&password=nope");
  CHECK(wrong.status == 401);
  CHECK(Has(wrong.body, "<p class=\"signin-error\" role=\"alert\">Неверное имя или пароль.</p>"));
  CHECK(!Has(wrong.body, std::string(en.signin_wrong)));
  // Past the burst (5 attempts): the wait, plural-correct in Russian.
  http::ClientResponse limited;
  for (int i = 0; i < 8 && limited.status != 429; ++i) limited = e.Send("POST", "/note", "password=nope");
  REQUIRE(limited.status == 429);
  const int64_t wait = std::stoll(std::string(limited.Header("Retry-After")));
  CHECK(Has(limited.body, site::Plural(ru, ru.signin_limited, static_cast<size_t>(wait))));
  CHECK(Has(limited.body, "Слишком много попыток входа"));
  CHECK(!Has(limited.body, "Too many"));
}

TEST_CASE("edge sign-in: a site in a language folio does not ship gets English") {
  PrivateEdge e("xx");
  auto wrong = e.Send("POST", "/", "password=nope");
  CHECK(wrong.status == 401);
  CHECK(Has(wrong.body, "Wrong name or password."));
  CHECK(Has(wrong.body, "<html lang=\"en\">"));
}
