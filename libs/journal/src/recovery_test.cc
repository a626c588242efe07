// Recovery: torn tails at every byte offset, flipped bits everywhere,
// checkpoint + tail scan, corrupt checkpoints, corruption in older segments.
// A "crash" is simulated by copying the directory while the journal is open
// (every acknowledged write is in the files) and then cutting or flipping.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "folio/core/log.h"
#include "folio/journal/journal.h"
#include "folio/testing/testing.h"
#include "format.h"
#include "test_util.h"

using namespace folio;
using namespace folio::journal;
using folio::journal::test::Content;
using folio::journal::test::ReadBlob;
using folio::journal::test::ReadFileBytes;
using folio::journal::test::WriteFileBytes;

namespace {

// The loops below reopen journals thousands of times; real syncs would make
// them wait on the disk, and durability is not what they check.
test::FaultEnv* NoSyncEnv() {
  static test::FaultEnv* env = [] {
    auto* e = new test::FaultEnv();
    e->no_sync = true;
    return e;
  }();
  return env;
}

Options Small() {
  Options o;
  o.env = NoSyncEnv();
  o.block_bytes = 64;  // multi-block blobs in a few hundred bytes
  o.segment_bytes = 1 << 20;
  o.background = false;
  return o;
}

std::unique_ptr<Journal> OpenOk(const std::string& dir, Options o) {
  return test::OpenOrFail(dir, o);
}

uint64_t FileSize(const std::string& path) { return std::filesystem::file_size(path); }

struct QuietLogs {
  QuietLogs() { log::Configure(log::Level::kError, log::Format::kText); }
  ~QuietLogs() { log::Configure(log::Level::kInfo, log::Format::kText); }
};

// Bytes of zero padding in a segment file (never checked, so flips there are
// legitimately invisible).
uint64_t PaddingBytes(const std::string& seg) {
  uint64_t pad = 0;
  for (size_t pos = 0; pos + format::kHeaderSize <= seg.size();) {
    format::RecordHeader h;
    REQUIRE(format::ParseHeader(seg.data() + pos, &h));
    pad += h.size() - (format::kHeaderSize + h.key_len + h.body_len + format::kTrailerSize);
    pos += h.size();
  }
  return pad;
}

}  // namespace

TEST_CASE("a torn tail at every byte offset of the last write is cut off; everything before survives") {
  QuietLogs quiet;
  enum class Last { kSmallPut, kMultiBlockPut, kTombstone };
  for (Last last : {Last::kSmallPut, Last::kMultiBlockPut, Last::kTombstone}) {
    for (bool with_checkpoint : {false, true}) {
      CAPTURE(static_cast<int>(last));
      CAPTURE(with_checkpoint);
      test::ScratchDir tmp;
      const std::string src = tmp.path() + "/src", work = tmp.path() + "/work";
      auto j = OpenOk(src, Small());
      REQUIRE(j->Put("a", "m", Content(1, 40)).ok());
      REQUIRE(j->Put("b", "m", Content(2, 200)).ok());  // 3 blocks + inline tail
      REQUIRE(j->Put("d", "", "doomed").ok());
      REQUIRE(j->Delete("d").ok());
      REQUIRE(j->Put("e", "", "").ok());
      REQUIRE(j->Checkpoint().ok());
      const std::string checkpoint = ReadFileBytes(src + "/CHECKPOINT");
      const std::string seg = test::SegmentFiles(src).at(0);
      const uint64_t start = FileSize(seg);
      if (last == Last::kSmallPut) REQUIRE(j->Put("last", "", Content(3, 100)).ok());
      if (last == Last::kMultiBlockPut) REQUIRE(j->Put("last", "", Content(3, 192)).ok());  // 3 blocks, no tail
      if (last == Last::kTombstone) REQUIRE(j->Delete("a").ok());
      const uint64_t end = FileSize(seg);
      REQUIRE(end > start);
      test::CopyDir(src, work);
      const std::string full = ReadFileBytes(work + "/" + std::filesystem::path(seg).filename().string());
      const std::string work_seg = test::SegmentFiles(work).at(0);
      for (uint64_t cut = start; cut <= end; ++cut) {
        CAPTURE(cut);
        test::SyncDirContents(src, work);
        WriteFileBytes(work_seg, full.substr(0, cut));
        if (with_checkpoint) {
          WriteFileBytes(work + "/CHECKPOINT", checkpoint);
        } else {
          std::filesystem::remove(work + "/CHECKPOINT");
        }
        {
          auto r = OpenOk(work, Small());
          CHECK(r->stats().checkpoint_loaded == with_checkpoint);
          CHECK(ReadBlob(*r, "b") == Content(2, 200));
          CHECK(ReadBlob(*r, "d") == "<absent>");
          CHECK(ReadBlob(*r, "e") == "");
          if (last == Last::kTombstone) {
            CHECK(ReadBlob(*r, "a") == (cut == end ? "<absent>" : Content(1, 40)));
          } else {
            CHECK(ReadBlob(*r, "a") == Content(1, 40));
            CHECK(ReadBlob(*r, "last") == (cut == end ? Content(3, last == Last::kSmallPut ? 100 : 192) : "<absent>"));
          }
          uint64_t size_after = FileSize(work_seg);
          CHECK(size_after <= cut);
          CHECK(size_after >= start);
          CHECK(size_after % format::kAlign == 0);
          CHECK(r->stats().truncated_bytes == cut - size_after);
          CHECK(r->stats().corrupt_records == 0);
          if (cut % 5 != 0 && cut != end) continue;  // the write-after check on a sample
          REQUIRE(r->Put("new", "", Content(4, 150)).ok());
        }
        auto r = OpenOk(work, Small());
        CHECK(ReadBlob(*r, "new") == Content(4, 150));
        CHECK(ReadBlob(*r, "b") == Content(2, 200));
      }
    }
  }
}

TEST_CASE("a flipped bit anywhere in a segment is never served") {
  QuietLogs quiet;
  test::ScratchDir tmp;
  const std::string src = tmp.path() + "/src", work = tmp.path() + "/work";
  const std::map<std::string, std::string> want = {
      {"s", Content(1, 40)}, {"m", Content(2, 150)}, {"x", "deleted"}, {"e", ""}, {"z", Content(3, 128)}};
  std::string seg_bytes, checkpoint;
  {
    auto j = OpenOk(src, Small());
    for (const char* k : {"s", "m", "x", "e", "z"}) REQUIRE(j->Put(k, "meta", want.at(k)).ok());
    REQUIRE(j->Delete("x").ok());
    REQUIRE(j->Checkpoint().ok());
    seg_bytes = ReadFileBytes(test::SegmentFiles(src).at(0));
    checkpoint = ReadFileBytes(src + "/CHECKPOINT");
  }
  const uint64_t padding = PaddingBytes(seg_bytes);
  MESSAGE("segment ", seg_bytes.size(), " bytes (", padding, " padding), checkpoint ", checkpoint.size(), " bytes");
  const std::string seg_name = std::filesystem::path(test::SegmentFiles(src).at(0)).filename().string();
  for (bool with_checkpoint : {false, true}) {
    CAPTURE(with_checkpoint);
    uint64_t undetected = 0, errors = 0;
    for (size_t bit = 0; bit < seg_bytes.size() * 8; ++bit) {
      CAPTURE(bit);
      std::filesystem::create_directories(work);
      std::filesystem::remove(work + "/CHECKPOINT");
      std::string flipped = seg_bytes;
      flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
      WriteFileBytes(work + "/" + seg_name, flipped);
      if (with_checkpoint) WriteFileBytes(work + "/CHECKPOINT", checkpoint);
      auto j = OpenOk(work, Small());
      bool any_missing = false;
      for (const auto& [key, bytes] : want) {
        std::string got = ReadBlob(*j, key);
        if (got.starts_with("<error")) {
          ++errors;
          any_missing = true;
          continue;
        }
        if (key == "x" && !with_checkpoint) {  // a corrupt tombstone lets the old version back
          CHECK((got == "<absent>" || got == bytes));
          continue;
        }
        if (key == "x") {
          CHECK(got == "<absent>");
          continue;
        }
        if (got == "<absent>") {
          CHECK_FALSE(with_checkpoint);  // the checkpoint knows every key
          any_missing = true;
          continue;
        }
        CHECK(got == bytes);  // never wrong bytes
      }
      Stats s = j->stats();
      if (!with_checkpoint && s.corrupt_records == 0 && s.truncated_bytes == 0 && !any_missing) ++undetected;
    }
    MESSAGE("checkpoint ", with_checkpoint, ": read errors ", errors, ", undetected flips ", undetected);
    if (!with_checkpoint) {
      CHECK(undetected <= padding * 8);  // only flips in padding go unnoticed
    } else {
      CHECK(errors > 0);
    }
  }
  // Every flipped bit of the checkpoint: it is rejected, the full scan serves everything.
  for (size_t bit = 0; bit < checkpoint.size() * 8; ++bit) {
    CAPTURE(bit);
    std::filesystem::create_directories(work);
    WriteFileBytes(work + "/" + seg_name, seg_bytes);
    std::string flipped = checkpoint;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    WriteFileBytes(work + "/CHECKPOINT", flipped);
    auto j = OpenOk(work, Small());
    CHECK_FALSE(j->stats().checkpoint_loaded);
    for (const auto& [key, bytes] : want) CHECK(ReadBlob(*j, key) == (key == "x" ? "<absent>" : bytes));
  }
}

TEST_CASE("checkpoint + tail scan; a corrupt or missing checkpoint falls back to a full scan") {
  QuietLogs quiet;
  testing::TempDir tmp;
  const std::string src = tmp.path() + "/src", crash = tmp.path() + "/crash";
  Options o = Small();
  o.block_bytes = 4096;
  o.segment_bytes = 256 << 10;  // several segments
  std::map<std::string, std::string> want;
  auto j = OpenOk(src, o);
  for (int i = 0; i < 60; ++i) {
    std::string key = "before/" + std::to_string(i);
    want[key] = Content(i, 1000 + i * 211);
    REQUIRE(j->Put(key, "", want[key]).ok());
  }
  REQUIRE(j->Checkpoint().ok());
  for (int i = 0; i < 60; ++i) {
    std::string key = "after/" + std::to_string(i);
    want[key] = Content(100 + i, 2000 + i * 97);
    REQUIRE(j->Put(key, "", want[key]).ok());
  }
  want["before/1"] = "overwritten after the checkpoint";
  REQUIRE(j->Put("before/1", "", want["before/1"]).ok());
  REQUIRE(j->Delete("before/2").ok());
  want.erase("before/2");
  test::CopyDir(src, crash);  // the files as a crash would leave them: no checkpoint at close
  const uint64_t total = j->stats().disk_bytes;
  j.reset();

  auto check_all = [&](const Journal& r) {
    CHECK(r.stats().live_blobs == want.size());
    for (const auto& [key, bytes] : want) CHECK(ReadBlob(r, key) == bytes);
    CHECK(ReadBlob(r, "before/2") == "<absent>");
  };
  {
    auto r = OpenOk(crash, o);
    Stats s = r->stats();
    CHECK(s.checkpoint_loaded);
    CHECK(s.scanned_bytes > 0);
    CHECK(s.scanned_bytes < total);  // only the tail was read
    check_all(*r);
  }
  const std::string good = ReadFileBytes(src + "/CHECKPOINT");
  for (const std::string& bad : {std::string("garbage"), good.substr(0, good.size() / 2), std::string()}) {
    test::CopyDir(crash, tmp.path() + "/bad");
    WriteFileBytes(tmp.path() + "/bad/CHECKPOINT", bad);
    auto r = OpenOk(tmp.path() + "/bad", o);
    CHECK_FALSE(r->stats().checkpoint_loaded);
    check_all(*r);
  }
  test::CopyDir(crash, tmp.path() + "/none");
  std::filesystem::remove(tmp.path() + "/none/CHECKPOINT");
  WriteFileBytes(tmp.path() + "/none/CHECKPOINT.tmp", "half-written");  // a crash mid-checkpoint
  {
    auto r = OpenOk(tmp.path() + "/none", o);
    CHECK_FALSE(r->stats().checkpoint_loaded);
    check_all(*r);
  }
  CHECK_FALSE(std::filesystem::exists(tmp.path() + "/none/CHECKPOINT.tmp"));
  auto r = OpenOk(tmp.path() + "/none", o);  // the close above wrote a fresh checkpoint
  CHECK(r->stats().checkpoint_loaded);
  CHECK(r->stats().scanned_bytes == 0);
  check_all(*r);
}

TEST_CASE("a corrupt block in the middle of an older segment: skipped by the scan, an error through the checkpoint") {
  QuietLogs quiet;
  testing::TempDir tmp;
  const std::string src = tmp.path() + "/src";
  Options o = Small();
  o.block_bytes = 4096;
  o.segment_bytes = 64 << 10;
  std::map<std::string, std::string> want;
  {
    auto j = OpenOk(src, o);
    for (int i = 0; i < 40; ++i) {
      std::string key = "k" + std::to_string(i);
      want[key] = Content(i, 5000);  // one block + an inline tail
      REQUIRE(j->Put(key, "", want[key]).ok());
    }
    REQUIRE(j->stats().segments >= 3);
  }
  // Flip one data byte of the third block record of the first segment.
  const std::string seg = test::SegmentFiles(src).at(0);
  std::string bytes = ReadFileBytes(seg);
  size_t pos = 0, blocks = 0, target = 0;
  while (pos + format::kHeaderSize <= bytes.size()) {
    format::RecordHeader h;
    REQUIRE(format::ParseHeader(bytes.data() + pos, &h));
    if (h.type == format::kBlock && ++blocks == 3) target = pos + format::kHeaderSize + format::kBlockPrefix + 100;
    pos += h.size();
  }
  REQUIRE(target > 0);
  bytes[target] = static_cast<char>(bytes[target] ^ 0x10);
  WriteFileBytes(seg, bytes);

  for (bool with_checkpoint : {true, false}) {
    CAPTURE(with_checkpoint);
    const std::string dir = tmp.path() + (with_checkpoint ? "/ckpt" : "/scan");
    test::CopyDir(src, dir);
    if (!with_checkpoint) std::filesystem::remove(dir + "/CHECKPOINT");
    auto j = OpenOk(dir, o);
    int bad = 0;
    for (const auto& [key, data] : want) {
      std::string got = ReadBlob(*j, key);
      if (got == data) continue;
      ++bad;
      if (with_checkpoint) {
        CHECK(got.find("checksum mismatch") != std::string::npos);
      } else {
        CHECK(got == "<absent>");
      }
    }
    CHECK(bad == 1);
    if (!with_checkpoint) CHECK(j->stats().corrupt_records >= 1);
  }
}
