#include "page.h"

#include <cstring>

#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/http/attachment.h"
#include "folio/http/server.h"
#include "folio/site/csp.h"
#include "folio/site/i18n.h"

namespace folio::edge {
namespace {

constexpr std::string_view kAssetPrefix = "/assets/";

constexpr std::string_view kSigninUrl = "/_folio/signin";

constexpr std::string_view k304Line = "HTTP/1.1 304 Not Modified\r\n";

std::string StatusLine(int status) {
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(http::ReasonPhrase(status)) + "\r\n";
}

// The lines most pages share: Cache-Control, Vary, the security headers.
std::string TailLines(const bus::PageRecord& rec, std::string_view csp) {
  std::string h = "Cache-Control: ";
  h += rec.cache_control.empty() ? std::string_view("public, max-age=0, must-revalidate") : rec.cache_control;
  h += "\r\nVary: Accept-Encoding\r\n";
  for (const auto& [name, value] : SecurityHeaders(csp)) h += name + ": " + value + "\r\n";
  return h;
}

// The page's own lines after the status lines, ETag first (Page::kEtagAt).
// `extra`: more header lines ("Name: value\r\n"), e.g. Content-Disposition.
std::string OwnLines(const bus::PageRecord& rec, std::string_view etag, std::string_view extra) {
  std::string h = "ETag: ";
  h += etag;
  h += "\r\n";
  if (rec.last_modified_s > 0) h += "Last-Modified: " + HttpDate(rec.last_modified_s) + "\r\n";
  if (!rec.location.empty()) h += "Location: " + rec.location + "\r\n";
  h += extra;
  return h;
}

// A header value from a record must not end the header or smuggle another.
bool IsHeaderValue(std::string_view v) {
  for (char c : v) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

// The name of the first of the record's header values that is not one, or nullptr.
const char* BadHeaderValue(const bus::PageRecord& rec) {
  const std::pair<const char*, const std::string*> values[] = {
      {"content_type", &rec.content_type}, {"cache_control", &rec.cache_control}, {"location", &rec.location},
      {"etag", &rec.etag}, {"csp", &rec.csp}};
  for (const auto& [name, value] : values) {
    if (!IsHeaderValue(*value)) return name;
  }
  return nullptr;
}

// Deflate's best ratio is 1032:1 (a 258-byte match in one bit and a bit);
// an ISIZE past that for the body's length is not this body's size.
constexpr uint64_t kMaxDeflateRatio = 1032;
// What Page::Identity may inflate (GzipDecompress's default limit).
constexpr uint64_t kMaxIdentitySize = 256u << 20;

// The identity size of a gzip body, from its trailer's ISIZE (RFC 1952
// 2.3.1: the input size mod 2^32; pages are far below 4 GiB), after checking
// only the member's structure: the magic, CM = deflate, no reserved flag,
// the optional header fields inside the body, at least one byte of deflate
// data, and an ISIZE that deflate could reach from that many bytes and
// Identity may inflate. The deflate data itself is not inflated here: the
// record comes from ingest, which made it; an identity answer inflates it
// (Page::Identity) and answers 500 if it does not inflate to ISIZE bytes.
Result<size_t> GzipIdentitySize(std::string_view gz) {
  constexpr size_t kHeader = 10, kTrailer = 8;
  constexpr unsigned kFhcrc = 2, kFextra = 4, kFname = 8, kFcomment = 16, kReserved = 0xe0;
  const auto* b = reinterpret_cast<const unsigned char*>(gz.data());
  if (gz.size() < kHeader + 1 + kTrailer || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 || (b[3] & kReserved) != 0) {
    return Status::Invalid("page record: the body is not a gzip member");
  }
  const size_t end = gz.size() - kTrailer;  // where the deflate data must end
  size_t at = kHeader;
  if (b[3] & kFextra) at = at + 2 > end ? end : at + 2 + (b[at] | b[at + 1] << 8);
  for (unsigned flag : {kFname, kFcomment}) {
    if (!(b[3] & flag) || at >= end) continue;
    const void* nul = memchr(b + at, 0, end - at);
    at = nul == nullptr ? end : static_cast<size_t>(static_cast<const unsigned char*>(nul) - b) + 1;
  }
  if (b[3] & kFhcrc) at += 2;
  if (at >= end) return Status::Invalid("page record: the gzip header runs past the body");
  const uint64_t isize = uint64_t{b[end + 4]} | uint64_t{b[end + 5]} << 8 | uint64_t{b[end + 6]} << 16 |
                         uint64_t{b[end + 7]} << 24;
  if (isize > (end - at) * kMaxDeflateRatio) return Status::Invalid("page record: the gzip trailer's size is impossible");
  if (isize > kMaxIdentitySize) return Status::Invalid("page record: body too large");
  return static_cast<size_t>(isize);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SecurityHeaders(std::string_view csp) {
  return {{"Content-Security-Policy", std::string(csp.empty() ? std::string_view(site::PageCsp()) : csp)},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "SAMEORIGIN"}};
}

std::shared_ptr<const std::string> HeadTails::Intern(std::string tail) {
  for (const auto& t : tails_) {
    if (*t == tail) return t;
  }
  auto t = std::make_shared<const std::string>(std::move(tail));
  if (tails_.size() < kMaxTails) tails_.push_back(t);
  return t;
}

std::string_view Page::Part(int i) const {
  if (i == kEtag || i == kEtagGzip) {
    int lines = i == kEtag ? kLines : kLinesGzip;
    std::string_view l = Part(lines);
    return l.substr(kEtagAt, l.find('\r') - kEtagAt);
  }
  uint32_t begin = i == 0 ? 0 : ends_[i - 1];
  return std::string_view(data_).substr(begin, ends_[i] - begin);
}

Result<std::string> Page::Identity() const {
  std::string body;
  if (blob_ != nullptr) return body;
  Status s = GzipDecompress(body_gzip(), &body, identity_size_);
  if (s.ok() && body.size() != identity_size_) s = Status::Invalid("inflates to fewer bytes than its trailer says");
  if (!s.ok()) return Status::DataLoss("the page's gzip body does not inflate: " + s.message());
  return body;
}

http::PreparedResponse Page::PreparedHead(bool gzip, bool not_modified) const {
  http::PreparedResponse r;
  r.head = not_modified ? k304Line : Part(gzip ? kStatusLinesGzip : kStatusLines);
  r.more_head = {Part(gzip ? kLinesGzip : kLines), *tail_};
  return r;
}

std::string Page::Head(bool gzip, bool not_modified) const {
  http::PreparedResponse r = PreparedHead(gzip, not_modified);
  return std::string(r.head) + std::string(r.more_head[0]) + std::string(r.more_head[1]);
}

namespace {

// An identity answer's body, inflated for one request, and the page whose
// head lines the answer also points into.
struct IdentityAnswer {
  std::shared_ptr<const Page> page;
  std::string body;
};

}  // namespace

Result<http::PreparedResponse> Respond(std::shared_ptr<const Page> page, bool gzip, bool not_modified,
                                      bool head_only) {
  http::PreparedResponse r = page->PreparedHead(gzip, not_modified);
  if (not_modified) {
    r.keep = std::move(page);
  } else if (gzip) {
    r.body = page->body_gzip();
    r.keep = std::move(page);
  } else if (head_only || page->identity_size() == 0) {
    r.keep = std::move(page);  // Content-Length is in the head; nothing to inflate
  } else {
    Result<std::string> body = page->Identity();
    if (!body.ok()) return body.status();
    auto answer = std::make_shared<IdentityAnswer>();
    answer->body = std::move(body.value());
    answer->page = std::move(page);
    r.body = answer->body;
    r.keep = std::move(answer);
  }
  return r;
}

namespace {

// A private answer: its own shared tail, and what the page's answer pinned.
struct PrivateAnswer {
  std::shared_ptr<const void> inner;
  std::string tail;
};

}  // namespace

Result<http::PreparedResponse> RespondPrivate(std::shared_ptr<const Page> page, bool gzip, bool not_modified,
                                              bool head_only) {
  std::shared_ptr<const std::string> tail = page->tail_;
  Result<http::PreparedResponse> r = Respond(std::move(page), gzip, not_modified, head_only);
  if (!r.ok()) return r;
  // The tail opens with Cache-Control and Vary (TailLines); the rest stays.
  std::string_view t = *tail;
  size_t cache_end = t.find("\r\n");
  size_t vary_end = cache_end == std::string_view::npos ? cache_end : t.find("\r\n", cache_end + 2);
  auto answer = std::make_shared<PrivateAnswer>();
  answer->tail = "Cache-Control: private, no-cache\r\nVary: Accept-Encoding, Cookie\r\n";
  if (vary_end != std::string_view::npos) answer->tail += t.substr(vary_end + 2);
  answer->inner = std::move(r->keep);
  r->more_head[1] = answer->tail;
  r->keep = std::move(answer);
  return r;
}

Result<std::shared_ptr<const Page>> BuildPage(const bus::PageRecord& rec, std::string_view url, HeadTails* tails) {
  if (const char* bad = BadHeaderValue(rec)) {
    return Status::Invalid(std::string("page record: ") + bad + " has control characters");
  }
  std::string content_type = rec.content_type, extra;
  std::string_view csp = rec.csp;
  std::unique_ptr<const BlobRef> blob;
  if (!rec.body_blob.empty()) {
    if (rec.body_blob.size() != 64 || !IsLowerHex(rec.body_blob)) {
      return Status::Invalid("page record: body_blob is not a hex SHA-256");
    }
    blob = std::make_unique<const BlobRef>(BlobRef{rec.body_blob, rec.content_type});
  } else if (url.starts_with(kAssetPrefix)) {
    http::AttachmentHeaders a = http::AttachmentHeadersFor(url.substr(url.rfind('/') + 1), rec.content_type);
    content_type = std::move(a.content_type);
    if (!a.disposition.empty()) extra = "Content-Disposition: " + a.disposition + "\r\n";
    if (csp.empty()) csp = http::kUntrustedCsp;
  }
  size_t identity_size = 0;
  if (blob == nullptr) {  // a blob page has no body here: storage holds it
    Result<size_t> size = GzipIdentitySize(rec.body_gzip);
    if (!size.ok()) return size.status();
    identity_size = *size;
  }
  std::string etag_gzip = rec.etag.size() >= 2 ? rec.etag.substr(0, rec.etag.size() - 1) + "-gz\"" : "\"gz\"";
  std::string status = StatusLine(rec.status) + "Content-Type: " + content_type + "\r\n";
  std::string status_id = status + "Content-Length: " + std::to_string(identity_size) + "\r\n";
  std::string status_gz = status + "Content-Encoding: gzip\r\nContent-Length: " + std::to_string(rec.body_gzip.size()) + "\r\n";
  std::string lines = OwnLines(rec, rec.etag, extra), lines_gz = OwnLines(rec, etag_gzip, extra);

  auto p = std::make_shared<Page>();
  p->status_ = rec.status;
  p->signed_in_only_ = rec.access == bus::PageAccess::kSignedIn;
  p->html_ = StartsWith(rec.content_type, "text/html");
  p->identity_size_ = static_cast<uint32_t>(identity_size);
  p->blob_ = std::move(blob);
  const std::string_view parts[Page::kParts] = {url, rec.body_gzip, status_id, status_gz, lines, lines_gz};
  size_t total = 0;
  for (std::string_view part : parts) total += part.size();
  if (total > UINT32_MAX) return Status::Invalid("page record: too large");
  p->data_.reserve(total);
  for (int i = 0; i < Page::kParts; ++i) {
    p->data_.append(parts[i]);
    p->ends_[i] = static_cast<uint32_t>(p->data_.size());
  }
  std::string tail = TailLines(rec, csp);
  p->tail_ = tails != nullptr ? tails->Intern(std::move(tail)) : std::make_shared<const std::string>(std::move(tail));
  return std::shared_ptr<const Page>(std::move(p));
}

std::shared_ptr<const Page> PageForTest(std::string_view url, std::string_view body, uint16_t status) {
  bus::PageRecord rec;
  rec.status = status;
  rec.content_type = "text/html; charset=utf-8";
  rec.etag = "\"test\"";
  rec.body_gzip = GzipCompress(body);
  return *BuildPage(rec, url);
}

std::shared_ptr<const Page> BuiltinNotFoundPage() {
  bus::PageRecord rec;
  rec.status = 404;
  rec.content_type = "text/html; charset=utf-8";
  rec.cache_control = "no-store";
  rec.etag = "\"folio-404\"";
  rec.body_gzip = GzipCompress(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Page not found</title></head>"
      "<body><h1>Page not found</h1><p>There is no page at this address.</p><p><a href=\"/\">Home</a></p>"
      "</body></html>\n");
  auto page = BuildPage(rec);
  return *page;
}

std::shared_ptr<const Page> BuiltinSigninPage(std::string_view lang) {
  const site::Strings& t = site::StringsFor(lang);
  auto esc = [](std::string_view s) { return HtmlEscape(s); };
  bus::PageRecord rec;
  rec.status = 401;
  rec.content_type = "text/html; charset=utf-8";
  rec.cache_control = "no-store";
  rec.etag = "\"folio-signin-" + std::string(t.code) + "\"";
  rec.body_gzip = GzipCompress(
      "<!doctype html>\n<html lang=\"" + std::string(t.code) + "\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta name=\"robots\" content=\"noindex\"><title>" + esc(t.signin_title) + "</title></head>"
      "<body><main class=\"signin\"><h1>" + esc(t.signin_title) + "</h1><p>" + esc(t.signin_intro) + "</p>" +
      std::string(kSigninErrorMark) + "<form method=\"post\"><p><label>" + esc(t.signin_name) +
      " <input name=\"name\" autocomplete=\"username\"></label></p><p><label>" + esc(t.signin_password) +
      " <input type=\"password\" name=\"password\" required autocomplete=\"current-password\"></label></p>"
      "<p><button type=\"submit\">" + esc(t.signin_submit) + "</button></p></form></main></body></html>\n");
  return *BuildPage(rec, kSigninUrl);
}

bool AcceptsGzip(std::string_view ae) {
  while (!ae.empty()) {
    size_t comma = ae.find(',');
    std::string_view item = ae.substr(0, comma);
    ae = comma == std::string_view::npos ? std::string_view() : ae.substr(comma + 1);
    size_t semi = item.find(';');
    std::string_view coding = TrimAsciiSpace(item.substr(0, semi));
    if (!EqualsIgnoreAsciiCase(coding, "gzip") && coding != "*") continue;
    if (semi == std::string_view::npos) return true;
    std::string_view param = TrimAsciiSpace(item.substr(semi + 1));
    if (param.size() >= 2 && (param[0] | 0x20) == 'q' && param[1] == '=') {
      std::string_view q = TrimAsciiSpace(param.substr(2));
      bool zero = !q.empty() && q[0] == '0';
      for (size_t i = 1; zero && i < q.size(); ++i) zero = q[i] == '.' || q[i] == '0';
      if (zero) return false;
    }
    return true;
  }
  return false;
}

}  // namespace folio::edge
