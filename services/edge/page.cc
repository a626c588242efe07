#include "page.h"

#include "folio/core/gzip.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/http/attachment.h"
#include "folio/http/server.h"
#include "folio/site/csp.h"

namespace folio::edge {
namespace {

constexpr std::string_view kAssetPrefix = "/assets/";

std::string StatusLine(int status) {
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(http::ReasonPhrase(status)) + "\r\n";
}

// `extra`: more header lines ("Name: value\r\n"), e.g. Content-Disposition.
std::string CommonHeaders(const bus::PageRecord& rec, std::string_view etag, std::string_view csp,
                          std::string_view extra) {
  std::string h;
  h += "ETag: " + std::string(etag) + "\r\n";
  if (rec.last_modified_s > 0) h += "Last-Modified: " + HttpDate(rec.last_modified_s) + "\r\n";
  h += "Cache-Control: " + (rec.cache_control.empty() ? std::string("public, max-age=0, must-revalidate") : rec.cache_control) + "\r\n";
  h += "Vary: Accept-Encoding\r\n";
  if (!rec.location.empty()) h += "Location: " + rec.location + "\r\n";
  for (const auto& [name, value] : SecurityHeaders(csp)) h += name + ": " + value + "\r\n";
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

}  // namespace

std::vector<std::pair<std::string, std::string>> SecurityHeaders(std::string_view csp) {
  return {{"Content-Security-Policy", std::string(csp.empty() ? std::string_view(site::PageCsp()) : csp)},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "SAMEORIGIN"}};
}

Result<std::shared_ptr<const Page>> BuildPage(const bus::PageRecord& rec, std::string_view url) {
  if (const char* bad = BadHeaderValue(rec)) {
    return Status::Invalid(std::string("page record: ") + bad + " has control characters");
  }
  std::string content_type = rec.content_type, extra;
  std::string_view csp = rec.csp;
  if (url.starts_with(kAssetPrefix)) {
    http::AttachmentHeaders a = http::AttachmentHeadersFor(url.substr(url.rfind('/') + 1), rec.content_type);
    content_type = std::move(a.content_type);
    if (!a.disposition.empty()) extra = "Content-Disposition: " + a.disposition + "\r\n";
    if (csp.empty()) csp = http::kUntrustedCsp;
  }
  auto p = std::make_shared<Page>();
  p->status = rec.status;
  if (Status s = GzipDecompress(rec.body_gzip, &p->body); !s.ok()) return s;
  p->body_gzip = rec.body_gzip;
  p->etag = rec.etag;
  p->etag_gzip = rec.etag.size() >= 2 ? rec.etag.substr(0, rec.etag.size() - 1) + "-gz\"" : "\"gz\"";
  std::string ct = "Content-Type: " + content_type + "\r\n";
  p->head = StatusLine(rec.status) + ct + "Content-Length: " + std::to_string(p->body.size()) + "\r\n" +
            CommonHeaders(rec, p->etag, csp, extra);
  p->head_gzip = StatusLine(rec.status) + ct + "Content-Encoding: gzip\r\nContent-Length: " +
                 std::to_string(p->body_gzip.size()) + "\r\n" + CommonHeaders(rec, p->etag_gzip, csp, extra);
  p->head_304 = StatusLine(304) + CommonHeaders(rec, p->etag, csp, extra);
  p->head_304_gzip = StatusLine(304) + CommonHeaders(rec, p->etag_gzip, csp, extra);
  return std::shared_ptr<const Page>(std::move(p));
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
