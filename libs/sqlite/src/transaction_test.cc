#include "folio/sqlite/transaction.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>

using namespace folio;

namespace {

struct TxFixture {
  std::string dir;
  std::unique_ptr<sqlite::Db> db;
  TxFixture() {
    dir = std::filesystem::temp_directory_path() / ("folio-sqlite-tx-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto d = sqlite::Db::Open(dir + "/t.db");
    REQUIRE(d.ok());
    db = std::move(*d);
    REQUIRE(db->Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)").ok());
  }
  ~TxFixture() {
    db.reset();
    std::filesystem::remove_all(dir);
  }
  void Insert(const std::string& v) {
    auto q = db->Prepare("INSERT INTO t(v) VALUES(?)");
    REQUIRE(q.ok());
    REQUIRE(q->Bind(1, v).Run().ok());
  }
  int64_t Count() {
    auto q = db->Prepare("SELECT count(*) FROM t");
    REQUIRE(q.ok());
    REQUIRE(*q->Step());
    return q->Int(0);
  }
};

}  // namespace

TEST_CASE("sqlite::Transaction: Commit keeps the writes") {
  TxFixture f;
  auto tx = sqlite::Transaction::Begin(f.db.get());
  REQUIRE(tx.ok());
  CHECK(tx->active());
  f.Insert("a");
  f.Insert("b");
  REQUIRE(tx->Commit().ok());
  CHECK(!tx->active());
  CHECK(f.Count() == 2);
  // A second Commit is misuse, reported, and harmless.
  CHECK(tx->Commit().code() == Code::kInvalidArgument);
  CHECK(f.Count() == 2);
}

TEST_CASE("sqlite::Transaction: destruction without Commit rolls back") {
  TxFixture f;
  f.Insert("kept");
  {
    auto tx = sqlite::Transaction::Begin(f.db.get());
    REQUIRE(tx.ok());
    f.Insert("dropped");
    CHECK(f.Count() == 2);
  }
  CHECK(f.Count() == 1);
  // Rollback by hand, then destruction: rolled back once, nothing else undone.
  {
    auto tx = sqlite::Transaction::Begin(f.db.get());
    REQUIRE(tx.ok());
    f.Insert("dropped");
    tx->Rollback();
    CHECK(!tx->active());
    f.Insert("autocommitted");  // outside any transaction now
  }
  CHECK(f.Count() == 2);
  // A moved-from guard does nothing; the moved-to one owns the transaction.
  {
    auto tx = sqlite::Transaction::Begin(f.db.get());
    REQUIRE(tx.ok());
    sqlite::Transaction moved = std::move(*tx);
    CHECK(!tx->active());
    f.Insert("c");
    REQUIRE(moved.Commit().ok());
  }
  CHECK(f.Count() == 3);
}

TEST_CASE("sqlite::Transaction: a failed Commit rolls back and returns COMMIT's error") {
  TxFixture f;
  // A deferred foreign key is checked at COMMIT: the commit fails and SQLite
  // leaves the transaction open, which the guard must roll back.
  REQUIRE(f.db->Exec("CREATE TABLE parent(id INTEGER PRIMARY KEY); "
                     "CREATE TABLE child(p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
              .ok());
  auto tx = sqlite::Transaction::Begin(f.db.get());
  REQUIRE(tx.ok());
  f.Insert("lost");
  REQUIRE(f.db->Exec("INSERT INTO child(p) VALUES(42)").ok());
  Status s = tx->Commit();
  CHECK(s.code() == Code::kInternal);
  CHECK(s.message().find("FOREIGN KEY") != std::string::npos);
  CHECK(!tx->active());
  CHECK(f.Count() == 0);
  // The connection is usable: no transaction was left open.
  auto again = sqlite::Transaction::Begin(f.db.get());
  REQUIRE(again.ok());
  f.Insert("x");
  REQUIRE(again->Commit().ok());
  CHECK(f.Count() == 1);
}

TEST_CASE("sqlite::Transaction: a full disk stays kNoSpace and nothing of the transaction stays") {
  TxFixture f;
  f.Insert("kept");
  REQUIRE(f.db->Exec("PRAGMA max_page_count=8").ok());
  Status s;
  {
    auto tx = sqlite::Transaction::Begin(f.db.get());
    REQUIRE(tx.ok());
    auto q = f.db->Prepare("INSERT INTO t(v) VALUES(?)");
    REQUIRE(q.ok());
    for (int i = 0; i < 100 && s.ok(); ++i) s = q->Bind(1, std::string(4000, 'x')).Run();
  }
  CHECK(s.code() == Code::kNoSpace);
  CHECK(f.Count() == 1);
}

TEST_CASE("sqlite::Transaction: nesting is an error, and leaves the open transaction alone") {
  TxFixture f;
  auto outer = sqlite::Transaction::Begin(f.db.get());
  REQUIRE(outer.ok());
  f.Insert("outer");
  auto inner = sqlite::Transaction::Begin(f.db.get());
  CHECK(!inner.ok());
  CHECK(inner.status().code() == Code::kInvalidArgument);
  CHECK(outer->active());
  f.Insert("still outer");
  REQUIRE(outer->Commit().ok());
  CHECK(f.Count() == 2);
}
