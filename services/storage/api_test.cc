#include <doctest/doctest.h>

#include "api.h"
#include "damaged.h"

using folio::storage::ParseRange;

TEST_CASE("range header parsing (RFC 9110, one range)") {
  uint64_t a = 0, b = 0;
  bool bad = false;
  CHECK(ParseRange("bytes=0-9", 100, &a, &b, &bad));
  CHECK((a == 0 && b == 9));
  CHECK(ParseRange("bytes=90-", 100, &a, &b, &bad));
  CHECK((a == 90 && b == 99));
  CHECK(ParseRange("bytes=90-1000", 100, &a, &b, &bad));
  CHECK((a == 90 && b == 99));
  CHECK(ParseRange("bytes=-10", 100, &a, &b, &bad));
  CHECK((a == 90 && b == 99));
  CHECK(ParseRange("bytes=-1000", 100, &a, &b, &bad));
  CHECK((a == 0 && b == 99));
  // Unsatisfiable (416): start past the end, empty suffix.
  CHECK(!ParseRange("bytes=100-", 100, &a, &b, &bad));
  CHECK(!bad);
  CHECK(!ParseRange("bytes=-0", 100, &a, &b, &bad));
  CHECK(!bad);
  // Malformed (ignored: the whole body is sent).
  for (const char* h : {"bytes=", "bytes=a-b", "items=0-1", "bytes=5-1", "bytes=0-1,3-4", "bytes=1"}) {
    CAPTURE(h);
    CHECK(!ParseRange(h, 100, &a, &b, &bad));
    CHECK(bad);
  }
}

TEST_CASE("damaged blobs: known by key and version, reported once, bounded") {
  folio::storage::DamagedBlobs d(2);
  CHECK(d.Add("sha256/a", 1));
  CHECK(!d.Add("sha256/a", 1));  // reported once
  CHECK(d.Contains("sha256/a", 1));
  CHECK(!d.Contains("sha256/a", 2));  // a newer version is not damaged
  CHECK(d.Add("sha256/a", 2));
  CHECK(!d.Contains("sha256/a", 1));
  CHECK(d.Add("sha256/b", 1));
  CHECK(d.Add("sha256/c", 1));  // over capacity: the oldest goes
  CHECK(d.size() == 2);
  CHECK(!d.Contains("sha256/a", 2));
  CHECK(d.Contains("sha256/b", 1));
  CHECK(d.Contains("sha256/c", 1));
}
