// Compaction: live blobs stay byte-identical (also under concurrent readers
// and writers), space is reclaimed, tombstones outlive older commits, pinned
// and read segments are safe, a retired segment left by a crash is removed.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "folio/core/log.h"
#include "folio/journal/journal.h"
#include "folio/testing/testing.h"
#include "test_util.h"

using namespace folio;
using namespace folio::journal;
using folio::journal::test::Content;
using folio::journal::test::ReadBlob;

namespace {

Options SmallSegments() {
  Options o;
  o.block_bytes = 4096;
  o.segment_bytes = 64 << 10;
  o.background = false;
  return o;
}

std::unique_ptr<Journal> OpenOk(const std::string& dir, Options o = SmallSegments()) {
  return test::OpenOrFail(dir, o);
}

// Content of version v of key number k (size 0..20000).
std::string Version(int k, int v) {
  uint64_t seed = static_cast<uint64_t>(k) * 1000003 + static_cast<uint64_t>(v);
  return Content(seed, static_cast<size_t>((seed * 7919) % 20001));
}

void CheckAll(const Journal& j, const std::map<std::string, std::string>& want, const std::vector<std::string>& gone) {
  CHECK(j.stats().live_blobs == want.size());
  for (const auto& [key, bytes] : want) CHECK(ReadBlob(j, key) == bytes);
  for (const std::string& key : gone) CHECK(ReadBlob(j, key) == "<absent>");
}

struct QuietLogs {
  QuietLogs() { log::Configure(log::Level::kWarn, log::Format::kText); }
  ~QuietLogs() { log::Configure(log::Level::kInfo, log::Format::kText); }
};

}  // namespace

TEST_CASE("compaction keeps every live blob byte-identical, reclaims space, survives restart") {
  QuietLogs quiet;
  testing::TempDir tmp;
  std::map<std::string, std::string> want;
  std::vector<std::string> gone;
  std::map<std::string, std::string> saved_segments;
  {
    auto j = OpenOk(tmp.path());
    std::mt19937 rng(7);
    for (int i = 0; i < 300; ++i) {  // 100 keys, random overwrites: segments mix live and dead
      int k = i < 100 ? i : static_cast<int>(rng() % 100);
      std::string key = "k" + std::to_string(k);
      want[key] = Version(k, i);
      REQUIRE(j->Put(key, std::to_string(i), want[key]).ok());
    }
    for (int k = 0; k < 100; k += 7) {
      std::string key = "k" + std::to_string(k);
      REQUIRE(j->Delete(key).ok());
      want.erase(key);
      gone.push_back(key);
    }
    for (const std::string& f : test::SegmentFiles(tmp.path())) saved_segments[f] = test::ReadFileBytes(f);
    Stats before = j->stats();
    REQUIRE(j->Compact().ok());
    Stats after = j->stats();
    MESSAGE("segments ", before.segments, " -> ", after.segments, ", disk ", before.disk_bytes, " -> ",
            after.disk_bytes, " B, live ", after.live_bytes, " B, copied ", after.compaction_bytes, " B");
    CHECK(after.compactions > 0);
    CHECK(after.compaction_bytes > 0);  // live blobs were copied, not only dead segments dropped
    CHECK(after.disk_bytes < before.disk_bytes);
    CHECK(after.live_bytes == before.live_bytes);
    CHECK(test::SegmentFiles(tmp.path()).size() == after.segments);
    CheckAll(*j, want, gone);
    REQUIRE(j->Compact().ok());  // idempotent
    CheckAll(*j, want, gone);
  }
  {
    auto j = OpenOk(tmp.path());  // from the checkpoint
    CHECK(j->stats().checkpoint_loaded);
    CheckAll(*j, want, gone);
  }
  // A crash between the checkpoint and the removal leaves retired segments
  // behind: open removes them (a later full scan would otherwise replay them).
  size_t restored = 0;
  for (const auto& [path, bytes] : saved_segments) {
    if (!std::filesystem::exists(path)) {
      test::WriteFileBytes(path, bytes);
      ++restored;
    }
  }
  REQUIRE(restored > 0);
  {
    auto j = OpenOk(tmp.path());
    CheckAll(*j, want, gone);
    CHECK(test::SegmentFiles(tmp.path()).size() == j->stats().segments);
  }
  std::filesystem::remove(tmp.path() + "/CHECKPOINT");  // full scan: copies and tombstones replay right
  auto j = OpenOk(tmp.path());
  CHECK_FALSE(j->stats().checkpoint_loaded);
  CheckAll(*j, want, gone);
}

TEST_CASE("a tombstone is kept while an older segment still holds a commit of its key") {
  QuietLogs quiet;
  testing::TempDir tmp;
  std::map<std::string, std::string> want;
  {
    auto j = OpenOk(tmp.path());
    REQUIRE(j->Put("victim", "", Content(1, 3000)).ok());
    for (int i = 0; j->stats().segments < 2; ++i) {  // live data fills segment 1
      std::string key = "keep" + std::to_string(i);
      want[key] = Content(100 + i, 6000);
      REQUIRE(j->Put(key, "", want[key]).ok());
    }
    REQUIRE(j->Delete("victim").ok());  // tombstone in segment 2
    for (int i = 0; j->stats().segments < 4; ++i) {
      REQUIRE(j->Put("junk", "", Content(i, 7000)).ok());  // garbage in segment 2 and 3
    }
    want["junk"] = ReadBlob(*j, "junk");
    const std::string first = test::SegmentFiles(tmp.path()).at(0);
    REQUIRE(j->Compact().ok());
    CHECK(j->stats().compactions >= 1);
    CHECK(std::filesystem::exists(first));  // segment 1 is mostly live: kept
    CHECK(ReadBlob(*j, "victim") == "<absent>");
  }
  std::filesystem::remove(tmp.path() + "/CHECKPOINT");
  auto j = OpenOk(tmp.path());
  CHECK(ReadBlob(*j, "victim") == "<absent>");  // the copied tombstone still wins over segment 1
  CheckAll(*j, want, {"victim"});
}

TEST_CASE("a segment with blocks of an uncommitted writer is not compacted; readers keep removed segments") {
  QuietLogs quiet;
  testing::TempDir tmp;
  auto j = OpenOk(tmp.path());
  REQUIRE(j->Put("held", "", Content(7, 9000)).ok());
  Result<BlobReader> held = j->Get("held");  // a reader of segment 1
  REQUIRE(held.ok());
  Result<BlobWriter> w = j->BeginBlob("slow", "");
  REQUIRE(w.ok());
  REQUIRE(w->Append(Content(8, 3 * 4096)).ok());  // three blocks in segment 1
  for (int i = 0; j->stats().segments < 4; ++i) REQUIRE(j->Put("junk", "", Content(i, 7000)).ok());
  REQUIRE(j->Put("held", "", "replaced").ok());  // segment 1 is now garbage but for the writer
  const std::string first = test::SegmentFiles(tmp.path()).at(0);
  REQUIRE(j->Compact().ok());
  CHECK(std::filesystem::exists(first));
  REQUIRE(w->Append("tail").ok());
  REQUIRE(w->Commit().ok());
  const std::string slow = Content(8, 3 * 4096) + "tail";
  CHECK(ReadBlob(*j, "slow") == slow);
  // Now segment 1 holds only "slow" (live) and garbage: compaction copies it out.
  REQUIRE(j->Compact().ok());
  CHECK_FALSE(std::filesystem::exists(first));
  CHECK(ReadBlob(*j, "slow") == slow);
  std::string out;
  REQUIRE(held->ReadAll(&out).ok());  // the removed file is still open for this reader
  CHECK(out == Content(7, 9000));
  j.reset();
  j = OpenOk(tmp.path());
  CHECK(ReadBlob(*j, "slow") == slow);
  CHECK(ReadBlob(*j, "held") == "replaced");
}

TEST_CASE("compaction while readers and writers run: no wrong bytes, no errors, nothing lost") {
  QuietLogs quiet;
  testing::TempDir tmp;
  constexpr int kKeys = 60;
  std::vector<int> version(kKeys, 0);  // per key; key k belongs to writer k % 2
  std::vector<char> deleted(kKeys, 0);  // not vector<bool>: two writers touch neighbouring bits
  auto j = OpenOk(tmp.path());
  for (int k = 0; k < kKeys; ++k) REQUIRE(j->Put("k" + std::to_string(k), "0", Version(k, 0)).ok());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0}, failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(w);
      while (!stop) {
        int k = static_cast<int>(rng() % (kKeys / 2)) * 2 + w;
        std::string key = "k" + std::to_string(k);
        if (rng() % 10 == 0 && !deleted[k]) {
          if (!j->Delete(key).ok()) ++failures;
          deleted[k] = 1;
          continue;
        }
        int v = ++version[k];
        if (!j->Put(key, std::to_string(v), Version(k, v)).ok()) ++failures;
        deleted[k] = 0;
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937 rng(100 + r);
      std::string out;
      while (!stop) {
        int k = static_cast<int>(rng() % kKeys);
        Result<BlobReader> b = j->Get("k" + std::to_string(k));
        if (!b.ok()) {
          if (b.status().code() != Code::kNotFound) ++failures;
          continue;
        }
        Status s = b->ReadAll(&out);
        if (!s.ok() || out != Version(k, std::stoi(b->meta()))) ++failures;
        ++reads;
      }
    });
  }
  uint64_t compactions = 0;
  for (int round = 0; round < 30; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(j->Compact().ok());
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  compactions = j->stats().compactions;
  MESSAGE("reads ", reads.load(), ", segments compacted ", compactions, ", commits ", j->stats().commits);
  CHECK(failures == 0);
  CHECK(reads > 0);
  CHECK(compactions > 0);
  std::map<std::string, std::string> want;
  std::vector<std::string> gone;
  for (int k = 0; k < kKeys; ++k) {
    std::string key = "k" + std::to_string(k);
    if (deleted[k]) {
      gone.push_back(key);
    } else {
      want[key] = Version(k, version[k]);
    }
  }
  CheckAll(*j, want, gone);
  j.reset();
  j = OpenOk(tmp.path());
  CheckAll(*j, want, gone);
  j.reset();
  std::filesystem::remove(tmp.path() + "/CHECKPOINT");
  j = OpenOk(tmp.path());
  CheckAll(*j, want, gone);
}

TEST_CASE("background maintenance compacts and checkpoints on its own") {
  QuietLogs quiet;
  testing::TempDir tmp;
  Options o = SmallSegments();
  o.background = true;
  o.checkpoint_bytes = 128 << 10;
  auto j = OpenOk(tmp.path(), o);
  for (int i = 0; i < 200; ++i) REQUIRE(j->Put("k" + std::to_string(i % 5), "", Content(i, 6000)).ok());
  for (int wait = 0; wait < 100 && (j->stats().compactions == 0 || j->stats().checkpoints == 0); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(j->stats().compactions > 0);
  CHECK(j->stats().checkpoints > 0);
  for (int k = 0; k < 5; ++k) CHECK(ReadBlob(*j, "k" + std::to_string(k)) == Content(195 + k, 6000));
}
