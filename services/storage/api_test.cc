#include <doctest/doctest.h>

#include "api.h"

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
