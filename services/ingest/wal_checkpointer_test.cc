// WalCheckpointer: the log is checkpointed into the database file from a
// connection of its own while another connection (the writer) keeps writing.
#include "wal_checkpointer.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "folio/sqlite/db.h"
#include "folio/testing/testing.h"

using namespace folio;

TEST_CASE("wal checkpointer: the writer's log reaches the database file without the writer checkpointing") {
  testing::TempDir dir;
  const std::string path = dir.path() + "/ingest.db";
  auto writer = sqlite::Db::Open(path);
  REQUIRE(writer.ok());
  // Only the checkpointer may checkpoint: SQLite's own one in a commit is off.
  REQUIRE((*writer)->Exec("PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)").ok());
  const std::string row(1000, 'x');
  auto insert = [&](int from, int n) {
    for (int i = from; i < from + n; ++i) {
      REQUIRE((*writer)->Exec("INSERT INTO t VALUES(" + std::to_string(i) + ", '" + row + "')").ok());
    }
  };
  insert(0, 500);
  const auto db_size = [&] { return std::filesystem::file_size(path); };
  CHECK(db_size() < 100'000);  // the rows are in the log only
  auto cp = ingest::WalCheckpointer::Start(path, 10);
  REQUIRE(cp.ok());
  // The writer goes on writing while checkpoints run beside it: never busy.
  insert(500, 500);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  uint64_t seen = (*cp)->checkpoints();
  while (std::chrono::steady_clock::now() < deadline && (db_size() < 1'000'000 || (*cp)->checkpoints() < seen + 2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(db_size() >= 1'000'000);  // all 1,000 rows of 1 KB copied into the database file
  CHECK((*cp)->checkpoints() >= seen + 2);
  // The log copied whole, the checkpointer wrote its row: the log restarted
  // on its connection, not in the writer's next commit.
  auto q = (*writer)->Prepare("SELECT COUNT(*) FROM wal_restart WHERE at_ms > 0");
  REQUIRE(q.ok());
  auto counted = q->Step();
  REQUIRE((counted.ok() && *counted));
  CHECK(q->Int(0) == 1);
  cp->reset();  // stops and joins
}
