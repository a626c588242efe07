// Store (store.h): the outbox, bus messages committed but not yet
// acknowledged by JetStream (a push's rows are written by Apply,
// store_commit.cc).
#include "folio/core/time.h"
#include "store.h"

namespace folio::ingest {

Result<std::vector<OutboxMsg>> Store::PendingOutbox(size_t limit) {
  // A kPagePut publishes the page's record as it is now: a newer one if the
  // page changed since (a later row puts it again), none if it is gone (a
  // later row deletes it). Either way the bucket ends where the store is.
  auto q = db_->Prepare(
      "SELECT o.seq, o.kind, o.subject, o.payload, o.msg_id, p.record, p.record IS NOT NULL FROM outbox o "
      "LEFT JOIN pages p ON o.kind=4 AND p.site=o.page_site AND p.url=o.page_url ORDER BY o.seq LIMIT ?");
  if (!q.ok()) return q.status();
  q->Bind(1, static_cast<int64_t>(limit));
  std::vector<OutboxMsg> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    OutboxMsg m{q->Int(0), static_cast<int>(q->Int(1)), std::string(q->Text(2)), std::string(q->Blob(3)),
                std::string(q->Text(4))};
    if (m.kind == OutboxMsg::kPagePut && q->Int(6) != 0) {
      m.kind = OutboxMsg::kKvPut;
      m.payload = std::string(q->Blob(5));
    }
    out.push_back(std::move(m));
  }
  return out;
}

Status Store::AckOutbox(int64_t upto_seq) {
  auto q = db_->Prepare("DELETE FROM outbox WHERE seq <= ?");
  if (!q.ok()) return q.status();
  return q->Bind(1, upto_seq).Run();
}

Result<int64_t> Store::OutboxSize() {
  auto q = db_->Prepare("SELECT count(*) FROM outbox");
  if (!q.ok()) return q.status();
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return q->Int(0);
}

Result<int64_t> Store::OutboxOldestMs() {
  // The oldest row is the first by seq (the primary key): one index probe.
  auto q = db_->Prepare("SELECT created_ms FROM outbox ORDER BY seq LIMIT 1");
  if (!q.ok()) return q.status();
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return *row ? q->Int(0) : int64_t{-1};
}

Status Store::InsertOutbox(const std::vector<OutboxMsg>& outbox) {
  auto q = db_->Prepare("INSERT INTO outbox(kind,subject,payload,msg_id,created_ms) VALUES(?,?,?,?,?)");
  if (!q.ok()) return q.status();
  const int64_t now_ms = NowUnixMs();
  for (const auto& m : outbox) {
    Status s = q->Bind(1, int64_t{m.kind}).Bind(2, m.subject).BindBlob(3, m.payload).Bind(4, m.msg_id)
                   .Bind(5, now_ms).Run();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace folio::ingest

namespace folio::ingest {

Status Store::AddFeedBytes(const std::string& site, int64_t bytes) {
  auto q = db_->Prepare(
      "INSERT INTO feed_bytes(site,bytes) VALUES(?,?) ON CONFLICT(site) DO UPDATE SET bytes=bytes+excluded.bytes");
  if (!q.ok()) return q.status();
  return q->Bind(1, site).Bind(2, bytes).Run();
}

Status Store::ResetFeedBytes(const std::string& site) {
  auto q = db_->Prepare("DELETE FROM feed_bytes WHERE site=?");
  if (!q.ok()) return q.status();
  return q->Bind(1, site).Run();
}

Result<std::vector<std::pair<std::string, int64_t>>> Store::FeedBytesOver(int64_t floor) {
  auto q = db_->Prepare("SELECT site, bytes FROM feed_bytes WHERE bytes>?");
  if (!q.ok()) return q.status();
  q->Bind(1, floor);
  std::vector<std::pair<std::string, int64_t>> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.emplace_back(std::string(q->Text(0)), q->Int(1));
  }
  return out;
}

Result<int64_t> Store::PageBytes(const std::string& site) {
  auto q = db_->Prepare("SELECT coalesce(sum(length(record)),0) FROM pages WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return q->Int(0);
}

}  // namespace folio::ingest
