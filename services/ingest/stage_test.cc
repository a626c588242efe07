// Staged imports: the merge of a stage's batches, the stage ID and batch
// checks, and the store's stage table (bounds, replacement, expiry,
// commit), against a real SQLite file.
#include <doctest/doctest.h>

#include "folio/testing/testing.h"
#include "stage.h"
#include "store.h"

using namespace folio;
using namespace folio::ingest;

namespace {

PushRequest Batch(std::vector<std::pair<std::string, std::string>> notes, std::vector<std::string> deletes = {}) {
  PushRequest r;
  for (auto& [p, c] : notes) r.notes.push_back({p, c});
  r.deletes = std::move(deletes);
  return r;
}

}  // namespace

TEST_CASE("stage: batches merge in order; a re-sent path replaces, sent-and-deleted is refused") {
  StagedPush s;
  REQUIRE(s.Add(Batch({{"a.md", "A1"}, {"b.md", "B"}})).ok());
  REQUIRE(s.Add(Batch({{"c.md", "C"}, {"a.md", "A2"}}, {"gone.md"})).ok());
  Status both = s.Add(Batch({}, {"b.md"}));
  CHECK(both.code() == Code::kInvalidArgument);
  CHECK(both.message().find("'b.md' is both pushed and deleted") != std::string::npos);
  StagedPush t;
  REQUIRE(t.Add(Batch({{"a.md", "A1"}}, {"x.md"})).ok());
  CHECK(!t.Add(Batch({{"x.md", "X"}})).ok());
  REQUIRE(t.Add(Batch({{"a.md", "A1"}}, {"x.md"})).ok());  // a retried batch: harmless
  PushRequest m = t.Take();
  REQUIRE(m.notes.size() == 1);
  CHECK(m.deletes == std::vector<std::string>{"x.md"});

  StagedPush u;
  REQUIRE(u.Add(Batch({{"a.md", "A1"}, {"b.md", "B"}})).ok());
  REQUIRE(u.Add(Batch({{"c.md", "C"}, {"a.md", "A2"}})).ok());
  PushRequest n = u.Take();
  REQUIRE(n.notes.size() == 3);
  CHECK(n.notes[0].path == "a.md");
  CHECK(n.notes[0].content == "A2");
  CHECK(n.notes[2].path == "c.md");
}

TEST_CASE("stage: IDs and batch numbers are checked") {
  CHECK(CheckStageId("0123abcdEF-_").ok());
  CHECK(!CheckStageId("").ok());
  CHECK(!CheckStageId("a b").ok());
  CHECK(!CheckStageId(std::string(kMaxStageIdBytes + 1, 'a')).ok());
  CHECK(*ParseStageBatch("0") == 0);
  CHECK(*ParseStageBatch("199") == 199);
  for (const char* bad : {"", "-1", "1x", "x", "1000000", "99999999999999999999"}) {
    CHECK_MESSAGE(!ParseStageBatch(bad).ok(), bad);
  }
}

TEST_CASE("stage store: bounded per site, a retried batch replaces, stale stages drop, a commit drops its stage") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  Store& s = **store;
  auto one = s.PutStageBatch("a", "st1", 0, std::string(400, 'x'), 1000, 1000);
  REQUIRE(one.ok());
  CHECK(one->batches == 1);
  CHECK(one->bytes == 400);
  auto again = s.PutStageBatch("a", "st1", 0, std::string(500, 'y'), 1001, 1000);  // replaces batch 0
  REQUIRE(again.ok());
  CHECK(again->batches == 1);
  CHECK(again->bytes == 500);
  REQUIRE(s.PutStageBatch("a", "st2", 0, std::string(400, 'z'), 1002, 1000).ok());
  auto over = s.PutStageBatch("a", "st1", 1, std::string(101, 'w'), 1003, 1000);  // 500 + 400 + 101 > 1000
  CHECK(over.status().code() == Code::kTooLarge);
  CHECK(over.status().message().find("--stage-max-bytes") != std::string::npos);
  CHECK(s.PutStageBatch("b", "st1", 0, std::string(900, 'v'), 1003, 1000).ok());  // another site's own bound
  auto bodies = s.LoadStage("a", "st1");
  REQUIRE(bodies.ok());
  REQUIRE(bodies->size() == 1);  // the refused batch left nothing
  CHECK((*bodies)[0] == std::string(500, 'y'));

  // Stale: st2 (last used at 1002) goes, st1 touched at 2000 stays whole.
  REQUIRE(s.PutStageBatch("a", "st1", 1, "tail", 2000, 1000).ok());
  auto dropped = s.DropStaleStages(1500);
  REQUIRE(dropped.ok());
  CHECK(*dropped == 2);  // a/st2 and b/st1
  CHECK(s.LoadStage("a", "st2")->empty());
  bodies = s.LoadStage("a", "st1");
  REQUIRE(bodies->size() == 2);
  CHECK((*bodies)[1] == "tail");

  // A commit drops its stage in its own transaction.
  Commit c;
  c.site = "a";
  c.version = 1;
  c.drop_stage = "st1";
  REQUIRE(s.Apply(&c).ok());
  CHECK(s.LoadStage("a", "st1")->empty());
  CHECK(*s.StagedBytes() == 0);
}
