// A thin SQLite adapter: the only place sqlite3.h is included.
//
// Db owns one sqlite3 connection opened in WAL mode (synchronous=NORMAL,
// foreign keys on, 5 s busy timeout). Stmt owns one prepared statement.
// Threading: a Db and its Stmts belong to one thread at a time (SQLite's
// serialized mode makes misuse safe, not fast); ingest uses its writer thread.
// Every failure is a Status whose message names the statement's purpose.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "folio/core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace folio::sqlite {

class Stmt {
 public:
  Stmt() = default;
  Stmt(Stmt&& o) noexcept : db_(o.db_), st_(o.st_) { o.st_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  ~Stmt();

  // Bind by 1-based index. Text and blobs are copied by SQLite (TRANSIENT).
  Stmt& Bind(int i, std::string_view text);
  Stmt& BindBlob(int i, std::string_view bytes);
  Stmt& Bind(int i, int64_t v);
  Stmt& BindNull(int i);

  // Returns true while a row is available, false when done; errors as Status.
  Result<bool> Step();
  // Runs to completion, ignoring rows; resets for reuse.
  Status Run();
  void Reset();  // reset and clear bindings

  int64_t Int(int col) const;
  std::string_view Text(int col) const;  // valid until the next Step/Reset
  std::string_view Blob(int col) const;
  bool IsNull(int col) const;

 private:
  friend class Db;
  Stmt(sqlite3* db, sqlite3_stmt* st) : db_(db), st_(st) {}
  sqlite3* db_ = nullptr;
  sqlite3_stmt* st_ = nullptr;
};

class Db {
 public:
  // Opens (creating if needed) the database file. kUnavailable on failure.
  static Result<std::unique_ptr<Db>> Open(const std::string& path);
  ~Db();

  Status Exec(std::string_view sql);  // one or more statements, no rows
  Result<Stmt> Prepare(std::string_view sql);
  Status Begin() { return Exec("BEGIN IMMEDIATE"); }
  Status Commit() { return Exec("COMMIT"); }
  void Rollback();  // best effort; never fails loudly
  int64_t LastInsertRowId() const;
  int Changes() const;

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace folio::sqlite
