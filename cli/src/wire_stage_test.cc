// The staged-push replies as the CLI reads them (wire.h): a stored batch,
// a batch a server without staging applied as a push, and the commit's
// push reply with the server's phases.
#include <doctest/doctest.h>

#include "wire.h"

using namespace folio;
using namespace folio::cli;

TEST_CASE("wire: a staged batch reply; a server without staging answers a push reply instead") {
  Result<StageReply> s = ParseStageReply(
      R"({"stage":"ab12","batch":2,"received":500,"batches":3,"bytes":123456,"expires_in_ms":3600000,"new":1})");
  REQUIRE(s.ok());
  CHECK(s->staged);
  CHECK(s->batches == 3);
  CHECK(s->bytes == 123456);

  Result<StageReply> old = ParseStageReply(
      R"({"version":4,"received":2,"changed":2,"rendered":2,"deleted":0,"took_ms":3,)"
      R"("notes":[{"path":"A.md","url":"/a","warnings":[]}]})");
  REQUIRE(old.ok());
  CHECK_FALSE(old->staged);
  CHECK(old->applied.version == 4);
  REQUIRE(old->applied.notes.size() == 1);
  CHECK(old->applied.notes[0].path == "A.md");

  CHECK_FALSE(ParseStageReply("<html>").ok());
}

TEST_CASE("wire: a push reply's phases_ms is kept; absent means empty") {
  Result<PushReply> r = ParsePushReply(
      R"({"version":1,"received":1,"changed":1,"rendered":1,"deleted":0,"took_ms":9,)"
      R"("phases_ms":"hash=0 meta=1 apply=0 render=2","notes":[]})");
  REQUIRE(r.ok());
  CHECK(r->phases == "hash=0 meta=1 apply=0 render=2");
  CHECK(ParsePushReply(R"({"version":1,"notes":[]})")->phases.empty());
}
