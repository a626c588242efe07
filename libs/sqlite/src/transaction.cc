#include "folio/sqlite/transaction.h"

namespace folio::sqlite {

Result<Transaction> Transaction::Begin(Db* db) {
  // SQLite would refuse a nested BEGIN too, but as kInternal; this names the
  // misuse and never touches the open transaction.
  if (db->InTransaction()) return Status::Invalid("sqlite: a transaction is already open on this connection");
  if (Status s = db->Begin(); !s.ok()) return s;
  return Transaction(db);
}

Status Transaction::Commit() {
  if (db_ == nullptr) return Status::Invalid("sqlite: the transaction was already committed or rolled back");
  Status s = db_->Commit();
  // A failed COMMIT may leave the transaction open (SQLITE_BUSY, a deferred
  // constraint) or have ended it (SQLITE_FULL): roll back either way.
  if (!s.ok()) db_->Rollback();
  db_ = nullptr;
  return s;
}

void Transaction::Rollback() {
  if (db_ == nullptr) return;
  db_->Rollback();
  db_ = nullptr;
}

}  // namespace folio::sqlite
