// The page record: EncodePageRecord(PageRecord) (binary, schema 3 for a
// record with a body_blob, else schema 2; schema 1 still decoded), carried
// in KV bucket "pages" by the page feed's packs and snapshots (page_pack.h,
// issue 26) and, in the layout before them, one per key PageKey(site,
// url_path), which edges still read. Ingest writes it, every edge watches it. URL paths are the decoded path a
// reader asks for ("/folder/my-note", "/" for home). Keys use base64url so any
// Unicode path fits NATS's key alphabet [-/_=.a-zA-Z0-9]. Keys starting with
// '_' are folio's own bookkeeping ("_meta.<site>", "_site.<site>" in
// site_schema.h), never pages: ParsePageKey rejects them because '_' is not a
// site character. Byte layout: libs/bus/README.md and src/schema_format.h.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "folio/bus/site_name.h"
#include "folio/core/status.h"

namespace folio::bus {

inline constexpr std::string_view kPagesBucket = "pages";
inline constexpr uint8_t kPageRecordSchemaV4 = 4;  // 4: access (written only for a page that is not public)
inline constexpr uint8_t kPageRecordSchema = 3;    // 3: body_blob
inline constexpr uint8_t kPageRecordSchemaV2 = 2;  // written when body_blob is empty: no body_blob field
inline constexpr uint8_t kPageRecordSchemaV1 = 1;  // still decoded: no csp field

// "<site>.<base64url(url_path)>"; REQUIRES: IsValidSiteName(site).
std::string PageKey(std::string_view site, std::string_view url_path);
// Inverse of PageKey; false for keys folio did not write.
bool ParsePageKey(std::string_view key, std::string* site, std::string* url_path);

// Who an edge may serve a page to. A private site's pages are all
// kSignedIn; so is a `publish: private` note's page on a public site.
enum class PageAccess : uint8_t {
  kPublic = 0,    // anyone
  kSignedIn = 1,  // only a reader with a valid session cookie of the page's site
};

// One servable page as ingest publishes it and the edge serves it.
struct PageRecord {
  uint16_t status = 200;             // 200 page, 301 redirect, 404 the site's not-found page
  std::string content_type;          // "text/html; charset=utf-8"
  std::string cache_control;         // "" = edge default
  std::string location;              // for 301: the target URL path
  std::string etag;                  // quoted strong ETag of the identity body: "\"ab12...\""
  std::string csp;                   // Content-Security-Policy ingest chose for it (libs/site csp.h);
                                     // "" = the edge's strict default (schema 1 records have none)
  int64_t last_modified_s = 0;       // unix seconds
  int64_t version = 0;               // ingest's push version that last changed it
  std::string body_blob;             // "" = the body is body_gzip; else the full hex SHA-256 of the
                                     // body, held by folio-storage (a file over the bus's message
                                     // limit, e.g. the bundled mermaid), body_gzip empty
  std::string body_gzip;             // the body, gzip-compressed once by ingest
  PageAccess access = PageAccess::kPublic;  // who may read it (issue 29); not public = schema 4,
                                     // which edges before it refuse (they serve nothing, never leak)
};

// Aborts if a short field exceeds 65535 bytes or the body 4 GiB (a caller bug).
std::string EncodePageRecord(const PageRecord& r);
// Schema 4, 3, 2 (body_blob "") or 1 (csp "" too); schemas before 4 are
// PageAccess::kPublic; an unknown access byte is kInvalidArgument. kInvalidArgument on truncation, trailing
// bytes or an unknown schema byte.
Status DecodePageRecord(std::string_view data, PageRecord* out);

}  // namespace folio::bus
