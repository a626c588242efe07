#include "wal_checkpointer.h"

#include <chrono>

#include "folio/core/log.h"

namespace folio::ingest {

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(const std::string& db_path, int64_t interval_ms) {
  auto db = sqlite::Db::Open(db_path);
  if (!db.ok()) return db.status();
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

uint64_t WalCheckpointer::checkpoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoints_;
}

void WalCheckpointer::Run() {
  bool failing = false;  // log a failure streak once
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stop_; })) {
    lock.unlock();
    Status s = db_->Exec("PRAGMA wal_checkpoint(PASSIVE)");
    if (!s.ok() && !failing) log::Warn("checkpoint failed; retried next time", {{"error", s.message()}});
    failing = !s.ok();
    lock.lock();
    if (s.ok()) ++checkpoints_;
  }
}

}  // namespace folio::ingest
