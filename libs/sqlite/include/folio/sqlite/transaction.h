// Transaction: the one way to write several statements atomically through
// a sqlite::Db (STYLE.md: "SQLite transactions are one RAII guard").
//
//   auto tx = sqlite::Transaction::Begin(db);   // BEGIN IMMEDIATE
//   if (!tx.ok()) return tx.status();
//   if (Status s = Write(db); !s.ok()) return s;  // tx's destructor rolls back
//   return tx->Commit();                          // or rolls back and says why
//
// Ownership: a Transaction borrows its Db, which must outlive it; it owns the
// open transaction until Commit, Rollback or its destruction (which rolls
// back what was not committed). Movable, not copyable; a moved-from guard
// does nothing.
// Threading: the Db's rules (one thread at a time): begin, write, commit and
// destroy on the thread that uses the Db.
#pragma once

#include "folio/core/status.h"
#include "folio/sqlite/db.h"

namespace folio::sqlite {

class Transaction {
 public:
  // Starts a write transaction (BEGIN IMMEDIATE: takes the database's write
  // lock now, so a later statement cannot fail on a lock another connection
  // took first). kInvalidArgument if db already has a transaction open (the
  // open one is left as it was: transactions do not nest); otherwise the
  // BEGIN's error (kInternal, e.g. busy past the 5 s timeout; kNoSpace).
  // REQUIRES: db != nullptr and outlives the Transaction.
  [[nodiscard]] static Result<Transaction> Begin(Db* db);

  Transaction(Transaction&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  // Rolls back unless committed or rolled back already.
  ~Transaction() { Rollback(); }

  // Makes the transaction's writes durable and visible. On failure the
  // transaction is rolled back (nothing of it stays) and COMMIT's error is
  // returned with its code (kNoSpace for a full disk, kInternal otherwise).
  // kInvalidArgument if this guard already committed or rolled back.
  [[nodiscard]] Status Commit();
  // Undoes the transaction's writes now; best effort, never fails loudly.
  // Does nothing once committed or rolled back.
  void Rollback();

  // True until Commit or Rollback.
  bool active() const { return db_ != nullptr; }

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_;  // null once finished
};

}  // namespace folio::sqlite
