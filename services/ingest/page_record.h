// The page record: what ingest publishes for one URL (bus::PageRecord,
// encoded), built in this one place for every kind of page (note pages,
// listings, redirects, the stylesheet, the 404 page, inline assets): the
// ETag from the identity body, the gzip body, the encoding, and the check
// against the bus's message limit.
//
// Pure functions; thread-safe (each thread keeps its own compressor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/page_schema.h"
#include "folio/site/layout.h"

namespace folio::ingest {

// NATS's default max payload is 1 MiB; keep room for headers and the subject.
inline constexpr size_t kMaxPublishedPage = (1u << 20) - 8192;

// Everything about a page but its body.
struct PageHead {
  uint16_t status = 200;      // 200, 301 (location set), 404 or 410
  std::string content_type;   // "text/html; charset=utf-8"
  std::string cache_control;
  std::string csp;            // the page's Content-Security-Policy (libs/site csp.h)
  std::string location;       // 301 only: the target URL path
  int64_t last_modified_s = 0;
  int64_t version = 0;        // the push version that writes it
  // Who may read it: kSignedIn for every page of a private site and for a
  // `publish: private` note's page (the edge serves those to the site's
  // signed-in readers only).
  bus::PageAccess access = bus::PageAccess::kPublic;
};

struct PageRecordOut {
  std::string record;   // bus::EncodePageRecord
  std::string warning;  // "" or why the record cannot be published (over kMaxPublishedPage):
                        // it is stored, and the outbox skips it
};

// The record of `body` served with `head`: the gzip body is igzip's
// (core/gzip.h GzipAssembler), the ETag from the identity body.
PageRecordOut MakePageRecord(const PageHead& head, std::string_view body);
// The record of a body folio-storage holds (bus::PageRecord::body_blob),
// served with `head`; its ETag is the blob's hash. REQUIRES: sha256 is 64
// lower-case hex digits of a blob in storage.
PageRecordOut MakeBlobPageRecord(const PageHead& head, std::string_view sha256);

}  // namespace folio::ingest
