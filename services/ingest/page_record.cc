#include "page_record.h"

#include "folio/bus/page_schema.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"

namespace folio::ingest {

PageRecordOut MakePageRecord(const PageHead& head, std::string_view body) {
  thread_local GzipCompressor gz;
  bus::PageRecord r;
  r.status = head.status;
  r.content_type = head.content_type;
  r.cache_control = head.cache_control;
  r.csp = head.csp;
  r.location = head.location;
  r.etag = "\"" + Sha256Hex(body).substr(0, 20) + "\"";
  r.last_modified_s = head.last_modified_s;
  r.version = head.version;
  gz.Compress(body, &r.body_gzip);
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
