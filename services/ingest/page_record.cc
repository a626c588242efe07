#include "page_record.h"

#include "folio/bus/page_schema.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"

namespace folio::ingest {
namespace {

// igzip level of page bodies, from page-gzip-bench (page_record_bench.cc):
// level 3 costs 13.8 us on a 3.3 KB push-bench page (zlib 4 with the chrome
// reused: 23.6) for 10% fewer bytes, 45 us on a 19 KB page (zlib: 252) for
// 1.4% more; level 2 saves another 20% of the time for 2-8% more bytes on
// pages past a few KB (and the edge holds gzip bytes).
constexpr int kGzipLevel = 3;

void Compress(std::string_view body, std::string* out) {
  thread_local GzipAssembler gz(kGzipLevel);
  const GzipPart part{body};
  gz.Assemble({&part, 1}, out);
}

}  // namespace

PageRecordOut MakePageRecord(const PageHead& head, std::string_view body) {
  bus::PageRecord r;
  r.status = head.status;
  r.content_type = head.content_type;
  r.cache_control = head.cache_control;
  r.csp = head.csp;
  r.location = head.location;
  r.etag = "\"" + Sha256Hex(body).substr(0, 20) + "\"";
  r.last_modified_s = head.last_modified_s;
  r.version = head.version;
  r.access = head.access;
  Compress(body, &r.body_gzip);
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
  r.access = head.access;
  r.body_blob = std::string(sha256);
  return PageRecordOut{bus::EncodePageRecord(r), ""};
}

}  // namespace folio::ingest
