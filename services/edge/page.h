// Page: one servable page as the edge holds it, built once when an update
// arrives (off the request path) so that serving gzip is a lookup plus a
// write of ready bytes: the gzip body, and the response heads for 200 and
// 304 in each encoding (as the pieces Respond hands to SendPrepared), are
// prepared here. Only the gzip body is held (nearly every reader accepts
// gzip; the identity body is ~2.5x its size): an identity answer inflates
// the body per request (Respond, Page::Identity). Every head carries the
// record's Content-Security-Policy (site::PageCsp() when it has none),
// nosniff and X-Frame-Options: SAMEORIGIN (issue 9).
// Immutable after BuildPage; shared across worker threads by shared_ptr;
// any thread may call Respond and the const accessors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folio/bus/page_schema.h"
#include "folio/core/status.h"
#include "folio/http/server.h"

namespace folio::edge {

class Page;
class HeadTails;

// Builds a Page from a record without inflating its body: the record is
// ingest's, which made the gzip, so the identity Content-Length is the gzip
// trailer's ISIZE, and only the member's structure is checked (magic, method,
// flags, header fields within the body, an ISIZE deflate can reach from the
// body's length and at most 256 MiB). kInvalidArgument if that structure is
// broken or a value that goes into a header (content_type, cache_control,
// location, etag, csp) has control characters. Deflate data that is corrupt
// inside a well-formed member is accepted: gzip answers send it as it is,
// and an identity answer, which inflates it, is refused (Respond). `url` is the
// record's decoded URL path: an attachment published as a page record (under
// /assets/, ingest without --storage) is served like one from storage
// (http/attachment.h): its Content-Type and Content-Disposition follow
// AttachmentHeadersFor, and a record without a policy gets
// http::kUntrustedCsp rather than the page default.
// `tails` (may be null: the tail is not shared) is where the shared header
// lines are interned.
Result<std::shared_ptr<const Page>> BuildPage(const bus::PageRecord& rec, std::string_view url = "",
                                              HeadTails* tails = nullptr);
// A page with just a URL, a body and a status (site table tests).
std::shared_ptr<const Page> PageForTest(std::string_view url, std::string_view body, uint16_t status = 200);

// Memory (issue 12): a page is one allocation of its own bytes (URL, the
// gzip body, the header lines only it has) plus a shared tail of the lines
// most pages have in common (Cache-Control, Vary and the security headers,
// one copy per distinct policy: HeadTails), so what an edge holds is close
// to the page bodies themselves.
// A page whose body folio-storage holds (bus::PageRecord::body_blob): the
// bundled mermaid, over the bus's message limit. Served like an attachment
// (asset_handler.cc) but with the record's Content-Type: ingest chose it.
struct BlobRef {
  std::string sha256;        // full hex
  std::string content_type;  // from the record
};

class Page {
 public:
  uint16_t status() const { return status_; }
  // Only readers signed in to the page's site may see it
  // (bus::PageAccess::kSignedIn): the worker checks the session first.
  bool signed_in_only() const { return signed_in_only_; }
  // An HTML page (its record's Content-Type is text/html): a reader's view
  // of it is counted (view_counter.h).
  bool is_html() const { return html_; }
  // Non-null for a page whose body is a blob in folio-storage.
  const BlobRef* blob() const { return blob_.get(); }
  std::string_view url() const { return Part(kUrl); }
  std::string_view body_gzip() const { return Part(kBodyGzip); }  // empty for a blob page
  // The identity body, inflated from body_gzip() on each call (allocates;
  // off the gzip hot path). Empty for a blob page. kDataLoss if the body
  // does not inflate to exactly identity_size() bytes (BuildPage checked
  // only its structure).
  Result<std::string> Identity() const;
  // Bytes of the identity body (its Content-Length): the gzip trailer's ISIZE.
  size_t identity_size() const { return identity_size_; }
  std::string_view etag() const { return Part(kEtag); }            // identity representation, quoted
  std::string_view etag_gzip() const { return Part(kEtagGzip); }   // gzip representation, quoted
  // Bytes of the body held: the gzip body only (what folio_edge_page_bytes sums).
  size_t body_bytes() const { return body_gzip().size(); }
  // The response head (no final blank line) for the chosen encoding, for
  // 200 (or the record's status) or 304, as one string (tests, logs).
  std::string Head(bool gzip, bool not_modified) const;

 private:
  friend Result<http::PreparedResponse> Respond(std::shared_ptr<const Page> page, bool gzip, bool not_modified,
                                                bool head_only);
  friend Result<http::PreparedResponse> RespondPrivate(std::shared_ptr<const Page> page, bool gzip,
                                                       bool not_modified, bool head_only);
  friend Result<std::shared_ptr<const Page>> BuildPage(const bus::PageRecord&, std::string_view, HeadTails*);
  friend std::shared_ptr<const Page> PageForTest(std::string_view, std::string_view, uint16_t);
  // Parts of data_, in this order; ends_[i] is where part i ends.
  enum PartIndex { kUrl, kBodyGzip, kStatusLines, kStatusLinesGzip, kLines, kLinesGzip, kParts };
  // Inside kLines / kLinesGzip (which open with "ETag: <etag>\r\n").
  static constexpr uint32_t kEtagAt = 6;
  enum { kEtag = kParts, kEtagGzip };
  std::string_view Part(int i) const;
  // The head pieces for the encoding and status; no body, no keep.
  http::PreparedResponse PreparedHead(bool gzip, bool not_modified) const;

  uint16_t status_ = 200;
  bool signed_in_only_ = false;
  bool html_ = false;
  uint32_t identity_size_ = 0;
  uint32_t ends_[kParts] = {};
  std::string data_;
  std::shared_ptr<const std::string> tail_;  // shared header lines; never null once built
  std::unique_ptr<const BlobRef> blob_;      // null but for blob pages (one pointer on every page)
};

// The answer to a request for `page` (REQUIRES: non-null, not a blob page)
// in the chosen encoding, as SendPrepared writes it, with `keep` pinning the
// bytes. 304 (`not_modified`) has no body. gzip: the page's own bytes, no
// allocation (the hot path). Identity: the body is inflated into a string
// that `keep` owns (with the page), unless `head_only` (a HEAD request,
// whose body is not sent: nothing is inflated); kDataLoss if it does not
// inflate to the Content-Length the head promises (Page::Identity): the
// caller answers 500 instead (nothing of this answer was sent).
Result<http::PreparedResponse> Respond(std::shared_ptr<const Page> page, bool gzip, bool not_modified,
                                       bool head_only);

// Respond for a reader signed in to a private site or to a signed-in-only
// page: the same answer but never for a shared cache (Cache-Control:
// private, no-cache; Vary: Accept-Encoding, Cookie). Allocates (a head of
// its own): off the public hot path.
Result<http::PreparedResponse> RespondPrivate(std::shared_ptr<const Page> page, bool gzip, bool not_modified,
                                              bool head_only);

// Interns the header lines pages share (HeadTails above), so equal tails
// are one string. Not thread-safe: one owner (the page feed's thread).
// Holds at most kMaxTails distinct tails; past that a tail is not shared.
class HeadTails {
 public:
  static constexpr size_t kMaxTails = 256;
  std::shared_ptr<const std::string> Intern(std::string tail);
  size_t size() const { return tails_.size(); }

 private:
  std::vector<std::shared_ptr<const std::string>> tails_;
};

// The security headers every page answer carries: Content-Security-Policy
// (`csp`, or site::PageCsp() if empty), X-Content-Type-Options: nosniff,
// X-Frame-Options: SAMEORIGIN.
std::vector<std::pair<std::string, std::string>> SecurityHeaders(std::string_view csp);
// The edge's own 404 page, used until the site publishes one.
std::shared_ptr<const Page> BuiltinNotFoundPage();
// The edge's own sign-in page (kSigninKey, site_table.h), used until the
// site publishes one: a form with no action (it posts to the URL it was
// shown at) with fields name, password and next, and kSigninErrorMark
// where the edge writes why a sign-in failed; its words are the i18n.h
// table of `lang` (English for a language folio does not ship).
std::shared_ptr<const Page> BuiltinSigninPage(std::string_view lang = "en");
inline constexpr std::string_view kSigninErrorMark = "<!--folio:signin-error-->";

// True if the Accept-Encoding value admits gzip ("gzip", "*", not q=0).
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace folio::edge
