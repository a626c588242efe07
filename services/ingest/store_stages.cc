// Store's staged imports (store.h): the stage_batches table. Each row
// carries when its batch was put (updated_ms); a stage's last use is its
// newest batch's, so dropping stale stages is one DELETE over the age index
// that never splits a stage. A put writes its own row only and reads the
// bodies' sizes from the record headers (length(body)): the bytes and
// updated_ms columns sit after the body, and reading or rewriting them would
// walk every staged body's overflow pages, a cost that grew with the whole
// import on every batch (issue 26).
#include "folio/sqlite/transaction.h"
#include "store.h"

namespace folio::ingest {
namespace {

constexpr const char* kStageSchema = R"sql(
CREATE TABLE IF NOT EXISTS stage_batches(
  site TEXT NOT NULL, stage TEXT NOT NULL, batch INTEGER NOT NULL, body BLOB NOT NULL,
  bytes INTEGER NOT NULL, updated_ms INTEGER NOT NULL, PRIMARY KEY(site, stage, batch));
CREATE INDEX IF NOT EXISTS stage_batches_by_age ON stage_batches(updated_ms);
)sql";

Status StageFull(int64_t size, int64_t held, int64_t max_site_bytes) {
  return Status(Code::kTooLarge, "the staging area is full: this batch (" + std::to_string(size) + " bytes) and the " +
                                     std::to_string(held) + " bytes this site has staged exceed --stage-max-bytes (" +
                                     std::to_string(max_site_bytes) +
                                     " bytes); commit or wait out the stages first, or push in one request");
}

}  // namespace

Status Store::MigrateStages() { return db_->Exec(kStageSchema); }

Result<StageInfo> Store::PutStageBatch(const std::string& site, const std::string& stage, int64_t batch,
                                       std::string_view body, int64_t now_ms, int64_t max_site_bytes) {
  Result<StageInfo> info = PutStageBatchTransaction(site, stage, batch, body, now_ms, max_site_bytes);
  disk_.Observe(info.ok() ? Status::Ok() : info.status());
  return info;
}

Result<StageInfo> Store::PutStageBatchTransaction(const std::string& site, const std::string& stage, int64_t batch,
                                                  std::string_view body, int64_t now_ms, int64_t max_site_bytes) {
  auto tx = sqlite::Transaction::Begin(db_.get());
  if (!tx.ok()) return tx.status();
  // The site's staged bytes without the batch this one replaces.
  auto others = db_->Prepare(
      "SELECT coalesce(sum(length(body)), 0) FROM stage_batches WHERE site=? AND NOT (stage=? AND batch=?)");
  if (!others.ok()) return others.status();
  others->Bind(1, site).Bind(2, stage).Bind(3, batch);
  if (auto row = others->Step(); !row.ok()) return row.status();
  const int64_t held = others->Int(0);
  others->Reset();
  const int64_t size = static_cast<int64_t>(body.size());
  if (held + size > max_site_bytes) return StageFull(size, held, max_site_bytes);
  auto put = db_->Prepare(
      "INSERT OR REPLACE INTO stage_batches(site,stage,batch,body,bytes,updated_ms) VALUES(?,?,?,?,?,?)");
  if (!put.ok()) return put.status();
  Status s = put->Bind(1, site).Bind(2, stage).Bind(3, batch).BindBlob(4, body).Bind(5, size).Bind(6, now_ms).Run();
  if (!s.ok()) return s;
  auto count = db_->Prepare("SELECT count(*), coalesce(sum(length(body)), 0) FROM stage_batches WHERE site=? AND stage=?");
  if (!count.ok()) return count.status();
  count->Bind(1, site).Bind(2, stage);
  if (auto r = count->Step(); !r.ok()) return r.status();
  StageInfo info{count->Int(0), count->Int(1)};
  count->Reset();
  if (s = tx->Commit(); !s.ok()) return s;
  return info;
}

Result<std::vector<std::string>> Store::LoadStage(const std::string& site, const std::string& stage) {
  auto q = db_->Prepare("SELECT body FROM stage_batches WHERE site=? AND stage=? ORDER BY batch");
  if (!q.ok()) return q.status();
  q->Bind(1, site).Bind(2, stage);
  std::vector<std::string> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.emplace_back(q->Blob(0));
  }
  return out;
}

Status Store::DropStageRows(const std::string& site, const std::string& stage) {
  auto del = db_->Prepare("DELETE FROM stage_batches WHERE site=? AND stage=?");
  if (!del.ok()) return del.status();
  return del->Bind(1, site).Bind(2, stage).Run();
}

Status Store::DropStage(const std::string& site, const std::string& stage) {
  auto tx = sqlite::Transaction::Begin(db_.get());
  if (!tx.ok()) return tx.status();
  if (Status s = DropStageRows(site, stage); !s.ok()) return s;
  return tx->Commit();
}

Result<int64_t> Store::DropStaleStages(int64_t cutoff_ms) {
  // A stage goes when none of its batches was put at or after the cutoff.
  auto del = db_->Prepare(
      "DELETE FROM stage_batches WHERE updated_ms < ?1 AND (site, stage) NOT IN "
      "(SELECT site, stage FROM stage_batches WHERE updated_ms >= ?1)");
  if (!del.ok()) return del.status();
  if (Status s = del->Bind(1, cutoff_ms).Run(); !s.ok()) return s;
  return static_cast<int64_t>(db_->Changes());
}

Result<int64_t> Store::StagedBytes() {
  auto q = db_->Prepare("SELECT coalesce(sum(length(body)), 0) FROM stage_batches");
  if (!q.ok()) return q.status();
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return q->Int(0);
}

}  // namespace folio::ingest
