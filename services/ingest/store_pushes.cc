// Store (store.h): the push_keys table, committed pushes recorded under
// their Idempotency-Key (PushRecord), kept kPushRecordTtlMs and at most
// kPushRecordsPerSite per site.
#include "folio/sqlite/transaction.h"
#include "store.h"

namespace folio::ingest {

Status Store::InsertPushRecord(const std::string& site, const PushRecord& r) {
  auto put = db_->Prepare("INSERT INTO push_keys(site,key,body_sha256,reply,created_ms) VALUES(?,?,?,?,?)");
  if (!put.ok()) return put.status();
  Status s = put->Bind(1, site).Bind(2, r.key).Bind(3, r.body_sha256).Bind(4, r.reply).Bind(5, r.created_ms).Run();
  if (s.code() == Code::kConflict || (!s.ok() && s.message().find("UNIQUE") != std::string::npos)) {
    return Status(Code::kConflict, "Idempotency-Key " + r.key + " is already recorded");
  }
  if (!s.ok()) return s;
  auto old = db_->Prepare("DELETE FROM push_keys WHERE site=? AND created_ms<?");
  if (!old.ok()) return old.status();
  if (s = old->Bind(1, site).Bind(2, r.created_ms - kPushRecordTtlMs).Run(); !s.ok()) return s;
  auto extra = db_->Prepare(
      "DELETE FROM push_keys WHERE rowid IN (SELECT rowid FROM push_keys WHERE site=? "
      "ORDER BY created_ms DESC, rowid DESC LIMIT -1 OFFSET ?)");
  if (!extra.ok()) return extra.status();
  return extra->Bind(1, site).Bind(2, kPushRecordsPerSite).Run();
}

Result<std::optional<PushRecord>> Store::FindPush(const std::string& site, const std::string& key) {
  auto q = db_->Prepare("SELECT body_sha256, reply, created_ms FROM push_keys WHERE site=? AND key=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site).Bind(2, key);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<PushRecord>();
  return std::optional<PushRecord>(PushRecord{key, std::string(q->Text(0)), std::string(q->Text(1)), q->Int(2)});
}

Status Store::RecordPush(const std::string& site, const PushRecord& record) {
  auto tx = sqlite::Transaction::Begin(db_.get());
  if (!tx.ok()) return tx.status();
  if (Status s = InsertPushRecord(site, record); !s.ok()) return s;
  return tx->Commit();
}

}  // namespace folio::ingest
