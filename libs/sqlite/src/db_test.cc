#include "folio/sqlite/db.h"
#include "folio/sqlite/transaction.h"

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

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
    {
      auto tx = sqlite::Transaction::Begin(db->get());
      REQUIRE(tx.ok());
      REQUIRE(ins->Bind(1, "b").BindNull(2).Bind(3, int64_t{2}).Run().ok());
      tx->Rollback();
    }
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

namespace {
struct TestDir {
  std::string path;
  explicit TestDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("folio-sqlite-" + name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TestDir() { std::filesystem::remove_all(path); }
};

int64_t Count(sqlite::Db* db) {
  auto q = db->Prepare("SELECT count(*) FROM t");
  REQUIRE(q.ok());
  REQUIRE(*q->Step());
  return q->Int(0);
}
}  // namespace

TEST_CASE("sqlite: a released statement is reused fresh: no bindings, no open read, first row again") {
  TestDir d("cache");
  auto db = sqlite::Db::Open(d.path + "/t.db");
  REQUIRE(db.ok());
  REQUIRE((*db)->Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)").ok());
  REQUIRE((*db)->Exec("INSERT INTO t VALUES(1,'a'),(2,'b'),(3,'c')").ok());
  CHECK((*db)->CachedStatements() == 0);
  const char* kSelect = "SELECT k, v FROM t WHERE k >= ?1 OR ?1 IS NULL ORDER BY k";
  {
    auto q = (*db)->Prepare(kSelect);
    REQUIRE(q.ok());
    q->Bind(1, int64_t{2});
    REQUIRE(*q->Step());
    CHECK(q->Int(0) == 2);  // left mid-result, binding set
  }
  CHECK((*db)->CachedStatements() == 1);
  // Another connection can write and checkpoint: the idle statement holds no read transaction.
  {
    auto other = sqlite::Db::Open(d.path + "/t.db");
    REQUIRE(other.ok());
    REQUIRE((*other)->Exec("INSERT INTO t VALUES(4,'d')").ok());
    REQUIRE((*other)->Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
  }
  {
    auto q = (*db)->Prepare(kSelect);
    REQUIRE(q.ok());
    CHECK((*db)->CachedStatements() == 0);  // taken from the cache
    int64_t n = 0;
    while (*q->Step()) ++n;
    CHECK(n == 4);  // binding cleared (NULL: every row), sees the other connection's row
  }
  // Two live statements of one SQL are distinct, and both go back.
  {
    auto a = (*db)->Prepare("SELECT v FROM t WHERE k = ?");
    auto b = (*db)->Prepare("SELECT v FROM t WHERE k = ?");
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    a->Bind(1, int64_t{1});
    b->Bind(1, int64_t{3});
    REQUIRE(*a->Step());
    REQUIRE(*b->Step());
    CHECK(a->Text(0) == "a");
    CHECK(b->Text(0) == "c");
  }
  CHECK((*db)->CachedStatements() == 3);
  // Text after the first statement: compiled each time, never cached.
  { auto q = (*db)->Prepare("SELECT 1; SELECT 2"); REQUIRE(q.ok()); }
  CHECK((*db)->CachedStatements() == 3);
  // A schema change does not break a cached statement (SQLite re-prepares it).
  REQUIRE((*db)->Exec("ALTER TABLE t ADD COLUMN w TEXT").ok());
  {
    auto q = (*db)->Prepare(kSelect);
    REQUIRE(q.ok());
    REQUIRE(*q->Step());
    CHECK(q->Text(1) == "a");
  }
  // A statement that outlives its Db is finalized, not returned to a closed cache.
  sqlite::Stmt late;
  {
    auto q = (*db)->Prepare(kSelect);
    REQUIRE(q.ok());
    late = std::move(*q);
  }
  db->reset();
}

TEST_CASE("sqlite: online backup is a consistent snapshot while another connection writes") {
  TestDir dir("backup");
  auto src = sqlite::Db::Open(dir.path + "/src.db");
  REQUIRE(src.ok());
  REQUIRE((*src)->Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)").ok());
  std::string filler(1000, 'x');
  {
    auto tx = sqlite::Transaction::Begin(src->get());
    REQUIRE(tx.ok());
    auto ins = (*src)->Prepare("INSERT INTO t(v) VALUES(?)");
    REQUIRE(ins.ok());
    for (int i = 0; i < 2000; ++i) REQUIRE(ins->Bind(1, filler).Run().ok());
    REQUIRE(tx->Commit().ok());
  }

  // A writer on its own connection commits batches of 100 rows while the
  // backup steps one page at a time; every snapshot must hold whole batches.
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto w = sqlite::Db::Open(dir.path + "/src.db");
    REQUIRE(w.ok());
    auto wi = (*w)->Prepare("INSERT INTO t(v) VALUES(?)");
    REQUIRE(wi.ok());
    for (int b = 0; b < 20 && !stop; ++b) {
      auto tx = sqlite::Transaction::Begin(w->get());
      REQUIRE(tx.ok());
      for (int i = 0; i < 100; ++i) REQUIRE(wi->Bind(1, filler).Run().ok());
      REQUIRE(tx->Commit().ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  auto reader = sqlite::Db::Open(dir.path + "/src.db");
  REQUIRE(reader.ok());
  Status s = (*reader)->BackupTo(dir.path + "/copy.db", 64, 1);
  stop = true;
  writer.join();
  REQUIRE_MESSAGE(s.ok(), s.message());
  {
    auto copy = sqlite::Db::Open(dir.path + "/copy.db");
    REQUIRE(copy.ok());
    auto ic = (*copy)->IntegrityCheck();
    REQUIRE(ic.ok());
    CHECK(*ic == "ok");
    int64_t n = Count(copy->get());
    CHECK(n >= 2000);
    CHECK(n % 100 == 0);
  }
  // The target must not exist already; nothing is overwritten.
  CHECK((*reader)->BackupTo(dir.path + "/copy.db").code() == Code::kInvalidArgument);
  CHECK(!(*reader)->BackupTo(dir.path + "/no/such/dir/x.db").ok());
  CHECK(!std::filesystem::exists(dir.path + "/no/such/dir/x.db"));
}

TEST_CASE("sqlite: integrity check reports damage and refuses non-databases") {
  TestDir dir("integrity");
  std::string path = dir.path + "/d.db";
  {
    auto db = sqlite::Db::Open(path);
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("PRAGMA journal_mode=DELETE; CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);"
                        "CREATE INDEX tv ON t(v);").ok());
    auto ins = (*db)->Prepare("INSERT INTO t(v) VALUES(?)");
    REQUIRE(ins.ok());
    for (int i = 0; i < 500; ++i) REQUIRE(ins->Bind(1, "value " + std::to_string(i) + std::string(200, 'y')).Run().ok());
    auto ic = (*db)->IntegrityCheck();
    REQUIRE(ic.ok());
    CHECK(*ic == "ok");
  }
  {
    // Overwrite the middle of the file (past the header and schema page).
    FILE* f = fopen(path.c_str(), "r+b");
    REQUIRE(f);
    auto size = std::filesystem::file_size(path);
    fseek(f, static_cast<long>(size / 2), SEEK_SET);
    std::string junk(8192, '\x5a');
    fwrite(junk.data(), 1, junk.size(), f);
    fclose(f);
    auto db = sqlite::Db::Open(path);
    REQUIRE(db.ok());
    auto ic = (*db)->IntegrityCheck();
    CHECK((!ic.ok() || *ic != "ok"));
  }
  {
    std::string garbage = dir.path + "/garbage.db";
    FILE* f = fopen(garbage.c_str(), "wb");
    REQUIRE(f);
    std::string junk(10000, 'g');
    fwrite(junk.data(), 1, junk.size(), f);
    fclose(f);
    auto db = sqlite::Db::Open(garbage);  // fails at the journal_mode pragma, or the check does
    if (db.ok()) {
      auto ic = (*db)->IntegrityCheck();
      CHECK((!ic.ok() || *ic != "ok"));
    }
  }
}

TEST_CASE("sqlite: OpenedByAnotherProcess sees a connection in a child process") {
  TestDir dir("inuse");
  std::string path = dir.path + "/u.db";
  {
    auto db = sqlite::Db::Open(path);
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("CREATE TABLE t(k)").ok());
  }
  CHECK(!sqlite::OpenedByAnotherProcess(path));
  int ready[2], done[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(done) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto db = sqlite::Db::Open(path);
    bool ok = db.ok() && (*db)->Exec("SELECT count(*) FROM t").ok();
    char c = ok ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(1);
    if (read(done[0], &c, 1) < 0) _exit(1);
    _exit(0);
  }
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  CHECK(c == 'y');
  CHECK(sqlite::OpenedByAnotherProcess(path));
  REQUIRE(write(done[1], "x", 1) == 1);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(!sqlite::OpenedByAnotherProcess(path));
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
}

TEST_CASE("sqlite: a full database is kNoSpace, the transaction rolls back, writes work once there is room") {
  TestDir dir("full");
  auto db = sqlite::Db::Open(dir.path + "/t.db");
  REQUIRE(db.ok());
  REQUIRE((*db)->Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)").ok());
  auto ins = (*db)->Prepare("INSERT INTO t(v) VALUES(?)");
  REQUIRE(ins.ok());
  REQUIRE(ins->BindBlob(1, std::string(100, 'a')).Run().ok());
  // SQLite answers SQLITE_FULL ("database or disk is full") past
  // max_page_count exactly as when the file system is full.
  REQUIRE((*db)->Exec("PRAGMA max_page_count=" + std::to_string(8)).ok());
  {
    auto tx = sqlite::Transaction::Begin(db->get());
    REQUIRE(tx.ok());
    Status s;
    for (int i = 0; i < 100 && s.ok(); ++i) s = ins->BindBlob(1, std::string(4000, 'b')).Run();
    CHECK(s.code() == Code::kNoSpace);
    CHECK(s.message().find("full") != std::string::npos);
  }  // the guard rolls back
  CHECK(Count(db->get()) == 1);  // nothing of the transaction stayed
  REQUIRE((*db)->Exec("PRAGMA max_page_count=1000000").ok());
  CHECK(ins->BindBlob(1, std::string(4000, 'c')).Run().ok());
  CHECK(Count(db->get()) == 2);
}
