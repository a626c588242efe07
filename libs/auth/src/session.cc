#include "folio/auth/session.h"

#include <sodium.h>

#include <charconv>

#include "folio/core/hash.h"

namespace folio::auth {
namespace {

std::string Mac(std::string_view payload, std::string_view key) {
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, reinterpret_cast<const unsigned char*>(key.data()), key.size());
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(payload.data()), payload.size());
  crypto_auth_hmacsha256_final(&st, mac);
  return std::string(reinterpret_cast<const char*>(mac), sizeof mac);
}

// The next ':'-separated field of *rest, which loses it and its ':'.
bool NextField(std::string_view* rest, std::string_view* field) {
  size_t colon = rest->find(':');
  if (colon == std::string_view::npos) return false;
  *field = rest->substr(0, colon);
  rest->remove_prefix(colon + 1);
  return true;
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool ParsePayload(std::string_view p, Session* out) {
  std::string_view version, site, owner, iat, exp;
  if (!NextField(&p, &version) || version != "1" || !NextField(&p, &site) || !NextField(&p, &owner) ||
      !NextField(&p, &iat) || !NextField(&p, &exp)) {
    return false;
  }
  if ((owner != "0" && owner != "1") || !ParseInt(iat, &out->issued_at) || !ParseInt(exp, &out->expires_at)) {
    return false;
  }
  out->site = std::string(site);
  out->owner = owner == "1";
  out->reader = std::string(p);
  return true;
}

}  // namespace

bool DecodeSessionKey(std::string_view hex, std::string* out) {
  out->clear();
  if (hex.size() != 2 * kSessionKeyBytes || !IsLowerHex(hex)) return false;
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    out->push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  }
  return true;
}

std::string SignSession(const Session& s, std::string_view key) {
  std::string payload = "1:" + s.site + ":" + (s.owner ? "1" : "0") + ":" + std::to_string(s.issued_at) + ":" +
                        std::to_string(s.expires_at) + ":" + s.reader;
  return Base64UrlEncode(payload) + "." + Base64UrlEncode(Mac(payload, key));
}

bool VerifySession(std::string_view value, std::string_view key, std::string_view site, int64_t now,
                   Session* out) {
  if (key.size() != kSessionKeyBytes || value.size() > kMaxSessionCookieBytes) return false;
  size_t dot = value.find('.');
  if (dot == std::string_view::npos) return false;
  std::string payload, mac;
  if (!Base64UrlDecode(value.substr(0, dot), &payload) || !Base64UrlDecode(value.substr(dot + 1), &mac)) return false;
  if (mac.size() != crypto_auth_hmacsha256_BYTES) return false;
  // Constant time: crypto_auth_hmacsha256_verify compares with sodium's verify_32.
  if (sodium_init() < 0) return false;
  unsigned char k[crypto_auth_hmacsha256_KEYBYTES];
  static_assert(sizeof k == kSessionKeyBytes);
  for (size_t i = 0; i < sizeof k; ++i) k[i] = static_cast<unsigned char>(key[i]);
  if (crypto_auth_hmacsha256_verify(reinterpret_cast<const unsigned char*>(mac.data()),
                                    reinterpret_cast<const unsigned char*>(payload.data()), payload.size(), k) != 0) {
    sodium_memzero(k, sizeof k);
    return false;
  }
  sodium_memzero(k, sizeof k);
  Session s;
  if (!ParsePayload(payload, &s) || s.site != site || now >= s.expires_at) return false;
  *out = std::move(s);
  return true;
}

std::string SessionSetCookie(std::string_view value, int64_t ttl_s, bool secure) {
  std::string c(kSessionCookie);
  c += "=";
  c += value;
  c += "; Max-Age=" + std::to_string(ttl_s) + "; Path=/; HttpOnly; SameSite=Lax";
  if (secure) c += "; Secure";
  return c;
}

}  // namespace folio::auth
