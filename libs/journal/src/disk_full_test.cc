// A full disk (ENOSPC) is recoverable: a write that failed for lack of space
// was never acknowledged, so the journal cuts it off (no partial record, no
// whole record of a failed commit stays behind), answers kNoSpace and tries
// the next write for real. A failed fdatasync stays sticky whatever its errno.
// Faults come from FaultEnv (test_util.h) over real files.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>

#include "folio/core/log.h"
#include "folio/journal/journal.h"
#include "folio/testing/testing.h"
#include "format.h"
#include "test_util.h"

using namespace folio;
using namespace folio::journal;
using folio::journal::test::Content;
using folio::journal::test::ReadBlob;
using folio::journal::test::SegmentFiles;

namespace {

constexpr uint32_t kBlock = 4096;

Options WithEnv(test::FaultEnv* env) {
  Options o;
  o.env = env;
  o.block_bytes = kBlock;
  o.background = false;
  return o;
}

// Sum of the sizes of the segment files of dir.
uint64_t SegmentBytes(const std::string& dir) {
  uint64_t n = 0;
  for (const std::string& f : SegmentFiles(dir)) n += std::filesystem::file_size(f);
  return n;
}

std::set<std::string> Keys(const Journal& j) {
  std::set<std::string> out;
  auto all = j.List("", 1000);
  REQUIRE(all.ok());
  for (const BlobInfo& b : *all) out.insert(b.key);
  return out;
}

// Reopens dir and checks it holds exactly `want` (key -> bytes), with no torn
// tail to cut and no corrupt record: nothing of a failed write stayed behind.
void CheckReopens(const std::string& dir, const Options& o, const std::map<std::string, std::string>& want) {
  auto j = test::OpenOrFail(dir, o);
  std::set<std::string> keys;
  for (const auto& [k, v] : want) {
    keys.insert(k);
    CHECK_MESSAGE(ReadBlob(*j, k) == v, k);
  }
  CHECK(Keys(*j) == keys);
  CHECK(j->stats().truncated_bytes == 0);
  CHECK(j->stats().corrupt_records == 0);
}

struct QuietLogs {
  QuietLogs() { log::Configure(log::Level::kError, log::Format::kText); }
  ~QuietLogs() { log::Configure(log::Level::kInfo, log::Format::kText); }
};

}  // namespace

TEST_CASE("ENOSPC on a block write: nothing stays behind, the journal stays writable") {
  QuietLogs quiet;
  for (bool short_write : {false, true}) {
    CAPTURE(short_write);
    testing::TempDir tmp;
    test::FaultEnv env;
    env.full_short = short_write;  // half the block reaches the file before ENOSPC
    const Options o = WithEnv(&env);
    {
      auto j = test::OpenOrFail(tmp.path(), o);
      REQUIRE(j->Put("before", "text/plain", Content(1, 5000)).ok());
      const uint64_t size = SegmentBytes(tmp.path());
      env.FillDisk();
      Status s = j->Put("big", "image/png", Content(2, 3 * kBlock + 100));
      CHECK(s.code() == Code::kNoSpace);
      CHECK(SegmentBytes(tmp.path()) == size);  // cut back: no partial block
      CHECK(ReadBlob(*j, "big") == "<absent>");
      // A streaming writer: the block write fails, the writer is aborted.
      Result<BlobWriter> w = j->BeginBlob("streamed", "");
      REQUIRE(w.ok());
      CHECK(w->Append(Content(3, 2 * kBlock)).code() == Code::kNoSpace);
      w->Abort();
      CHECK(SegmentBytes(tmp.path()) == size);
      CHECK(ReadBlob(*j, "before") == Content(1, 5000));  // reads go on
      CHECK(j->WriteError().ok());                         // a full disk is not sticky
      env.FreeSpace();
      // The next write is tried for real and works.
      REQUIRE(j->Put("big", "image/png", Content(2, 3 * kBlock + 100)).ok());
      CHECK(ReadBlob(*j, "big") == Content(2, 3 * kBlock + 100));
      REQUIRE(j->Put("after", "", "x").ok());
    }
    CheckReopens(tmp.path(), o, {{"before", Content(1, 5000)}, {"big", Content(2, 3 * kBlock + 100)}, {"after", "x"}});
  }
}

TEST_CASE("ENOSPC on the commit write: the commit is undone, even its whole records") {
  QuietLogs quiet;
  for (bool short_write : {false, true}) {
    CAPTURE(short_write);
    testing::TempDir tmp;
    test::FaultEnv env;
    env.full_short = short_write;
    const Options o = WithEnv(&env);
    const std::string two_blocks = Content(5, 2 * kBlock + 10);  // 2 block records, then the commit
    {
      auto j = test::OpenOrFail(tmp.path(), o);
      REQUIRE(j->Put("before", "", Content(4, 100)).ok());
      const uint64_t size = SegmentBytes(tmp.path());
      env.FillDisk(/*after_writes=*/2);  // the blocks fit, the commit record does not
      CHECK(j->Put("blob", "", two_blocks).code() == Code::kNoSpace);
      // The two whole block records stay (garbage, like an aborted writer's);
      // nothing of the commit record does.
      CHECK(SegmentBytes(tmp.path()) == size + 2 * format::BlockRecordSize(kBlock));
      CHECK(ReadBlob(*j, "blob") == "<absent>");
      // A small blob is a single commit record; a delete a single tombstone.
      const uint64_t with_blocks = SegmentBytes(tmp.path());
      env.FillDisk();
      CHECK(j->Put("small", "", "tiny").code() == Code::kNoSpace);
      CHECK(j->Delete("before").code() == Code::kNoSpace);
      CHECK(SegmentBytes(tmp.path()) == with_blocks);
      CHECK(ReadBlob(*j, "small") == "<absent>");
      CHECK(ReadBlob(*j, "before") == Content(4, 100));
      env.FreeSpace();
      REQUIRE(j->Put("blob", "", two_blocks).ok());
      REQUIRE(j->Put("small", "", "tiny").ok());
    }
    CheckReopens(tmp.path(), o, {{"before", Content(4, 100)}, {"blob", two_blocks}, {"small", "tiny"}});
  }
}

TEST_CASE("ENOSPC creating or starting a segment: the old one stays the head, later writes roll over") {
  QuietLogs quiet;
  for (bool fail_create : {true, false}) {
    // fail_create: creating the next segment's file fails. Otherwise it is
    // created and the first write into it fails: it is left empty.
    CAPTURE(fail_create);
    testing::TempDir tmp;
    test::FaultEnv env;
    Options o = WithEnv(&env);
    o.segment_bytes = 64 << 10;
    std::map<std::string, std::string> want;
    int i = 0;
    auto key = [&] { return "k" + std::to_string(10 + i); };  // 3-byte keys: same record size each
    const std::string value = Content(7, 3000);                 // an inline blob: one commit record
    const uint64_t record = format::RecordSize(3, format::kCommitFixed + value.size());
    {
      auto j = test::OpenOrFail(tmp.path(), o);
      // Fill segment 1 until the next put must roll over.
      for (; std::filesystem::file_size(SegmentFiles(tmp.path())[0]) + record <= o.segment_bytes; ++i) {
        REQUIRE(j->Put(key(), "", value).ok());
        want[key()] = value;
      }
      REQUIRE(SegmentFiles(tmp.path()).size() == 1);
      const uint64_t size = SegmentBytes(tmp.path());
      if (fail_create) {
        env.full_create = true;
      } else {
        env.FillDisk();
      }
      CHECK(j->Put(key(), "", value).code() == Code::kNoSpace);
      CHECK(ReadBlob(*j, key()) == "<absent>");
      CHECK(SegmentBytes(tmp.path()) == size);
      if (fail_create) {
        CHECK(SegmentFiles(tmp.path()).size() == 1);
      } else {
        CHECK(SegmentFiles(tmp.path()).size() == 2);  // created, then its first write cut off
      }
      CHECK(j->Put(key(), "", value).code() == Code::kNoSpace);  // tried again, for real
      env.FreeSpace();
      REQUIRE(j->Put(key(), "", value).ok());
      want[key()] = value;
      CHECK(SegmentFiles(tmp.path()).size() == 2);
      ++i;
      REQUIRE(j->Put(key(), "", value).ok());
      want[key()] = value;
    }
    CheckReopens(tmp.path(), o, want);
  }
}

TEST_CASE("a failed fdatasync stays sticky even when it reports ENOSPC") {
  QuietLogs quiet;
  testing::TempDir tmp;
  test::FaultEnv env;
  const Options o = WithEnv(&env);
  {
    auto j = test::OpenOrFail(tmp.path(), o);
    REQUIRE(j->Put("ok", "", "fine").ok());
    env.fail_sync = true;
    env.sync_enospc = true;
    CHECK(j->Put("lost", "", "maybe").code() == Code::kUnavailable);
    env.fail_sync = false;  // space is back: the journal still refuses (data may be lost)
    CHECK(j->Put("later", "", "x").code() == Code::kUnavailable);
    CHECK(j->WriteError().code() == Code::kUnavailable);
    CHECK(ReadBlob(*j, "ok") == "fine");
  }
  auto j = test::OpenOrFail(tmp.path(), o);
  CHECK(ReadBlob(*j, "ok") == "fine");
  CHECK(ReadBlob(*j, "later") == "<absent>");
  CHECK(j->Put("later", "", "y").ok());
}
