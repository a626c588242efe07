#include "page_record.h"

#include "folio/bus/page_schema.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"

namespace folio::ingest {
namespace {

// zlib level of page bodies, from page-gzip-bench (page_record_bench.cc):
// on a 22 KB page of prose level 4 costs half of level 6's CPU for 1.9%
// more bytes, level 1 a third for 12% more (and the edge holds gzip bytes);
// on a 3.3 KB push-bench page the levels differ by ~1 us.
constexpr int kGzipLevel = 4;

void Compress(std::string_view body, const std::vector<site::ChromeSpan>* chrome, std::string* out) {
  thread_local GzipAssembler gz(kGzipLevel);
  thread_local std::vector<GzipPart> parts;
  parts.clear();
  size_t pos = 0;
  if (chrome) {
    for (const site::ChromeSpan& s : *chrome) {
      if (s.begin < pos || s.end < s.begin || s.end > body.size()) continue;  // not in order: left inline
      parts.push_back({body.substr(pos, s.begin - pos), false});
      parts.push_back({body.substr(s.begin, s.end - s.begin), true});
      pos = s.end;
    }
  }
  parts.push_back({body.substr(pos), false});
  gz.Assemble(parts, out);
}

}  // namespace

PageRecordOut MakePageRecord(const PageHead& head, std::string_view body,
                             const std::vector<site::ChromeSpan>* chrome) {
  bus::PageRecord r;
  r.status = head.status;
  r.content_type = head.content_type;
  r.cache_control = head.cache_control;
  r.csp = head.csp;
  r.location = head.location;
  r.etag = "\"" + Sha256Hex(body).substr(0, 20) + "\"";
  r.last_modified_s = head.last_modified_s;
  r.version = head.version;
  Compress(body, chrome, &r.body_gzip);
  PageRecordOut out;
  out.record = bus::EncodePageRecord(r);
  if (out.record.size() > kMaxPublishedPage) {
    out.warning = "the page is " + std::to_string(out.record.size()) + " bytes compressed, over the bus limit of " +
                  std::to_string(kMaxPublishedPage) + "; it is stored but cannot be served: split the note";
  }
  return out;
}

PageRecordOut MakeBlobPageRecord(const PageHead& head, std::string_view sha256) {
  bus::PageRecord r;
  r.status = head.status;
  r.content_type = head.content_type;
  r.cache_control = head.cache_control;
  r.csp = head.csp;
  r.etag = "\"" + std::string(sha256) + "\"";
  r.last_modified_s = head.last_modified_s;
  r.version = head.version;
  r.body_blob = std::string(sha256);
  return PageRecordOut{bus::EncodePageRecord(r), ""};
}

}  // namespace folio::ingest
