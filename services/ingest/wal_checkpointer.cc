#include "wal_checkpointer.h"

#include <chrono>

#include "folio/core/log.h"
#include "folio/core/time.h"

namespace folio::ingest {

namespace {

// One row this connection rewrites after a complete checkpoint (Checkpoint).
constexpr std::string_view kRestartTable =
    "CREATE TABLE IF NOT EXISTS wal_restart(id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL)";

}  // namespace

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(const std::string& db_path, int64_t interval_ms) {
  auto db = sqlite::Db::Open(db_path);
  if (!db.ok()) return db.status();
  if (Status s = (*db)->Exec(kRestartTable); !s.ok()) return s;
  return std::unique_ptr<WalCheckpointer>(new WalCheckpointer(std::move(*db), interval_ms));
}

WalCheckpointer::WalCheckpointer(std::unique_ptr<sqlite::Db> db, int64_t interval_ms)
    : db_(std::move(db)), interval_ms_(interval_ms), thread_([this] { Run(); }) {}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

// A PASSIVE checkpoint; when it copied the whole log, one tiny write here,
// so that this connection, not the writer's next commit, restarts the log
// from its start and pays the fdatasync of its new header (SQLite does it
// when a log is reused, synchronous=NORMAL).
Status WalCheckpointer::Checkpoint() {
  auto q = db_->Prepare("PRAGMA wal_checkpoint(PASSIVE)");
  if (!q.ok()) return q.status();
  auto row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::Ok();
  const bool busy = q->Int(0) != 0;
  const int64_t log = q->Int(1), done = q->Int(2);
  if (busy || log <= 0 || done != log) return Status::Ok();
  auto w = db_->Prepare("INSERT OR REPLACE INTO wal_restart(id, at_ms) VALUES(1, ?)");
  if (!w.ok()) return w.status();
  w->Bind(1, NowUnixMs());
  auto step = w->Step();
  return step.ok() ? Status::Ok() : step.status();
}

uint64_t WalCheckpointer::checkpoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoints_;
}

void WalCheckpointer::Run() {
  bool failing = false;  // log a failure streak once
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stop_; })) {
    lock.unlock();
    Status s = Checkpoint();
    if (!s.ok() && !failing) log::Warn("checkpoint failed; retried next time", {{"error", s.message()}});
    failing = !s.ok();
    lock.lock();
    if (s.ok()) ++checkpoints_;
  }
}

}  // namespace folio::ingest
