// Private sites, ingest's side (issue 29): `folio-ingest site set --private`
// and `site reader add` against a running ingest reach the bus within
// seconds: the flag site's record carries the access block (Argon2id hash,
// session key), every page arrives signed-in only but the sign-in page,
// robots.txt disallows all, RSS and sitemap are withdrawn; turning the site
// public again publishes public pages and the feeds. The edge serves the
// sign-in page to strangers and the site to a reader who signed in with the
// password set here (and not after rotate-key). Real nats-server,
// folio-ingest and folio-edge.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "cluster.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/site_schema.h"
#include "folio/core/gzip.h"
#include "folio/http/client.h"
#include "folio/testing/feed.h"
#include "folio/testing/testing.h"

using namespace folio;
using namespace folio::it;

namespace {

constexpr const char* kPassword = "a long site password";

// `folio-ingest ARGS --data DIR` with the password on stdin, never in argv.
int RunWithStdin(Cluster& c, const std::string& input, const std::vector<std::string>& args, std::string* err) {
  std::string out;
  return c.RunIngest(args, &out, err, input);
}

bool PollUntil(const std::function<bool()>& done, int timeout_ms = 10000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

bool SiteRecordOf(bus::Bus* b, bus::SiteRecord* rec) {
  auto raw = b->KvGet(bus::kPagesBucket, bus::SiteKey("default"));
  return raw.ok() && bus::DecodeSiteRecord(*raw, rec).ok();
}

std::string Body(const bus::PageRecord& r) {
  std::string out;
  (void)GzipDecompress(r.body_gzip, &out);
  return out;
}

// The site's pages on the feed, decoded; empty on error.
std::map<std::string, bus::PageRecord> Pages(bus::Bus* b) {
  std::map<std::string, bus::PageRecord> out;
  auto feed = testing::ReadFeed(b, "default");
  if (!feed.ok()) return out;
  for (const auto& [url, raw] : feed->records) {
    bus::PageRecord r;
    if (bus::DecodePageRecord(raw, &r).ok()) out[url] = std::move(r);
  }
  return out;
}

}  // namespace

TEST_CASE("private site: settings and readers reach the bus; every page turns signed-in only and back") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Alpha.md", "# Alpha\n\nSee [[Beta]].\n"}, {"Beta.md", "# Beta\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/alpha", 200, "Alpha").status == 200);
  REQUIRE(c.WaitForPage("/rss.xml", 200).status == 200);
  bus::BusOptions o;
  o.url = c.nats().url();
  auto connected = bus::Bus::Connect(o);
  REQUIRE(connected.ok());
  bus::Bus* b = connected->get();

  // The flag site has a record too, with no hosts: the edge's default site.
  bus::SiteRecord rec;
  REQUIRE(PollUntil([&] { return SiteRecordOf(b, &rec); }));
  CHECK(rec.hosts.empty());
  CHECK(!rec.access.private_site);
  CHECK(rec.access.readers.empty());

  std::string out, err;
  REQUIRE(c.RunIngest({"site", "set", "default", "--private", "on", "--lang", "de"}, &out, &err) == 0);
  INFO("set: ", err);
  REQUIRE(RunWithStdin(c, kPassword, {"site", "reader", "add", "default"}, &err) == 0);
  INFO("reader add: ", err);
  INFO(c.Logs());
  REQUIRE(PollUntil([&] { return SiteRecordOf(b, &rec) && rec.access.private_site && rec.access.readers.size() == 1; }));
  CHECK(rec.access.readers[0].name.empty());
  CHECK(rec.access.readers[0].hash.rfind("$argon2id$", 0) == 0);
  CHECK(rec.access.readers[0].hash.find(kPassword) == std::string::npos);
  CHECK(rec.access.session_key.size() == 64);
  CHECK(rec.access.session_key.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(rec.hosts.empty());
  const std::string key = rec.access.session_key;

  // Every page signed-in only, but the sign-in page and folio's stylesheet.
  std::map<std::string, bus::PageRecord> pages;
  REQUIRE(PollUntil([&] {
    pages = Pages(b);
    auto a = pages.find("/alpha");
    return a != pages.end() && a->second.access == bus::PageAccess::kSignedIn && pages.count("/_folio/signin") &&
           !pages.count("/rss.xml");
  }));
  for (const auto& [url, r] : pages) {
    CAPTURE(url);
    const bool public_page = url == "/_folio/signin" || (url.rfind("/assets/folio.", 0) == 0 && url.size() > 4 &&
                                                          url.substr(url.size() - 4) == ".css");
    CHECK(r.access == (public_page ? bus::PageAccess::kPublic : bus::PageAccess::kSignedIn));
  }
  CHECK(pages.count("/sitemap.xml") == 0);
  REQUIRE(pages.count("/robots.txt"));
  CHECK(Body(pages["/robots.txt"]) == "User-agent: *\nDisallow: /\n");
  CHECK(Body(pages["/alpha"]).find("content=\"noindex, nofollow\"") != std::string::npos);
  const std::string signin = Body(pages["/_folio/signin"]);
  CHECK(signin.find("<form method=\"post\"") != std::string::npos);
  CHECK(signin.find("name=\"password\"") != std::string::npos);
  CHECK(signin.find("name=\"name\"") == std::string::npos);  // a site password only
  // In the site's language (--lang de), and a sign-out button on its pages.
  CHECK(signin.find("<html lang=\"de\">") != std::string::npos);
  CHECK(signin.find("<button type=\"submit\">Anmelden</button>") != std::string::npos);
  CHECK(signin.find("Sign in") == std::string::npos);
  CHECK(Body(pages["/alpha"]).find("<form class=\"site-signout\" method=\"post\" action=\"/_/signout\">"
                                   "<button type=\"submit\">Abmelden</button></form>") != std::string::npos);
  // The edge, from nothing but this record and these pages: a stranger gets
  // the sign-in page ingest published (401), never the note; the password
  // set above signs in (303 with a session cookie), and the session reads
  // the note. A private site has no feed, signed in or not.
  CHECK(PollUntil([&] {
    auto r = c.EdgeGet("/alpha");
    return r.status == 401 && r.body.find("Anmelden") != std::string::npos;  // in the site's language
  }));
  auto stranger = c.EdgeGet("/alpha");
  CHECK(stranger.body.find("<form method=\"post\"") != std::string::npos);
  CHECK(stranger.body.find("href=\"/beta\"") == std::string::npos);
  CHECK(stranger.Header("cache-control") == "no-store");
  auto post = [&](const std::string& password) {
    http::ClientRequest req;
    req.method = "POST";
    req.url = c.edge_url() + "/alpha";
    req.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
    req.body = "password=" + password;
    auto r = http::Fetch(req);
    return r.ok() ? *r : http::ClientResponse{};
  };
  auto wrong = post("not+the+password");
  CHECK(wrong.status == 401);
  CHECK(wrong.Header("set-cookie").empty());
  auto right = post("a+long+site+password");
  REQUIRE(right.status == 303);
  const std::string set_cookie = right.Header("set-cookie");
  REQUIRE(set_cookie.rfind("folio_session=", 0) == 0);
  CHECK(set_cookie.find("HttpOnly") != std::string::npos);
  CHECK(set_cookie.find("SameSite=Lax") != std::string::npos);
  const std::string session = set_cookie.substr(0, set_cookie.find(';'));
  auto reader = c.EdgeGet("/alpha", {{"Cookie", session}});
  CHECK(reader.status == 200);
  CHECK(reader.body.find("href=\"/beta\"") != std::string::npos);
  CHECK(reader.Header("cache-control").find("private") != std::string::npos);
  CHECK(PollUntil([&] { return c.EdgeGet("/rss.xml", {{"Cookie", session}}).status == 404; }));
  CHECK(c.EdgeGet("/rss.xml").status == 401);

  // A push to the private site publishes signed-in pages.
  REQUIRE(c.Push(PushBody({{"Gamma.md", "# Gamma\n"}})).status == 200);
  REQUIRE(PollUntil([&] {
    pages = Pages(b);
    return pages.count("/gamma") != 0;
  }));
  CHECK(pages["/gamma"].access == bus::PageAccess::kSignedIn);

  // rotate-key: a new key, the same readers.
  REQUIRE(c.RunIngest({"site", "rotate-key", "default"}, &out, &err) == 0);
  REQUIRE(PollUntil([&] { return SiteRecordOf(b, &rec) && rec.access.session_key != key; }));
  CHECK(rec.access.readers.size() == 1);
  CHECK(rec.access.session_key.size() == 64);
  // ... and the session signed with the old one is over, on the edge too.
  CHECK(PollUntil([&] { return c.EdgeGet("/alpha", {{"Cookie", session}}).status == 401; }));

  // Public again: public pages, the feeds back, robots allows.
  REQUIRE(c.RunIngest({"site", "set", "default", "--private", "off"}, &out, &err) == 0);
  REQUIRE(PollUntil([&] {
    pages = Pages(b);
    auto a = pages.find("/alpha");
    return a != pages.end() && a->second.access == bus::PageAccess::kPublic && pages.count("/rss.xml");
  }));
  for (const auto& [url, r] : pages) {
    CAPTURE(url);
    CHECK(r.access == bus::PageAccess::kPublic);
  }
  CHECK(pages.count("/sitemap.xml") == 1);
  CHECK(Body(pages["/robots.txt"]).find("Allow: /") != std::string::npos);
  CHECK(c.WaitForPage("/alpha", 200, "Alpha").status == 200);
  CHECK(c.WaitForPage("/rss.xml", 200).status == 200);
  REQUIRE(SiteRecordOf(b, &rec));
  CHECK(!rec.access.private_site);
  CHECK(rec.access.readers.size() == 1);  // still has a password: the sign-in page stays

  // Bad input changes nothing and says why.
  CHECK(c.RunIngest({"site", "set", "default", "--feed", "everything"}, &out, &err) == 1);
  CHECK(err.find("feed") != std::string::npos);
  CHECK(RunWithStdin(c, "short", {"site", "reader", "add", "default", "bob"}, &err) == 1);
  CHECK(err.find("8 to 1024") != std::string::npos);
  CHECK(c.RunIngest({"site", "set", "nosuch", "--private", "on"}, &out, &err) == 1);
  CHECK(c.RunIngest({"site", "show", "default"}, &out, &err) == 0);
  CHECK(out.find("private\toff") != std::string::npos);
  CHECK(out.find("reader\t(site password)") != std::string::npos);
  CHECK(out.find("argon2") == std::string::npos);  // no hash, no key printed
  CHECK(out.find(key) == std::string::npos);
}
