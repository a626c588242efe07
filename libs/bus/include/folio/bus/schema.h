// Every subject, bucket, key and payload that crosses NATS, defined once.
//
//   KV bucket "pages"  key   = PageKey(site, url_path)
//                      value = EncodePageRecord(PageRecord)    (binary, schema 2; 1 still decoded)
//                      key   = SiteKey(site) = "_site.<site>"
//                      value = EncodeSiteRecord(SiteRecord)    (JSON, schema 1)
//   stream   "notes"   subject = NotesSubject(site) = "notes.<site>"
//                      data    = EncodeNoteEvent(NoteEvent)    (JSON, schema 1)
//   stream   "related" subject = RelatedSubject(site) = "related.<site>"
//                      data    = EncodeRelatedUpdate(RelatedUpdate) (JSON, schema 1)
//   request  "search.query"    EncodeSearchQuery -> EncodeSearchReply (JSON, schema 1)
//   request  "search.related"  EncodeRelatedQuery -> EncodeSearchReply (JSON, schema 1)
//
// Site names are [a-z0-9-]{1,63}. URL paths are the decoded path a reader
// asks for ("/folder/my-note", "/" for home). Keys use base64url so any
// Unicode path fits NATS's key alphabet [-/_=.a-zA-Z0-9]. Keys starting
// with '_' are folio's own bookkeeping ("_meta.<site>", "_site.<site>"),
// never pages: ParsePageKey rejects them because '_' is not a site character.
// Pure functions; thread-safe. See libs/bus/README.md for the byte layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio::bus {

inline constexpr std::string_view kPagesBucket = "pages";
inline constexpr std::string_view kNotesStream = "notes";
inline constexpr std::string_view kNotesSubjectPrefix = "notes.";  // + site
inline constexpr uint8_t kPageRecordSchema = 2;    // 2: csp
inline constexpr uint8_t kPageRecordSchemaV1 = 1;  // still decoded: no csp field
inline constexpr int kNoteEventSchema = 1;
inline constexpr std::string_view kSiteKeyPrefix = "_site.";  // + site
inline constexpr int kSiteRecordSchema = 1;
inline constexpr size_t kMaxHostNameSize = 253;
inline constexpr size_t kMaxSiteHosts = 64;

// True for [a-z0-9-]{1,63} not starting with '-'.
bool IsValidSiteName(std::string_view site);

// "<site>.<base64url(url_path)>"; REQUIRES: IsValidSiteName(site).
std::string PageKey(std::string_view site, std::string_view url_path);
// Inverse of PageKey; false for keys folio did not write.
bool ParsePageKey(std::string_view key, std::string* site, std::string* url_path);
// "notes.<site>"
std::string NotesSubject(std::string_view site);

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
  std::string body_gzip;             // the body, gzip-compressed once by ingest
};

std::string EncodePageRecord(const PageRecord& r);
// Schema 2, or schema 1 (csp ""). kInvalidArgument on truncation, trailing
// bytes or an unknown schema byte.
Status DecodePageRecord(std::string_view data, PageRecord* out);

// A heading of a note, for consumers that split the text by section.
struct NoteSection {
  std::string heading;     // visible heading text
  std::string anchor;      // its id in the page (url#anchor)
  uint32_t offset = 0;     // byte offset in NoteEvent::text where the heading's line starts
};

// One changed or deleted note, for search and other consumers of "notes".
struct NoteEvent {
  std::string site;
  std::string path;        // vault path, "Folder/Note.md"
  std::string url;         // canonical URL path
  int64_t version = 0;     // push version
  bool deleted = false;
  std::string title;
  std::vector<std::string> tags;
  std::string text;        // plain text of the note (no markup)
  std::vector<NoteSection> sections;  // headings in text order (optional; "sections" in JSON)
};

std::string EncodeNoteEvent(const NoteEvent& e);
Status DecodeNoteEvent(std::string_view json, NoteEvent* out);

// ---- Sites and host names.

// "_site.<site>"; REQUIRES: IsValidSiteName(site).
std::string SiteKey(std::string_view site);
// Inverse of SiteKey; false for any other key (page keys included).
bool ParseSiteKey(std::string_view key, std::string* site);

// Canonical form of a host as a Host header or an operator gives it:
// ASCII lower case, without ":port", without the brackets of an IPv6
// literal and without a trailing '.' ("A.Example.:8081" -> "a.example",
// "[::1]:80" -> "::1"). Writes into *out, reusing its capacity (no
// allocation once it has kMaxHostNameSize bytes: safe on the edge's hot
// path). False (out unspecified) when the result is empty, longer than
// kMaxHostNameSize, or has a character outside [a-z0-9._-] (an IPv6
// literal, bracketed or with two or more ':', allows [0-9a-f:.] only).
bool NormalizeHost(std::string_view host, std::string* out);

// Which host names one site answers, published by ingest so that edges can
// pick the site of a request by its Host header. Deleting the key withdraws
// the hosts.
struct SiteRecord {
  std::string site;                // IsValidSiteName
  std::vector<std::string> hosts;  // each NormalizeHost-canonical; at most kMaxSiteHosts
  std::string title;               // shown on pages; may be empty
};

// {"schema":1,"site":"a","hosts":["a.example"],"title":"A"}
std::string EncodeSiteRecord(const SiteRecord& r);
// kInvalidArgument on malformed JSON, a missing field, an unknown schema, an
// invalid site name, or a host that is not canonical. Unknown fields are skipped.
Status DecodeSiteRecord(std::string_view json, SiteRecord* out);

// ---- Search (request/reply) and related notes (stream "related").

inline constexpr std::string_view kRelatedStream = "related";
inline constexpr std::string_view kRelatedSubjectPrefix = "related.";  // + site
inline constexpr std::string_view kSearchQuerySubject = "search.query";
inline constexpr std::string_view kSearchRelatedSubject = "search.related";
inline constexpr int kSearchSchema = 1;
inline constexpr size_t kMaxQueryBytes = 1024;  // longer query text is rejected
inline constexpr int kMaxSearchK = 100;         // largest k a query may ask for
inline constexpr int kMaxRelatedK = 50;         // largest related list search publishes

// "related.<site>"
std::string RelatedSubject(std::string_view site);

enum class SearchMode : uint8_t { kHybrid, kVector, kText };
// "hybrid", "vector", "text"
std::string_view SearchModeName(SearchMode m);
// Inverse of SearchModeName; false for anything else.
bool ParseSearchMode(std::string_view name, SearchMode* out);

// search.query request: {"schema":1,"site":"docs","q":"...","k":10,"mode":"hybrid"}
struct SearchQuery {
  std::string site;
  std::string q;          // valid UTF-8, 1..kMaxQueryBytes bytes
  int k = 10;             // 1..kMaxSearchK
  SearchMode mode = SearchMode::kHybrid;
};

// search.related request: {"schema":1,"site":"docs","path":"a/b.md","k":10}
struct RelatedQuery {
  std::string site;
  std::string path;       // vault path of the note
  int k = 10;             // 1..kMaxRelatedK
};

struct SearchHit {
  std::string path;       // vault path, "Folder/Note.md"
  std::string url;        // canonical URL path
  std::string title;
  std::string snippet;    // HTML-escaped text; matched terms wrapped in <mark>..</mark>
  double score = 0;       // higher is better; scale depends on the mode
};

// Reply to either request:
// {"schema":1,"error":"","code":"ok","hits":[...],"took_us":123}
// error is empty on success, otherwise a message for the user (and hits empty).
// code says what kind of failure it is, protocol-neutral: each reader maps it
// to its own wire (http::HttpStatusFor, http::UpstreamHttpStatusFor).
struct SearchReply {
  std::string error;
  Code code = Code::kOk;  // kOk iff error is empty (kInvalidArgument, kNotFound, kUnavailable, ...)
  std::vector<SearchHit> hits;
  int64_t took_us = 0;
};

std::string EncodeSearchQuery(const SearchQuery& q);
// kInvalidArgument naming the field: malformed JSON, unknown schema, invalid
// site, empty/oversized/non-UTF-8 q, k outside 1..kMaxSearchK, unknown mode.
// Missing k/mode take the defaults.
Status DecodeSearchQuery(std::string_view json, SearchQuery* out);
std::string EncodeRelatedQuery(const RelatedQuery& q);
Status DecodeRelatedQuery(std::string_view json, RelatedQuery* out);
std::string EncodeSearchReply(const SearchReply& r);
Status DecodeSearchReply(std::string_view json, SearchReply* out);

// Related notes of some notes of one site, as search computed them. A list
// replaces the note's previous list; an empty list clears it. Search splits
// large updates so one message stays under kMaxRelatedMessageBytes.
struct RelatedEntry {
  std::string path;       // vault path of the related note
  double score = 0;
};
struct RelatedList {
  std::string path;       // vault path of the note whose list this is
  std::vector<RelatedEntry> related;  // best first, at most kMaxRelatedK
};
struct RelatedUpdate {
  std::string site;
  std::vector<RelatedList> lists;
};
inline constexpr size_t kMaxRelatedMessageBytes = 512 * 1024;

// {"schema":1,"site":"docs","lists":[{"path":"a.md","related":[{"path":"b.md","score":0.5}]}]}
std::string EncodeRelatedUpdate(const RelatedUpdate& u);
Status DecodeRelatedUpdate(std::string_view json, RelatedUpdate* out);
// Splits u into updates whose encodings are each at most max_bytes (a single
// list larger than that goes alone). Order of lists is kept.
std::vector<RelatedUpdate> SplitRelatedUpdate(const RelatedUpdate& u, size_t max_bytes = kMaxRelatedMessageBytes);

}  // namespace folio::bus
