// Group commit: concurrent writers share fdatasyncs, a lone writer pays one
// per commit, and a mixed concurrent workload is consistent after restart.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "folio/journal/journal.h"
#include "folio/testing/testing.h"
#include "test_util.h"

using namespace folio;
using namespace folio::journal;
using folio::journal::test::Content;
using folio::journal::test::ReadBlob;

namespace {

std::unique_ptr<Journal> OpenOk(const std::string& dir, Options o = {}) {
  o.background = false;
  return test::OpenOrFail(dir, o);
}

}  // namespace

TEST_CASE("a lone writer pays exactly one fdatasync per put") {
  testing::TempDir tmp;
  auto j = OpenOk(tmp.path());
  Stats before = j->stats();
  for (int i = 0; i < 50; ++i) REQUIRE(j->Put("k" + std::to_string(i), "", Content(i, 4096)).ok());
  Stats after = j->stats();
  CHECK(after.fsyncs - before.fsyncs == 50);
  CHECK(after.batches - before.batches == 50);
  CHECK(after.records - before.records == 50);  // small blobs: one commit record with the data inline
  for (int i = 0; i < 50; ++i) CHECK(ReadBlob(*j, "k" + std::to_string(i)) == Content(i, 4096));
}

TEST_CASE("the time group commits spend in fdatasync is counted") {
  testing::TempDir tmp;
  test::FaultEnv env;
  env.sync_delay_us = 2000;  // a 2 ms disk
  Options o;
  o.env = &env;
  auto j = OpenOk(tmp.path(), o);
  Stats before = j->stats();
  for (int i = 0; i < 10; ++i) REQUIRE(j->Put("k" + std::to_string(i), "", Content(i, 4096)).ok());
  Stats after = j->stats();
  CHECK(after.batches - before.batches == 10);
  CHECK(after.batch_sync_us - before.batch_sync_us >= 10 * 2000);
  env.sync_delay_us = 0;
}

TEST_CASE("8 concurrent writers x 50 puts share fdatasyncs") {
  testing::TempDir tmp;
  auto j = OpenOk(tmp.path());
  Stats before = j->stats();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        if (!j->Put("t" + std::to_string(t) + "/" + std::to_string(i), "", Content(t * 100 + i, 4096)).ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  Stats after = j->stats();
  uint64_t fsyncs = after.fsyncs - before.fsyncs;
  MESSAGE("400 puts from 8 threads: ", fsyncs, " fdatasyncs, ", after.batches - before.batches, " batches");
  CHECK(failures == 0);
  CHECK(fsyncs < 400);
  CHECK(after.commits - before.commits == 400);
  for (int t = 0; t < 8; ++t) {
    for (int i = 0; i < 50; ++i) {
      CHECK(ReadBlob(*j, "t" + std::to_string(t) + "/" + std::to_string(i)) == Content(t * 100 + i, 4096));
    }
  }
}

TEST_CASE("concurrent streaming writers, puts and deletes: consistent now and after restart") {
  testing::TempDir tmp;
  Options o;
  o.block_bytes = 8192;
  o.segment_bytes = 256 << 10;  // rollovers under concurrency
  std::mutex mu;
  std::map<std::string, std::string> want;  // written by each thread for its own keys
  {
    auto j = OpenOk(tmp.path(), o);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 40; ++i) {
          std::string key = "t" + std::to_string(t) + "/" + std::to_string(i % 10);
          std::string data = Content(t * 1000 + i, static_cast<size_t>((t * 7919 + i * 104729) % 40000));
          Status s;
          if (i % 3 == 0) {
            Result<BlobWriter> w = j->BeginBlob(key, "stream");
            s = w.status();
            for (size_t at = 0; s.ok() && at < data.size(); at += 5000) s = w->Append(std::string_view(data).substr(at, 5000));
            if (s.ok()) s = w->Commit();
          } else {
            s = j->Put(key, "put", data);
          }
          if (!s.ok()) ++failures;
          std::lock_guard l(mu);
          want[key] = data;
          if (i % 7 == 6) {
            if (!j->Delete(key).ok()) ++failures;
            want.erase(key);
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    CHECK(failures == 0);
    CHECK(j->stats().segments > 2);
    for (const auto& [key, data] : want) CHECK(ReadBlob(*j, key) == data);
    CHECK(j->stats().live_blobs == want.size());
  }
  auto j = OpenOk(tmp.path(), o);
  for (const auto& [key, data] : want) CHECK(ReadBlob(*j, key) == data);
  CHECK(j->stats().live_blobs == want.size());
}
