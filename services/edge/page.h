// Page: one servable page as the edge holds it, built once when an update
// arrives (off the request path) so that serving is a lookup plus a write
// of ready bytes: both encodings, and the full response heads for 200 and
// 304 in each encoding, are prepared here. Every head carries the record's
// Content-Security-Policy (site::PageCsp() when it has none), nosniff and
// X-Frame-Options: SAMEORIGIN (issue 9).
// Immutable after BuildPage; shared across worker threads by shared_ptr.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folio/bus/page_schema.h"
#include "folio/core/status.h"

namespace folio::edge {

struct Page {
  uint16_t status = 200;
  std::string etag;         // identity representation, quoted
  std::string etag_gzip;    // gzip representation, quoted
  std::string body;         // identity
  std::string body_gzip;
  std::string head;         // full head for the identity response (no final blank line)
  std::string head_gzip;
  std::string head_304;     // 304 for the identity representation
  std::string head_304_gzip;
};

// Builds a Page from a record (inflates the body once). kInvalidArgument if
// the gzip body is corrupt or a value that goes into a header (content_type,
// cache_control, location, etag, csp) has control characters. `url` is the
// record's decoded URL path: an attachment published as a page record (under
// /assets/, ingest without --storage) is served like one from storage
// (http/attachment.h): its Content-Type and Content-Disposition follow
// AttachmentHeadersFor, and a record without a policy gets
// http::kUntrustedCsp rather than the page default.
Result<std::shared_ptr<const Page>> BuildPage(const bus::PageRecord& rec, std::string_view url = "");
// The security headers every page answer carries: Content-Security-Policy
// (`csp`, or site::PageCsp() if empty), X-Content-Type-Options: nosniff,
// X-Frame-Options: SAMEORIGIN.
std::vector<std::pair<std::string, std::string>> SecurityHeaders(std::string_view csp);
// The edge's own 404 page, used until the site publishes one.
std::shared_ptr<const Page> BuiltinNotFoundPage();

// True if the Accept-Encoding value admits gzip ("gzip", "*", not q=0).
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace folio::edge
