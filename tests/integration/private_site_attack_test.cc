// Private sites at the edge (issue 29), against real nats-server -js,
// folio-ingest and folio-edge processes. The site record that makes a site
// private (and its readers' Argon2id hashes) is written into KV by hand, as
// ingest will: the edge learns who may read a site only from it.
//  - THE ATTACK TEST: every URL class of a private site, asked with no
//    cookie, a forged one, an expired one, another site's, a tampered
//    payload and one from before a key rotation, never answers a note's
//    title or text (0 leaks, printed); a brute-forced sign-in is limited
//    (429) and never yields a session; the right password does, and then
//    every URL class is served, privately.
//  - A signed-in-only page on a public site: the sign-in page without a
//    session, the page with one; the site's other pages untouched.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "folio/auth/password.h"
#include "folio/auth/session.h"
#include "folio/bus/bus.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/site_schema.h"
#include "folio/core/gzip.h"
#include "folio/http/client.h"
#include "cluster.h"
#include "test_util.h"

using namespace folio;
using namespace folio::it;

namespace {

const std::string kKey1(64, '1');  // the session key before a rotation
const std::string kKey2(64, '2');  // and after
// Words only the vault holds: an answer with one of them leaked the site.
const std::vector<std::string> kMarkers = {"ZEBRAQUOKKA", "QUOKKABETA", "ZEBRAFILE", "Secret Alpha", "secret-alpha",
                                           "secrettag", "Beta Folder"};

std::unique_ptr<bus::Bus> ConnectBus(Cluster& c) {
  bus::BusOptions o;
  o.url = c.nats().url();
  auto b = bus::Bus::Connect(o);
  REQUIRE_MESSAGE(b.ok(), b.status().message());
  return std::move(*b);
}

void PutSite(bus::Bus* b, const bus::SiteRecord& rec) {
  REQUIRE(b->KvPutAsync(bus::kPagesBucket, bus::SiteKey(rec.site), bus::EncodeSiteRecord(rec)).ok());
  REQUIRE(b->WaitForAcks(5000).ok());
}

bus::SiteRecord PrivateSite(const std::string& site, std::vector<std::string> hosts, const std::string& key_hex,
                            bool private_site = true) {
  bus::SiteRecord rec;
  rec.site = site;
  rec.hosts = std::move(hosts);
  rec.title = "";
  rec.access.private_site = private_site;
  rec.access.session_key = key_hex;
  rec.access.session_ttl_s = 3600;
  rec.access.readers = {{"ann", auth::HashPassword("correct horse"), true}, {"", auth::HashPassword("site pass"), false}};
  return rec;
}

std::string Cookie(const std::string& site, const std::string& key_hex, int64_t expires_at,
                   const std::string& reader = "ann") {
  std::string key;
  REQUIRE(auth::DecodeSessionKey(key_hex, &key));
  return auth::SignSession(auth::Session{site, reader, false, 0, expires_at}, key);
}

int64_t Now() { return static_cast<int64_t>(time(nullptr)); }

// The leaked markers of one answer (body and headers).
std::string Leaks(const http::ClientResponse& r) {
  std::string all = r.body;
  for (const auto& [k, v] : r.headers) all += k + ": " + v + "\n";
  std::string found;
  for (const std::string& m : kMarkers) {
    if (all.find(m) != std::string::npos) found += m + " ";
  }
  return found;
}

http::ClientResponse Do(Cluster& c, const std::string& method, const std::string& path,
                        std::vector<std::pair<std::string, std::string>> headers, const std::string& body = "") {
  http::ClientRequest req;
  req.method = method;
  req.url = c.edge_url() + path;
  req.headers = std::move(headers);
  req.body = body;
  auto r = http::Fetch(req);
  return r.ok() ? *r : http::ClientResponse{};
}

std::string SessionOf(const http::ClientResponse& r) {
  std::string sc = r.Header("set-cookie");
  if (sc.rfind("folio_session=", 0) != 0) return "";
  return sc.substr(14, sc.find(';') - 14);
}

}  // namespace

TEST_CASE("private site attack: no URL class leaks without a valid session; brute force is limited") {
  Cluster c({}, /*start_services=*/false);
  c.AddEdgeArgs({"--trusted-proxies", "127.0.0.1"});
  c.StartIngest();
  c.StartEdge();
  const std::string png = "\x89PNG\r\n\x1a\nZEBRAFILE pixels";
  auto pushed = c.Push(AttachmentsPushBody(
      {{"secret.png", png}}, "Secret Alpha.md",
      "# Secret Alpha\n\nZEBRAQUOKKA is the password of the vault. #secrettag\n\n[[Beta Folder]]\n\n![[secret.png]]\n"));
  REQUIRE_MESSAGE(pushed.status == 200, pushed.body);
  pushed = c.Push(PushBody({{"folder/Beta Folder.md", "# Beta Folder\n\nQUOKKABETA lives here. #secrettag\n"}}));
  REQUIRE_MESSAGE(pushed.status == 200, pushed.body);
  REQUIRE(c.WaitForPage("/secret-alpha", 200, "ZEBRAQUOKKA").status == 200);
  REQUIRE(c.WaitForPage("/folder/beta-folder", 200, "QUOKKABETA").status == 200);
  const std::string asset = AssetPath(png, "secret.png");

  // Every URL class; public, each one answers something of the vault.
  const std::vector<std::string> urls = {
      "/secret-alpha", "/", "/folder/", "/folder/beta-folder", "/_/tags/secrettag", "/_/tags", "/_/recent",
      "/_/graph", "/_/graph.json", "/_/graph/0.json", "/_/tree/", "/_/tree/folder/", asset, "/_/search?q=ZEBRAQUOKKA",
      "/_/search?q=ZEBRAQUOKKA&format=json", "/rss.xml", "/feed.json", "/sitemap.xml", "/robots.txt", "/nope",
      "/Secret-Alpha", "/secret-alpha.md", "/recent", "/tags/secrettag"};
  int public_leaks = 0;
  std::string silent;
  for (const std::string& u : urls) {
    const bool leak = !Leaks(c.EdgeGet(u)).empty();
    public_leaks += leak;
    if (!leak) silent += " " + u;
  }
  std::printf("public site: %d of %zu URL classes show the vault's words (not:%s)\n", public_leaks, urls.size(),
              silent.c_str());
  CHECK(public_leaks >= 10);  // the markers are there to be found

  // folio's own stylesheet and script (named in every page).
  const std::string home = c.EdgeGet("/").body;
  auto linked = [&](const std::string& open, const std::string& ext) {
    size_t at = home.find(open);
    REQUIRE(at != std::string::npos);
    at += open.size();
    return home.substr(at, home.find(ext, at) + ext.size() - at);
  };
  const std::string style = linked("<link rel=\"stylesheet\" href=\"", ".css");
  const std::string script = linked("<script src=\"", ".js");

  auto b = ConnectBus(c);
  PutSite(b.get(), PrivateSite("default", {}, kKey2));
  REQUIRE(Eventually([&] { return c.EdgeGet("/secret-alpha").status == 401; }));

  // A tampered payload: another reader, site or expiry, the signature kept.
  const std::string good = Cookie("default", kKey2, Now() + 3600);
  const std::string sig = good.substr(good.find('.'));
  auto tampered = [&](const std::string& site, int64_t exp, const std::string& reader) {
    std::string t = Cookie(site, kKey1, exp, reader);
    return t.substr(0, t.find('.')) + sig;
  };
  const std::vector<std::pair<std::string, std::string>> cookies = {
      {"none", ""},
      {"forged", "folio_session=eyJzaXRlIjoiZGVmYXVsdCJ9.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
      {"garbage", "folio_session=....; other=1"},
      {"expired", "folio_session=" + Cookie("default", kKey2, Now() - 10)},
      {"other site", "folio_session=" + Cookie("other", kKey2, Now() + 3600)},
      {"tampered reader", "folio_session=" + tampered("default", Now() + 3600, "bob")},
      {"tampered expiry", "folio_session=" + tampered("default", Now() + 999999, "ann")},
      {"tampered site", "folio_session=" + tampered("other", Now() + 3600, "ann")},
      {"before rotation", "folio_session=" + Cookie("default", kKey1, Now() + 3600)},
  };
  int leaks = 0, asked = 0;
  for (const auto& [why, cookie] : cookies) {
    for (const std::string& u : urls) {
      std::vector<std::pair<std::string, std::string>> h;
      if (!cookie.empty()) h.emplace_back("Cookie", cookie);
      for (const char* method : {"GET", "HEAD"}) {
        auto r = Do(c, method, u, h);
        ++asked;
        std::string leak = Leaks(r);
        CAPTURE(why);
        CAPTURE(u);
        CHECK_MESSAGE(leak.empty(), "leaked: " << leak);
        leaks += !leak.empty();
        if (u == "/robots.txt") {
          CHECK(r.status == 200);
          if (r.body.size() > 0) CHECK(r.body.find("Disallow: /") != std::string::npos);
          continue;
        }
        CHECK(r.status == 401);
        CHECK(r.Header("cache-control") == "no-store");
        const bool data = u.find(".json") != std::string::npos || u.find("format=json") != std::string::npos;
        if (data && std::string(method) == "GET") CHECK(r.body.find("\"unauthorized\"") != std::string::npos);
        if (!data) CHECK(r.Header("x-robots-tag") == "noindex");
      }
    }
  }
  std::printf("private site attack: %d answers to %zu URL classes x %zu cookies, %d leaked\n", asked, urls.size(),
              cookies.size(), leaks);
  CHECK(leaks == 0);
  // folio's own script and style stay public (the sign-in page's look).
  for (const std::string& own : {style, script}) {
    CAPTURE(own);
    auto r = c.EdgeGet(own);
    CHECK(r.status == 200);
    CHECK(Leaks(r).empty());
  }

  // Cross-site sign-in is refused before the password is looked at.
  auto cross = Do(c, "POST", "/secret-alpha",
                  {{"Origin", "http://evil.example"}, {"Content-Type", "application/x-www-form-urlencoded"}},
                  "password=site+pass");
  CHECK(cross.status == 403);
  CHECK(SessionOf(cross).empty());

  // Brute force from one client: limited, never a session.
  int limited = 0, wrong = 0;
  for (int i = 0; i < 50; ++i) {
    auto r = Do(c, "POST", "/secret-alpha",
                {{"Content-Type", "application/x-www-form-urlencoded"}, {"X-Forwarded-For", "10.9.9.9"}},
                "name=ann&password=guess" + std::to_string(i));
    CHECK(SessionOf(r).empty());
    CHECK(Leaks(r).empty());
    if (r.status == 429) {
      ++limited;
      CHECK(!r.Header("retry-after").empty());
    } else {
      CHECK(r.status == 401);
      CHECK(r.body.find("Wrong name or password.") != std::string::npos);
      ++wrong;
    }
  }
  std::printf("brute force: %d wrong, %d limited (429), 0 sessions\n", wrong, limited);
  CHECK(wrong <= 6);
  CHECK(limited >= 44);
  // An unknown name is answered as a wrong password.
  auto unknown = Do(c, "POST", "/", {{"X-Forwarded-For", "10.9.9.8"}}, "name=mallory&password=correct+horse");
  CHECK(unknown.status == 401);
  CHECK(unknown.body.find("Wrong name or password.") != std::string::npos);

  // The right password: 303 back to the page, with a session.
  auto in = Do(c, "POST", "/secret-alpha", {{"X-Forwarded-For", "10.9.9.7"}, {"Origin", c.edge_url()},
                                            {"X-Forwarded-Proto", "https"}},
               "name=ann&password=correct+horse");
  REQUIRE_MESSAGE(in.status == 303, in.body);
  CHECK(in.Header("location") == "/secret-alpha");
  const std::string set_cookie = in.Header("set-cookie");
  CHECK(set_cookie.find("HttpOnly") != std::string::npos);
  CHECK(set_cookie.find("SameSite=Lax") != std::string::npos);
  CHECK(set_cookie.find("Path=/") != std::string::npos);
  CHECK(set_cookie.find("Max-Age=3600") != std::string::npos);
  CHECK(set_cookie.find("Secure") != std::string::npos);
  const std::string session = "folio_session=" + SessionOf(in);
  // Every URL class is served to it, privately.
  int served = 0;
  for (const std::string& u : urls) {
    auto r = c.EdgeGet(u, {{"Cookie", session}});
    CAPTURE(u);
    CHECK(r.status != 401);
    served += !Leaks(r).empty();
    if (r.status == 200 && u.rfind("/_/search", 0) != 0 && u != "/robots.txt") {
      CHECK(r.Header("cache-control").find("private") != std::string::npos);
      CHECK(r.Header("vary").find("Cookie") != std::string::npos);
    }
  }
  CHECK(served >= public_leaks);  // (search answers 503 either way: this test runs no folio-search)
  CHECK(c.EdgeGet("/secret-alpha", {{"Cookie", session}}).body.find("ZEBRAQUOKKA") != std::string::npos);
  // A site password signs in too (no name).
  auto pw = Do(c, "POST", "/_/signin", {{"X-Forwarded-For", "10.9.9.6"}}, "password=site+pass&next=%2Ffolder%2F");
  CHECK(pw.status == 303);
  CHECK(pw.Header("location") == "/folder/");
  // Sign-out clears the cookie.
  auto out = Do(c, "POST", "/_/signout", {{"Cookie", session}});
  CHECK(out.status == 303);
  CHECK(out.Header("location") == "/");
  CHECK(out.Header("set-cookie").find("Max-Age=0") != std::string::npos);
  // A rotated key ends every session.
  PutSite(b.get(), PrivateSite("default", {}, kKey1));
  REQUIRE(Eventually([&] { return c.EdgeGet("/secret-alpha", {{"Cookie", session}}).status == 401; }));
  auto metrics = c.EdgeGet("/metrics").body;
  CHECK(Metric(metrics, "folio_edge_signin_total{result=\"limited\"}") >= 44);
  CHECK(Metric(metrics, "folio_edge_signin_total{result=\"ok\"}") == 2);
}

TEST_CASE("signed-in-only pages on a public site: the sign-in page, then the page") {
  Cluster c;
  auto b = ConnectBus(c);
  auto put = [&](const std::string& url, const std::string& html, bus::PageAccess access) {
    bus::PageRecord rec;
    rec.content_type = "text/html; charset=utf-8";
    rec.etag = "\"" + std::to_string(std::hash<std::string>{}(html)) + "\"";
    rec.body_gzip = GzipCompress(html);
    rec.access = access;
    REQUIRE(b->KvPutAsync(bus::kPagesBucket, bus::PageKey("club", url), bus::EncodePageRecord(rec)).ok());
    REQUIRE(b->WaitForAcks(5000).ok());
  };
  // No readers yet: nobody can sign in, so the page is as if absent.
  PutSite(b.get(), bus::SiteRecord{"club", {"club.example"}, "Club", {}});
  put("/open", "<p>OPENMARKER</p>", bus::PageAccess::kPublic);
  put("/members", "<p>MEMBERMARKER</p>", bus::PageAccess::kSignedIn);
  REQUIRE(c.WaitForPageAt("club.example", "/open", 200, "OPENMARKER").status == 200);
  auto closed = c.EdgeGetAt("club.example", "/members");
  CHECK(closed.status == 404);
  CHECK(closed.body.find("MEMBERMARKER") == std::string::npos);
  CHECK(c.EdgeGetAt("club.example", "/Members").status == 404);

  PutSite(b.get(), PrivateSite("club", {"club.example"}, kKey2, /*private_site=*/false));
  REQUIRE(Eventually([&] { return c.EdgeGetAt("club.example", "/members").status == 401; }));
  auto signin = c.EdgeGetAt("club.example", "/members");
  CHECK(signin.body.find("MEMBERMARKER") == std::string::npos);
  CHECK(signin.body.find("password") != std::string::npos);
  CHECK(signin.Header("cache-control") == "no-store");
  // The site's public pages stay public and cacheable.
  // Another spelling of its URL is not redirected there: the URL names the note.
  auto misspelt = c.EdgeGetAt("club.example", "/Members");
  CHECK(misspelt.status == 404);
  CHECK(misspelt.Header("location").empty());
  auto open = c.EdgeGetAt("club.example", "/open");
  CHECK(open.status == 200);
  CHECK(open.Header("cache-control").find("private") == std::string::npos);
  // Another site's session, or a forged one, is none.
  for (const std::string& bad : {Cookie("default", kKey2, Now() + 60), std::string("x.y")}) {
    auto r = c.EdgeGet("/members", {{"Host", "club.example"}, {"Cookie", "folio_session=" + bad}});
    CHECK(r.status == 401);
    CHECK(r.body.find("MEMBERMARKER") == std::string::npos);
  }
  auto in = Do(c, "POST", "/members", {{"Host", "club.example"}}, "name=ann&password=correct+horse");
  REQUIRE(in.status == 303);
  const std::string session = "folio_session=" + SessionOf(in);
  auto page = c.EdgeGet("/members", {{"Host", "club.example"}, {"Cookie", session}});
  CHECK(page.status == 200);
  CHECK(page.body.find("MEMBERMARKER") != std::string::npos);
  CHECK(page.Header("cache-control") == "private, no-cache");
  CHECK(page.Header("vary").find("Cookie") != std::string::npos);
  // POST to a public site without readers is refused as before.
  CHECK(Do(c, "POST", "/", {}, "password=x").status == 413);
}
