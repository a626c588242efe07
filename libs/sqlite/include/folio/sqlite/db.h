// A thin SQLite adapter: the only place sqlite3.h is included.
//
// Db owns one sqlite3 connection opened in WAL mode (synchronous=NORMAL,
// foreign keys on, 5 s busy timeout). Stmt owns one prepared statement
// while it lives; when it is destroyed the statement goes back to its Db's
// cache (reset, bindings cleared), and the next Prepare of the same SQL
// takes it instead of compiling the SQL again (a quarter of a one-note
// push's SQLite time was sqlite3_prepare). The cache holds at most 128 idle
// statements; a Stmt that outlives its Db finalizes its statement.
// Threading: a Db and its Stmts belong to one thread at a time (SQLite's
// serialized mode makes misuse safe, not fast); ingest uses its writer thread.
// Every failure is a Status whose message names the statement's purpose:
// kNoSpace when the disk (or a quota) is full (SQLITE_FULL; the statement
// kept nothing: roll the transaction back), kInternal otherwise.
// Transactions: sqlite::Transaction (transaction.h), an RAII guard.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace folio::sqlite {

class StmtCache;    // idle prepared statements of one Db (db.cc)
class Transaction;  // transaction.h: the only way to BEGIN/COMMIT/ROLLBACK
struct Fts5Access;  // fts5.cc: registers ranking functions on the connection

class Stmt {
 public:
  Stmt() = default;
  Stmt(Stmt&& o) noexcept : db_(o.db_), st_(o.st_), cache_(std::move(o.cache_)) { o.st_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  ~Stmt();

  // Bind by 1-based index. Text and blobs are copied by SQLite (TRANSIENT).
  Stmt& Bind(int i, std::string_view text);
  Stmt& BindBlob(int i, std::string_view bytes);
  Stmt& Bind(int i, int64_t v);
  Stmt& BindNull(int i);
  // SQLite's pointer-passing interface: p reaches SQL functions that ask
  // for pointers of `type` (a string literal), and nothing else.
  Stmt& BindPointer(int i, const void* p, const char* type);

  // Returns true while a row is available, false when done; errors as Status.
  Result<bool> Step();
  // Runs to completion, ignoring rows; resets for reuse.
  Status Run();
  void Reset();  // reset and clear bindings

  int64_t Int(int col) const;
  double Double(int col) const;
  std::string_view Text(int col) const;  // valid until the next Step/Reset
  std::string_view Blob(int col) const;
  bool IsNull(int col) const;

 private:
  friend class Db;
  Stmt(sqlite3* db, sqlite3_stmt* st, std::shared_ptr<StmtCache> cache)
      : db_(db), st_(st), cache_(std::move(cache)) {}
  void Release();  // back to the cache, or finalized
  sqlite3* db_ = nullptr;
  sqlite3_stmt* st_ = nullptr;
  std::shared_ptr<StmtCache> cache_;  // null: finalize on release
};

class Db {
 public:
  // Opens (creating if needed) the database file. kUnavailable on failure.
  static Result<std::unique_ptr<Db>> Open(const std::string& path);
  ~Db();

  Status Exec(std::string_view sql);  // one or more statements, no rows
  // A statement for sql: an idle one from the cache if this SQL ran before,
  // else compiled now. Text after the first statement is ignored (as by
  // sqlite3_prepare); such SQL is compiled each time, never cached.
  Result<Stmt> Prepare(std::string_view sql);
  // Idle statements held by the cache (tests and diagnostics).
  size_t CachedStatements() const;
  int64_t LastInsertRowId() const;
  int Changes() const;
  // Rows inserted, updated or deleted by this connection since it opened.
  int64_t TotalChanges() const;

  // Copies a consistent snapshot of this database into a new file at
  // dest_path with SQLite's Online Backup API, pages_per_step pages at a
  // time with a pause_ms sleep between steps so writers on other
  // connections keep going. If another connection writes meanwhile, the
  // copy restarts (SQLite's rule), so the result is the state at one
  // commit. kInvalidArgument if dest_path exists; kNoSpace if the disk is
  // full, kUnavailable if it cannot be created or a step keeps failing (the
  // partial file is removed either way).
  // REQUIRES: pages_per_step > 0.
  Status BackupTo(const std::string& dest_path, int pages_per_step = 256, int pause_ms = 5);

  // Runs PRAGMA integrity_check: "ok", or the problems found, one a line.
  // kInternal if the check cannot run (e.g. the file is not a database).
  Result<std::string> IntegrityCheck();

  // Diagnostics and tests. TraceStatements calls fn with the SQL text (as
  // prepared, parameters unbound) of every statement this connection runs
  // from now on, on the running thread; an empty fn stops the trace.
  // QueryPlan returns EXPLAIN QUERY PLAN's lines for one statement, e.g.
  // "SEARCH notes USING PRIMARY KEY (site=? AND path=?)" or "SCAN notes".
  void TraceStatements(std::function<void(std::string_view sql)> fn);
  Result<std::vector<std::string>> QueryPlan(std::string_view sql);

 private:
  // Transactions go through sqlite::Transaction (transaction.h) only.
  friend class Transaction;
  friend struct Fts5Access;
  Status Begin() { return Exec("BEGIN IMMEDIATE"); }
  Status Commit() { return Exec("COMMIT"); }
  void Rollback();  // best effort; never fails loudly
  bool InTransaction() const;  // a BEGIN is open (not autocommit)

  explicit Db(sqlite3* db);
  sqlite3* db_;
  std::shared_ptr<StmtCache> cache_;
  std::function<void(std::string_view)> trace_;
};

// True if another process has the database at db_path open (SQLite holds a
// read lock on the "-shm" file's DMS byte for as long as a WAL-mode
// connection is open). Connections of this process are not seen. False if
// there is no -shm file. Never fails: an unreadable -shm counts as not open.
bool OpenedByAnotherProcess(const std::string& db_path);

}  // namespace folio::sqlite
