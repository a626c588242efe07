#include "folio/sqlite/db.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

using namespace folio;

TEST_CASE("sqlite: WAL database, bind, step, transactions roll back") {
  std::string dir = std::filesystem::temp_directory_path() / ("folio-sqlite-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    auto db = sqlite::Db::Open(dir + "/t.db");
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("CREATE TABLE t(k TEXT PRIMARY KEY, v BLOB, n INTEGER)").ok());
    auto ins = (*db)->Prepare("INSERT INTO t VALUES(?,?,?)");
    REQUIRE(ins.ok());
    REQUIRE(ins->Bind(1, "a").BindBlob(2, std::string("x\0y", 3)).Bind(3, int64_t{7}).Run().ok());
    CHECK(!ins->Bind(1, "a").BindNull(2).Bind(3, int64_t{1}).Run().ok());  // duplicate key
    REQUIRE((*db)->Begin().ok());
    REQUIRE(ins->Bind(1, "b").BindNull(2).Bind(3, int64_t{2}).Run().ok());
    (*db)->Rollback();
    auto q = (*db)->Prepare("SELECT k, v, n FROM t ORDER BY k");
    REQUIRE(q.ok());
    auto row = q->Step();
    REQUIRE(row.ok());
    REQUIRE(*row);
    CHECK(q->Text(0) == "a");
    CHECK(q->Blob(1) == std::string("x\0y", 3));
    CHECK(q->Int(2) == 7);
    CHECK(!*q->Step());
    CHECK(!(*db)->Prepare("SELEC nonsense").ok());
  }
  CHECK(!sqlite::Db::Open("/nonexistent-dir/x/y.db").ok());
  std::filesystem::remove_all(dir);
}
