#include <doctest/doctest.h>

#include "blob_upload.h"
#include "folio/core/hash.h"

using namespace folio;
using namespace folio::ingest;

TEST_CASE("BlobsInFlight: a blob is held while any push holding it is on its way") {
  BlobsInFlight in_flight;
  CHECK(!in_flight.Contains("a"));
  auto first = in_flight.Hold({"a", "b"});
  auto second = in_flight.Hold({"b"});
  CHECK(in_flight.Contains("a"));
  CHECK(in_flight.Contains("b"));
  first.reset();
  CHECK(!in_flight.Contains("a"));
  CHECK(in_flight.Contains("b"));  // the second push still holds it
  second.reset();
  CHECK(!in_flight.Contains("b"));
}

TEST_CASE("UploadAttachments without storage sets each hash and uploads nothing") {
  std::vector<PushAttachment> atts{{"a.png", "bytes-a"}, {"b.pdf", "bytes-b", "given"}};
  REQUIRE(UploadAttachments({}, &atts).ok());
  CHECK(atts[0].sha256 == Sha256Hex("bytes-a"));
  CHECK(atts[1].sha256 == "given");  // already set: kept
  CHECK(AttachmentContentType("x/y.png") == "image/png");
  CHECK(AttachmentContentType("x/y.unknownext") == "application/octet-stream");
}
