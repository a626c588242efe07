#include "page.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <tuple>

#include "folio/core/gzip.h"
#include "folio/http/attachment.h"
#include "folio/site/csp.h"
#include "folio/testing/count_allocations.h"  // t_allocations: heap allocations per thread

using namespace folio;
using namespace folio::edge;

TEST_CASE("accept-encoding: gzip, wildcard and q=0") {
  CHECK(AcceptsGzip("gzip"));
  CHECK(AcceptsGzip("gzip, deflate, br"));
  CHECK(AcceptsGzip("br;q=1.0, GZIP;q=0.5"));
  CHECK(AcceptsGzip("*"));
  CHECK(!AcceptsGzip(""));
  CHECK(!AcceptsGzip("identity"));
  CHECK(!AcceptsGzip("gzip;q=0"));
  CHECK(!AcceptsGzip("gzip; q=0.000"));
  CHECK(!AcceptsGzip("x-gzip-not"));
}

TEST_CASE("page: the gzip body held, heads for both encodings prepared once") {
  bus::PageRecord rec;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"abc\"";
  rec.last_modified_s = 784111777;
  rec.body_gzip = GzipCompress("<p>hello</p>");
  auto p = BuildPage(rec);
  REQUIRE(p.ok());
  const Page& page = **p;
  CHECK(page.Identity().value() == "<p>hello</p>");
  CHECK(page.identity_size() == 12);
  CHECK(page.body_gzip() == rec.body_gzip);
  CHECK(page.body_bytes() == rec.body_gzip.size());  // the gzip body is the only copy
  CHECK(page.Head(false, false).find("HTTP/1.1 200 OK\r\n") == 0);
  CHECK(page.Head(false, false).find("Content-Length: 12\r\n") != std::string::npos);
  CHECK(page.Head(false, false).find("Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n") != std::string::npos);
  CHECK(page.Head(false, false).find("Vary: Accept-Encoding\r\n") != std::string::npos);
  CHECK(page.Head(true, false).find("Content-Encoding: gzip\r\n") != std::string::npos);
  CHECK(page.Head(true, false).find("ETag: \"abc-gz\"\r\n") != std::string::npos);
  CHECK(page.Head(false, true).find("HTTP/1.1 304") == 0);
  CHECK(page.Head(false, true).find("Content-Length") == std::string::npos);
  rec.body_gzip = "broken";
  CHECK(!BuildPage(rec).ok());
  CHECK(BuiltinNotFoundPage()->status() == 404);
}

TEST_CASE("page: a signed-in reader's answer is private, never for a shared cache; the rest of the head is kept") {
  auto page = PageForTest("/p", "<p>members</p>");
  for (bool gzip : {true, false}) {
    auto r = RespondPrivate(page, gzip, false, false);
    REQUIRE(r.ok());
    std::string head = std::string(r->head) + std::string(r->more_head[0]) + std::string(r->more_head[1]);
    CHECK(head.find("Cache-Control: private, no-cache\r\n") != std::string::npos);
    CHECK(head.find("Vary: Accept-Encoding, Cookie\r\n") != std::string::npos);
    CHECK(head.find("public") == std::string::npos);
    CHECK(head.find("Content-Security-Policy: ") != std::string::npos);
    CHECK(head.find("X-Frame-Options: SAMEORIGIN\r\n") != std::string::npos);
    CHECK(head.find("ETag: ") != std::string::npos);
    CHECK(r->body == (gzip ? page->body_gzip() : std::string_view("<p>members</p>")));
  }
  auto nm = RespondPrivate(page, true, true, false);
  REQUIRE(nm.ok());
  CHECK(nm->head.substr(0, 12) == "HTTP/1.1 304");
  CHECK(std::string(nm->more_head[1]).find("private") != std::string::npos);
  // The public answer is untouched.
  CHECK(page->Head(true, false).find("private") == std::string::npos);
}

TEST_CASE("page: the built-in sign-in page: a form posting to its own URL, a place for the error") {
  auto page = BuiltinSigninPage();
  CHECK(page->status() == 401);
  std::string html = page->Identity().value();
  CHECK(html.find("<form method=\"post\">") != std::string::npos);
  CHECK(html.find("name=\"password\"") != std::string::npos);
  CHECK(html.find(kSigninErrorMark) != std::string::npos);
  CHECK(html.find("noindex") != std::string::npos);
}

TEST_CASE("page: every head carries the record's CSP, or the strict default, with nosniff and SAMEORIGIN (issue 9)") {
  bus::PageRecord rec;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"abc\"";
  rec.body_gzip = GzipCompress("<p>hello</p>");
  auto has_all = [](const Page& page, const std::string& csp) {
    for (const std::string& h : {page.Head(false, false), page.Head(true, false), page.Head(false, true), page.Head(true, true)}) {
      const std::string* head = &h;
      CHECK(head->find("\r\nContent-Security-Policy: " + csp + "\r\n") != std::string::npos);
      CHECK(head->find("\r\nX-Content-Type-Options: nosniff\r\n") != std::string::npos);
      CHECK(head->find("\r\nX-Frame-Options: SAMEORIGIN\r\n") != std::string::npos);
    }
  };
  auto without = BuildPage(rec);  // a schema 1 record, or one without a policy
  REQUIRE(without.ok());
  has_all(**without, site::PageCsp());
  rec.csp = "default-src 'none'; script-src 'sha256-x'";
  auto with = BuildPage(rec);
  REQUIRE(with.ok());
  has_all(**with, rec.csp);
  has_all(*BuiltinNotFoundPage(), site::PageCsp());
  rec.csp = "default-src 'none'\r\nSet-Cookie: a=b";  // would smuggle a header
  CHECK(BuildPage(rec).status().code() == Code::kInvalidArgument);
}

TEST_CASE("page: a record whose header values carry control characters is refused") {
  bus::PageRecord good;
  good.status = 301;
  good.content_type = "text/html; charset=utf-8";
  good.cache_control = "no-cache";
  good.location = "/moved";
  good.etag = "\"abc\"";
  good.body_gzip = GzipCompress("<p>moved</p>");
  REQUIRE(BuildPage(good).ok());
  for (const std::string& bad : std::vector<std::string>{"\r\nSet-Cookie: a=b", "a\nb", std::string("a\0b", 3), "\x7f"}) {
    for (auto field : {&bus::PageRecord::content_type, &bus::PageRecord::cache_control, &bus::PageRecord::location,
                       &bus::PageRecord::etag, &bus::PageRecord::csp}) {
      bus::PageRecord rec = good;
      rec.*field += bad;
      auto p = BuildPage(rec);
      CAPTURE(rec.*field);
      CHECK(p.status().code() == Code::kInvalidArgument);
      CHECK(p.status().message().find("control characters") != std::string::npos);
    }
  }
  // Also for an attachment, whose Content-Type is decided from its name.
  bus::PageRecord asset = good;
  asset.status = 200;
  asset.location.clear();
  asset.cache_control = "public\r\nSet-Cookie: a=b";
  CHECK(BuildPage(asset, "/assets/0123456789abcdef/pic.png").status().code() == Code::kInvalidArgument);
}

TEST_CASE("page: an attachment published as a page record is served like one from storage (issue 9, item 2)") {
  bus::PageRecord rec;
  rec.content_type = "image/svg+xml";
  rec.etag = "\"svg\"";
  rec.body_gzip = GzipCompress("<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>");
  auto svg = BuildPage(rec, "/assets/0123456789abcdef/evil.svg");
  REQUIRE(svg.ok());
  for (const std::string& h : {(*svg)->Head(false, false), (*svg)->Head(true, false), (*svg)->Head(false, true), (*svg)->Head(true, true)}) {
    const std::string* head = &h;
    CHECK(head->find("\r\nContent-Security-Policy: " + std::string(http::kUntrustedCsp) + "\r\n") != std::string::npos);
    CHECK(head->find("\r\nX-Content-Type-Options: nosniff\r\n") != std::string::npos);
    CHECK(head->find("\r\nContent-Disposition: attachment; filename=\"evil.svg\"\r\n") != std::string::npos);
  }
  // An image stays inline; HTML bytes named .png are served as a PNG download.
  rec.content_type = "image/png";
  auto png = BuildPage(rec, "/assets/0123456789abcdef/pic.png");
  REQUIRE(png.ok());
  CHECK((*png)->Head(false, false).find("Content-Disposition") == std::string::npos);
  CHECK((*png)->Head(false, false).find("\r\nContent-Type: image/png\r\n") != std::string::npos);
  rec.content_type = "text/html";
  auto lying = BuildPage(rec, "/assets/0123456789abcdef/cat.png");
  REQUIRE(lying.ok());
  CHECK((*lying)->Head(false, false).find("\r\nContent-Type: image/png\r\n") != std::string::npos);
  CHECK((*lying)->Head(false, false).find("\r\nContent-Disposition: attachment; filename=\"cat.png\"\r\n") != std::string::npos);
  // A note page's record is untouched by this.
  rec.content_type = "text/html; charset=utf-8";
  auto note = BuildPage(rec, "/assets-guide");
  REQUIRE(note.ok());
  CHECK((*note)->Head(false, false).find("Content-Disposition") == std::string::npos);
}

TEST_CASE("page: pages built with one HeadTails share one copy of their common header lines (issue 12)") {
  HeadTails tails;
  bus::PageRecord rec;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"a\"";
  rec.csp = site::PageCsp();
  rec.body_gzip = GzipCompress("<p>a</p>");
  auto a = BuildPage(rec, "/a", &tails);
  rec.etag = "\"b\"";
  rec.body_gzip = GzipCompress("<p>b</p>");
  auto b = BuildPage(rec, "/b", &tails);
  rec.csp = "default-src 'none'";
  auto c = BuildPage(rec, "/c", &tails);
  REQUIRE((a.ok() && b.ok() && c.ok()));
  CHECK(tails.size() == 2);  // two policies, two tails
  auto pa = Respond(*a, false, false, false).value(), pb = Respond(*b, true, true, false).value(),
       pc = Respond(*c, false, false, false).value();
  CHECK(pa.more_head[1].data() == pb.more_head[1].data());  // the same bytes, not a copy
  CHECK(pa.more_head[1].data() != pc.more_head[1].data());
  CHECK(pa.more_head[1].find("Content-Security-Policy: " + site::PageCsp() + "\r\n") != std::string_view::npos);
  CHECK(pc.more_head[1].find("Content-Security-Policy: default-src 'none'\r\n") != std::string_view::npos);
  // Each page keeps its own URL, bodies and ETags.
  CHECK((*a)->url() == "/a");
  CHECK((*b)->Identity().value() == "<p>b</p>");
  CHECK((*b)->etag() == "\"b\"");
  CHECK((*b)->etag_gzip() == "\"b-gz\"");
  CHECK(pb.body.empty());  // a 304
  CHECK((*b)->Head(true, true).find("HTTP/1.1 304 Not Modified\r\nETag: \"b-gz\"\r\n") == 0);
}

TEST_CASE("page: a record whose body is a blob in storage (the bundled mermaid) keeps its hash and type") {
  const std::string sha(64, 'a');
  bus::PageRecord rec;
  rec.content_type = "text/javascript; charset=utf-8";
  rec.etag = "\"" + sha + "\"";
  rec.body_blob = sha;
  auto js = BuildPage(rec, "/assets/aaaaaaaaaaaaaaaa/mermaid.min.js");
  REQUIRE(js.ok());
  REQUIRE((*js)->blob() != nullptr);
  CHECK((*js)->blob()->sha256 == sha);
  CHECK((*js)->blob()->content_type == "text/javascript; charset=utf-8");  // ingest's, not the name's rule
  CHECK((*js)->body_gzip().empty());
  CHECK((*js)->Identity().value().empty());
  for (const std::string& bad : {std::string(63, 'a'), std::string(64, 'A'), std::string(63, 'a') + "g", std::string("x")}) {
    rec.body_blob = bad;
    CHECK_MESSAGE(BuildPage(rec, "/assets/aaaaaaaaaaaaaaaa/mermaid.min.js").status().code() == Code::kInvalidArgument,
                  bad);
  }
  // Every other record has none, under /assets/ too.
  rec.body_blob.clear();
  rec.body_gzip = GzipCompress("x");
  auto plain = BuildPage(rec, "/assets/aaaaaaaaaaaaaaaa/mermaid.min.js");
  REQUIRE(plain.ok());
  CHECK((*plain)->blob() == nullptr);
  CHECK((*plain)->Head(false, false).find("\r\nContent-Type: application/octet-stream\r\n") != std::string::npos);
}

namespace {

// The whole answer as a client reads it (the server adds Date, Connection).
std::string Wire(const http::PreparedResponse& r) {
  return std::string(r.head) + std::string(r.more_head[0]) + std::string(r.more_head[1]) + "\r\n" +
         std::string(r.body);
}

}  // namespace

TEST_CASE("page: an identity answer inflates the gzip body per request; gzip is the held bytes") {
  std::string html = "<!doctype html><title>t</title>";
  for (int i = 0; i < 2000; ++i) html += "<p>paragraph " + std::to_string(i) + "</p>\n";
  bus::PageRecord rec;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"e1\"";
  rec.body_gzip = GzipCompress(html);
  REQUIRE(rec.body_gzip.size() * 2 < html.size());
  auto built = BuildPage(rec, "/p");
  REQUIRE(built.ok());
  std::shared_ptr<const Page> page = *built;
  CHECK(page->body_bytes() == rec.body_gzip.size());

  SUBCASE("identity 200: Content-Length and body are the inflated bytes; identity ETag") {
    http::PreparedResponse r = Respond(page, /*gzip=*/false, /*not_modified=*/false, /*head_only=*/false).value();
    CHECK(r.body == html);
    CHECK(r.body.data() != page->body_gzip().data());
    CHECK(r.head.find("Content-Length: " + std::to_string(html.size()) + "\r\n") != std::string_view::npos);
    CHECK(r.head.find("Content-Encoding") == std::string_view::npos);
    CHECK(r.more_head[0].find("ETag: \"e1\"\r\n") == 0);
    CHECK(Wire(r).find("\r\n\r\n" + html) != std::string::npos);
    // keep owns the inflated body and pins the page (whose head lines r points into).
    REQUIRE(r.keep != nullptr);
    CHECK(r.keep.get() != page.get());
    const long pinned = page.use_count();
    r.keep.reset();
    CHECK(page.use_count() == pinned - 1);
  }
  SUBCASE("gzip 200: the page's own bytes, keep is the page itself") {
    http::PreparedResponse r = Respond(page, /*gzip=*/true, /*not_modified=*/false, /*head_only=*/false).value();
    CHECK(r.body.data() == page->body_gzip().data());
    CHECK(r.body.size() == rec.body_gzip.size());
    CHECK(r.head.find("Content-Encoding: gzip\r\nContent-Length: " + std::to_string(rec.body_gzip.size()) + "\r\n") !=
          std::string_view::npos);
    CHECK(r.more_head[0].find("ETag: \"e1-gz\"\r\n") == 0);
    CHECK(r.keep.get() == page.get());
  }
  SUBCASE("gzip 200, 304 and HEAD allocate nothing; an identity 200 allocates its body") {
    std::shared_ptr<const Page> copy = page;
    uint64_t before = t_allocations;
    for (auto [gz, nm, head] : {std::tuple{true, false, false}, std::tuple{true, true, false},
                                std::tuple{false, true, false}, std::tuple{false, false, true},
                                std::tuple{true, false, true}}) {
      http::PreparedResponse r = Respond(page, gz, nm, head).value();
      CHECK(!r.head.empty());
    }
    CHECK(t_allocations == before);
    http::PreparedResponse id = Respond(std::move(copy), false, false, false).value();
    CHECK(t_allocations > before);
    CHECK(id.body.size() == html.size());
  }
  SUBCASE("304 in either encoding: no body, the encoding's ETag, nothing inflated") {
    for (bool gz : {false, true}) {
      http::PreparedResponse r = Respond(page, gz, /*not_modified=*/true, /*head_only=*/false).value();
      CHECK(r.head == "HTTP/1.1 304 Not Modified\r\n");
      CHECK(r.body.empty());
      CHECK(r.more_head[0].find(gz ? "ETag: \"e1-gz\"\r\n" : "ETag: \"e1\"\r\n") == 0);
      CHECK(r.keep.get() == page.get());
    }
  }
  SUBCASE("HEAD identity: the identity Content-Length, nothing inflated") {
    http::PreparedResponse r = Respond(page, /*gzip=*/false, /*not_modified=*/false, /*head_only=*/true).value();
    CHECK(r.head.find("Content-Length: " + std::to_string(html.size()) + "\r\n") != std::string_view::npos);
    CHECK(r.body.empty());
    CHECK(r.keep.get() == page.get());
  }
}

TEST_CASE("page: a gzip body whose structure is broken is refused at build") {
  bus::PageRecord rec;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"x\"";
  const std::string good = GzipCompress("<p>a body long enough to have a real deflate stream</p>");
  std::string bad_method = good, reserved_flag = good, name_past_end = good, huge = good;
  bad_method[2] = 7;
  reserved_flag[3] = static_cast<char>(0x20);
  name_past_end[3] = 8;  // FNAME: a name that never ends within the header
  std::fill(name_past_end.begin() + 10, name_past_end.end(), 'n');
  huge.replace(huge.size() - 4, 4, "\x00\x00\x00\x7f");  // ISIZE 2 GiB from ~60 bytes
  for (const std::string& bad : {std::string("broken"), std::string(), good.substr(0, 18), bad_method, reserved_flag,
                                 name_past_end, huge, good.substr(0, 10) + std::string(good.size() - 10, '\xff')}) {
    rec.body_gzip = bad;
    auto p = BuildPage(rec, "/p");
    CAPTURE(bad.size());
    CHECK(p.status().code() == Code::kInvalidArgument);
  }
  rec.body_gzip = good;
  auto p = BuildPage(rec, "/p");
  REQUIRE(p.ok());
  CHECK((*p)->identity_size() == 55);  // from the trailer
}

TEST_CASE("page: corrupt deflate data in a well-formed member is trusted at build; identity answers refuse it") {
  const std::string html = "<p>a body long enough to have a real deflate stream</p>";
  const std::string good = GzipCompress(html);
  std::string corrupt = good, short_isize = good;
  // BTYPE 11 (reserved) in the first block header: inflate fails at once.
  std::fill(corrupt.begin() + 10, corrupt.end() - 8, '\xff');
  short_isize[short_isize.size() - 4] = static_cast<char>(html.size() - 1);  // inflates one byte past it
  for (const std::string& body : {corrupt, short_isize}) {
    bus::PageRecord rec;
    rec.content_type = "text/html; charset=utf-8";
    rec.etag = "\"x\"";
    rec.body_gzip = body;
    auto built = BuildPage(rec, "/p");
    REQUIRE(built.ok());
    std::shared_ptr<const Page> page = *built;
    CHECK(page->Identity().status().code() == Code::kDataLoss);
    // A gzip answer is the record's bytes, as they are: the reader's inflate judges them.
    auto gz = Respond(page, /*gzip=*/true, /*not_modified=*/false, /*head_only=*/false);
    REQUIRE(gz.ok());
    CHECK(gz->body == body);
    // HEAD and 304 inflate nothing, so they answer; an identity GET is refused.
    CHECK(Respond(page, /*gzip=*/false, /*not_modified=*/false, /*head_only=*/true).ok());
    CHECK(Respond(page, /*gzip=*/false, /*not_modified=*/true, /*head_only=*/false).ok());
    auto id = Respond(page, /*gzip=*/false, /*not_modified=*/false, /*head_only=*/false);
    CHECK(id.status().code() == Code::kDataLoss);
  }
}

TEST_CASE("page: the built-in sign-in page in a shipped language, English for any other (issue 29)") {
  std::string ja = BuiltinSigninPage("ja")->Identity().value();
  CHECK(ja.find("<html lang=\"ja\">") != std::string::npos);
  CHECK(ja.find("パスワード") != std::string::npos);
  CHECK(ja.find("Password") == std::string::npos);
  std::string other = BuiltinSigninPage("xx")->Identity().value();
  CHECK(other.find("<html lang=\"en\">") != std::string::npos);
  CHECK(other.find("Password") != std::string::npos);
}
