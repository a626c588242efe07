// Sessions of a private site's readers (issue 29): the `folio_session`
// cookie, base64url(payload) "." base64url(HMAC-SHA256(key, payload)), with
// the payload "1:<site>:<owner 0|1>:<issued-at>:<expires-at>:<reader>"
// (unix seconds; the reader name last: it may be "" for a site password and
// never holds ':'). The key is the site's bus::SiteAccess::session_key,
// decoded (32 bytes): ingest replaces it when passwords change, which ends
// every session signed with the old one.
// Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace folio::auth {

inline constexpr std::string_view kSessionCookie = "folio_session";
inline constexpr size_t kSessionKeyBytes = 32;
// A cookie value longer than this is no session (the longest real one is ~250).
inline constexpr size_t kMaxSessionCookieBytes = 512;

struct Session {
  std::string site;
  std::string reader;  // "" = signed in with a site password
  bool owner = false;
  int64_t issued_at = 0;   // unix seconds
  int64_t expires_at = 0;  // unix seconds; the session is over from then on
};

// The 32-byte key of a bus::SiteAccess::session_key (64 lowercase hex);
// false (and `out` cleared) for "" or anything else.
bool DecodeSessionKey(std::string_view hex, std::string* out);

// The cookie value for `s`. REQUIRES: key.size() == kSessionKeyBytes;
// s.site and s.reader hold no ':' in the site and no control characters.
std::string SignSession(const Session& s, std::string_view key);

// True, with *out filled, iff `value` is a cookie SignSession made with
// `key` (checked in constant time) for site `site`, and now < expires_at.
// False for anything else: another site's, expired, forged, tampered,
// signed with another key, malformed or too long. An empty key accepts
// nothing.
bool VerifySession(std::string_view value, std::string_view key, std::string_view site, int64_t now,
                   Session* out);

// The Set-Cookie value that hands `value` to the browser for ttl_s seconds:
// HttpOnly, SameSite=Lax, Path=/, and Secure if `secure`. ttl_s 0 (and
// value "") clears the cookie.
std::string SessionSetCookie(std::string_view value, int64_t ttl_s, bool secure);

}  // namespace folio::auth
