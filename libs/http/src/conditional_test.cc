#include <doctest/doctest.h>

#include "folio/http/conditional.h"

using namespace folio::http;

TEST_CASE("if-none-match: lists, weak tags and star") {
  CHECK(EtagMatches("\"a\"", "\"a\""));
  CHECK(EtagMatches("\"x\", W/\"a\"", "\"a\""));
  CHECK(EtagMatches("\"x\",\t\"a\" ", "\"a\""));
  CHECK(EtagMatches("*", "\"a\""));
  CHECK(!EtagMatches("\"b\"", "\"a\""));
  CHECK(!EtagMatches("\"ab\"", "\"a\""));
  CHECK(!EtagMatches("", "\"a\""));
  CHECK(!EtagMatches("\"a\"", ""));
}

TEST_CASE("range header parsing (RFC 9110, one range)") {
  auto part = [](std::string_view h, uint64_t size, uint64_t first, uint64_t last) {
    ByteRange r = ParseRange(h, size);
    CAPTURE(h);
    CHECK(r.kind == ByteRange::Kind::kPart);
    CHECK(r.first == first);
    CHECK(r.last == last);
  };
  part("bytes=0-9", 100, 0, 9);
  part("bytes=90-", 100, 90, 99);
  part("bytes=90-1000", 100, 90, 99);
  part("bytes=-10", 100, 90, 99);
  part("bytes=-1000", 100, 0, 99);
  part("bytes=5-5", 100, 5, 5);
  // Unsatisfiable (416): start past the end, an empty suffix, an empty body.
  for (const char* h : {"bytes=100-", "bytes=100-200", "bytes=-0"}) {
    CAPTURE(h);
    CHECK(ParseRange(h, 100).kind == ByteRange::Kind::kUnsatisfiable);
  }
  CHECK(ParseRange("bytes=-5", 0).kind == ByteRange::Kind::kUnsatisfiable);
  CHECK(ParseRange("bytes=0-", 0).kind == ByteRange::Kind::kUnsatisfiable);
  // Absent, malformed or several ranges: ignored, the whole body is sent.
  for (const char* h : {"", "bytes=", "bytes=a-b", "items=0-1", "bytes=5-1", "bytes=0-1,3-4", "bytes=1", "bytes=-",
                        "bytes=+1-2", "bytes=1-2x", "bytes=99999999999999999999-"}) {
    CAPTURE(h);
    CHECK(ParseRange(h, 100).kind == ByteRange::Kind::kWhole);
  }
}
