// SitePrefs: the settings a site's owner sets with `folio-ingest site set`
// and `site reader` (Obsidian Publish's "site options", issue 29), stored
// per site in ingest's SQLite (tables site_prefs and site_readers, Store)
// and copied into each SiteWriter's SiteOptions. The page renderer reads
// them (private: noindex, robots, no feeds, pages kSignedIn; the
// coordinator wires lang, feed and analytics into site::SiteInfo) and
// Sites publishes the access part in the site's bus::SiteRecord.
//
// SECRET MATERIAL: session_key and the readers' hashes sign and check the
// site's sessions; they are never logged or printed.
// Plain data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/page_schema.h"
#include "folio/bus/site_schema.h"
#include "folio/core/status.h"

namespace folio::ingest {

inline constexpr size_t kMinPasswordBytes = 8;
inline constexpr size_t kMaxPasswordBytes = 1024;
inline constexpr size_t kMaxLangBytes = 35;
inline constexpr size_t kMaxAnalyticsIdBytes = 200;
inline constexpr size_t kMaxAnalyticsUrlBytes = 2048;
inline constexpr int64_t kMinSessionTtlS = 60;
inline constexpr int64_t kMaxSessionTtlS = int64_t{400} * 86400;

struct SitePrefs {
  bool private_site = false;         // --private on|off: every URL needs a session (default off)
  std::string lang = "en";           // --lang: BCP 47-ish tag ("en", "pt-BR", "zh-Hans"), <html lang>
  std::string feed = "content";      // --feed: "content" (RSS items carry the note) or "summary"
  std::string analytics;             // --analytics: "" (none, default), "plausible", "umami",
                                     // "goatcounter", "google" or "custom"
  std::string analytics_id;          // --analytics-id: the provider's domain / website id / code /
                                     // measurement id ("" for custom)
  std::string analytics_url;         // --analytics-url: https script URL (custom, or a self-hosted
                                     // Plausible/Umami); "" = the provider's own
  int64_t session_ttl_s = 7 * 86400;  // --session-ttl (default 7d), kMinSessionTtlS..kMaxSessionTtlS
  std::string session_key;           // bus::kSessionKeyHexBytes lowercase hex; "" until the site
                                     // first gets readers (NewSessionKey)
  std::vector<bus::SiteReader> readers;  // by name ("" = the site password first)
};

// Every field equal (readers in order, with their hashes).
bool SamePrefs(const SitePrefs& a, const SitePrefs& b);

// Sets the setting `name` ("private", "lang", "feed", "analytics",
// "analytics-id", "analytics-url", "session-ttl") from its command-line
// value. kInvalidArgument naming the setting when the value is not one it
// takes (prefs unchanged). "--analytics none" clears the provider with its
// id and URL.
Status SetPref(SitePrefs* prefs, std::string_view name, std::string_view value);
// The checks across settings: a provider other than custom needs an id,
// custom needs a URL; an id or URL needs a provider. kInvalidArgument
// naming the setting.
Status CheckPrefs(const SitePrefs& prefs);
// "90s", "30m", "12h", "7d", "2w" (a plain number is seconds) in seconds,
// within kMinSessionTtlS..kMaxSessionTtlS; kInvalidArgument otherwise.
Result<int64_t> ParseSessionTtl(std::string_view value);
// "7d", "36h", "90s": the shortest exact form of a ttl, for `site show`.
std::string FormatSessionTtl(int64_t seconds);

// A site whose pages need a session to read, or that has a sign-in page
// (private, or with readers).
inline bool HasSignIn(const SitePrefs& p) { return p.private_site || !p.readers.empty(); }
// Who may read the site's pages.
inline bus::PageAccess PageAccessOf(const SitePrefs& p) {
  return p.private_site ? bus::PageAccess::kSignedIn : bus::PageAccess::kPublic;
}
// The access block of the site's record (bus::SiteRecord::access).
bus::SiteAccess SiteAccessOf(const SitePrefs& p);

// Adds or replaces the reader `name` ("" = the site password) with the
// password's hash, and makes a new session key: every session so far stops
// working. kInvalidArgument for a bad name or a password outside
// kMinPasswordBytes..kMaxPasswordBytes (or with a NUL); kTooLarge past
// bus::kMaxSiteReaders; kInternal if hashing fails.
Status AddReader(SitePrefs* prefs, std::string_view name, std::string_view password, bool owner);
// Removes the reader `name` and makes a new session key (or "" when no
// reader is left). kNotFound if there is none of that name.
Status RemoveReader(SitePrefs* prefs, std::string_view name);

// libsodium's crypto_pwhash_str (Argon2id, OPSLIMIT/MEMLIMIT_INTERACTIVE).
// kInternal if libsodium fails (out of memory).
Result<std::string> HashPassword(std::string_view password);
// Whether `password` matches `hash` (crypto_pwhash_str_verify).
bool CheckPassword(std::string_view hash, std::string_view password);
// 32 random bytes (randombytes_buf) as 64 lowercase hex digits.
Result<std::string> NewSessionKey();

}  // namespace folio::ingest
