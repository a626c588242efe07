// The site-records contract: KV bucket "pages" (page_schema.h), key
// SiteKey(site) = "_site.<site>", value EncodeSiteRecord(SiteRecord) (JSON,
// schema 1). Ingest writes one per site, at start and when a site is added,
// and deletes it when the site is removed; edges watch them to pick the site
// of a request by its Host header (hosts.h), and who may read the site
// (SiteAccess, issue 29). Pure functions; thread-safe.
//
// A record of a site with readers (SiteAccess) is SECRET MATERIAL: it holds
// the key that signs the site's session cookies and its password hashes. It
// travels only over the bus, which readers must never reach
// (docs/architecture.md, "Private sites").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/site_name.h"
#include "folio/core/status.h"

namespace folio::bus {

inline constexpr std::string_view kSiteKeyPrefix = "_site.";  // + site
inline constexpr int kSiteRecordSchema = 2;    // 2: access (schema 1 is still read: no access)
inline constexpr int kSiteRecordSchemaV1 = 1;
inline constexpr size_t kMaxSiteHosts = 64;
inline constexpr size_t kMaxSiteReaders = 256;       // users and passwords of one site
inline constexpr size_t kMaxReaderNameBytes = 64;
inline constexpr size_t kMaxPasswordHashBytes = 256;  // crypto_pwhash_STRBYTES is 128
inline constexpr size_t kSessionKeyHexBytes = 64;     // 32-byte HMAC-SHA256 key, hex

// "_site.<site>"; REQUIRES: IsValidSiteName(site).
std::string SiteKey(std::string_view site);
// Inverse of SiteKey; false for any other key (page keys included).
bool ParseSiteKey(std::string_view key, std::string* site);

// One way to sign in to a site: a named user, or a site password (name "").
struct SiteReader {
  std::string name;          // "" = a site password; else 1..kMaxReaderNameBytes of printable UTF-8
                             // without spaces, control characters or ':'
  std::string hash;          // the password's libsodium crypto_pwhash_str (Argon2id, "$argon2id$..."),
                             // at most kMaxPasswordHashBytes; never the password
  bool owner = false;        // may see the site's /_/stats
};

// Who may read a site. An edge holds a site's access only in memory, from
// the site's record; it signs and checks session cookies with session_key
// and checks passwords against the readers' hashes.
struct SiteAccess {
  bool private_site = false;        // every URL of the site needs a session
  std::string session_key;          // kSessionKeyHexBytes lowercase hex, or "" (no session can be
                                    // made or checked: no one can sign in). Ingest makes a new one
                                    // when the readers or their passwords change, or on a rotation:
                                    // every session signed with the old one stops working
  int64_t session_ttl_s = 7 * 86400;  // how long a session lasts after sign-in (60 s .. 400 days)
  std::vector<SiteReader> readers;  // at most kMaxSiteReaders
};

// Which host names one site answers, published by ingest so that edges can
// pick the site of a request by its Host header. Deleting the key withdraws
// the hosts.
struct SiteRecord {
  std::string site;                // IsValidSiteName
  std::vector<std::string> hosts;  // each NormalizeHost-canonical (hosts.h); at most kMaxSiteHosts
  std::string title;               // shown on pages; may be empty
  SiteAccess access;               // schema 1 records: the default (public, nobody signs in)
};

// A reader name as SiteReader::name allows ("" included: a site password).
bool IsValidReaderName(std::string_view name);

// {"schema":2,"site":"a","hosts":["a.example"],"title":"A","access":{"private":true,
//  "session_key":"<hex>","session_ttl_s":604800,"readers":[{"name":"ann","hash":"$argon2id$...",
//  "owner":true}]}}; "access" is left out for a site with no readers and not private.
std::string EncodeSiteRecord(const SiteRecord& r);
// kInvalidArgument on malformed JSON, a missing field, an unknown schema, an
// invalid site name, a host that is not canonical, or an access block out of
// its bounds (key not 64 hex, a name or hash too long, too many readers, two
// readers of one name, a ttl out of range). Unknown fields are skipped.
Status DecodeSiteRecord(std::string_view json, SiteRecord* out);

}  // namespace folio::bus
