#include <doctest/doctest.h>

#include "folio/auth/form.h"
#include "folio/auth/password.h"
#include "folio/auth/rate_limiter.h"
#include "folio/auth/session.h"
#include "folio/core/hash.h"

using namespace folio;
using namespace folio::auth;

namespace {
const std::string kKeyHex(64, 'a');
std::string Key(std::string_view hex = kKeyHex) {
  std::string k;
  REQUIRE(DecodeSessionKey(hex, &k));
  return k;
}
Session Ann() { return Session{"docs", "ann", true, 1000, 2000}; }
}  // namespace

TEST_CASE("session: a signed cookie verifies for its site until it expires") {
  std::string v = SignSession(Ann(), Key());
  Session s;
  REQUIRE(VerifySession(v, Key(), "docs", 1500, &s));
  CHECK(s.site == "docs");
  CHECK(s.reader == "ann");
  CHECK(s.owner);
  CHECK(s.issued_at == 1000);
  CHECK(s.expires_at == 2000);
  CHECK_FALSE(VerifySession(v, Key(), "docs", 2000, &s));   // expired
  CHECK_FALSE(VerifySession(v, Key(), "other", 1500, &s));  // another site's
  CHECK_FALSE(VerifySession(v, Key(std::string(64, 'b')), "docs", 1500, &s));  // the key rotated
  CHECK_FALSE(VerifySession(v, "", "docs", 1500, &s));  // no key: nobody
  Session pw{"docs", "", false, 1, 99};
  REQUIRE(VerifySession(SignSession(pw, Key()), Key(), "docs", 50, &s));
  CHECK(s.reader.empty());
}

TEST_CASE("session: a tampered payload, a forged or malformed cookie is no session") {
  std::string v = SignSession(Ann(), Key());
  std::string sig = v.substr(v.find('.'));
  Session s;
  for (Session t : {Session{"docs", "bob", true, 1000, 2000}, Session{"docs", "ann", true, 1000, 999999},
                    Session{"evil", "ann", true, 1000, 2000}, Session{"docs", "ann", false, 1000, 2000}}) {
    std::string forged = SignSession(t, Key());
    forged = forged.substr(0, forged.find('.')) + sig;  // the payload changed, the signature kept
    CHECK_FALSE(VerifySession(forged, Key(), t.site, 1500, &s));
  }
  CHECK_FALSE(VerifySession("", Key(), "docs", 1500, &s));
  CHECK_FALSE(VerifySession("abc", Key(), "docs", 1500, &s));
  CHECK_FALSE(VerifySession("abc.def", Key(), "docs", 1500, &s));
  CHECK_FALSE(VerifySession(v + "x", Key(), "docs", 1500, &s));
  CHECK_FALSE(VerifySession(std::string(600, 'a') + sig, Key(), "docs", 1500, &s));
  // A signature made with a guessed key over a good payload.
  std::string payload = v.substr(0, v.find('.'));
  CHECK_FALSE(VerifySession(payload + "." + Base64UrlEncode(std::string(32, '\0')), Key(), "docs", 1500, &s));
  std::string k;
  CHECK_FALSE(DecodeSessionKey("", &k));
  CHECK_FALSE(DecodeSessionKey(std::string(64, 'A'), &k));
  CHECK_FALSE(DecodeSessionKey(std::string(62, 'a'), &k));
}

TEST_CASE("session: the Set-Cookie value") {
  CHECK(SessionSetCookie("v", 60, false) == "folio_session=v; Max-Age=60; Path=/; HttpOnly; SameSite=Lax");
  CHECK(SessionSetCookie("", 0, true) == "folio_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure");
}

TEST_CASE("form and cookie parsing") {
  std::string v;
  REQUIRE(FormField("name=ann&password=a+b%21%3D&next=%2Fx", "password", &v));
  CHECK(v == "a b!=");
  REQUIRE(FormField("name=ann&password=a+b%21%3D&next=%2Fx", "next", &v));
  CHECK(v == "/x");
  REQUIRE(FormField("name=&password=x", "name", &v));
  CHECK(v.empty());
  CHECK_FALSE(FormField("name=ann", "password", &v));
  CHECK_FALSE(FormField("password=%zz", "password", &v));
  CHECK_FALSE(FormField("password=%4", "password", &v));
  CHECK_FALSE(FormField("password=" + std::string(5000, 'a'), "password", &v));
  CHECK(CookieValue("a=1; folio_session=xyz; b=2", "folio_session") == "xyz");
  CHECK(CookieValue("folio_session=\"q\"", "folio_session") == "q");
  CHECK(CookieValue("xfolio_session=1", "folio_session").empty());
  CHECK(CookieValue("", "folio_session").empty());
}

TEST_CASE("password: the matching reader, the same work for an unknown name") {
  std::vector<bus::SiteReader> readers = {{"ann", HashPassword("ann-pw"), true}, {"", HashPassword("site-pw"), false}};
  REQUIRE(!readers[0].hash.empty());
  const bus::SiteReader* r = VerifyReader(readers, "ann", "ann-pw");
  REQUIRE(r != nullptr);
  CHECK(r->owner);
  CHECK(VerifyReader(readers, "ann", "site-pw") == nullptr);
  CHECK(VerifyReader(readers, "", "site-pw") == &readers[1]);
  CHECK(VerifyReader(readers, "", "ann-pw") == nullptr);
  CHECK(VerifyReader(readers, "nobody", "ann-pw") == nullptr);
  CHECK(VerifyReader({}, "", "x") == nullptr);
}

TEST_CASE("rate limiter: a burst, then the steady rate, per client and per site, in bounded memory") {
  RateLimiter rl(RateLimits{6, 3, 10, 4, 4});
  for (int i = 0; i < 3; ++i) CHECK(rl.Take("1.1.1.1", "docs", 0) == 0);
  int64_t wait = rl.Take("1.1.1.1", "docs", 0);
  CHECK(wait == 10);  // 6 a minute: one every 10 s
  CHECK(rl.Take("1.1.1.1", "docs", 10'000) == 0);
  CHECK(rl.Take("1.1.1.1", "other", 10'000) == 0);  // another site: its own bucket
  // The site's ceiling holds whoever asks: 10 a minute from everyone.
  int ok = 0;
  for (int i = 0; i < 50; ++i) ok += rl.Take("10.0.0." + std::to_string(i), "docs", 10'000) == 0;
  CHECK(ok == 7);  // 10, less the 4 taken, plus 10 s of refill (1.67)
  CHECK(rl.entries() == 4);  // the table never grows past its size
}
