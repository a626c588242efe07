// WalCheckpointer: checkpoints ingest.db's write-ahead log every interval
// from a thread and a SQLite connection of its own, so the checkpoint's
// fdatasyncs (one of the log, one of the database: 1-20 ms on a shared
// disk) never stall the writer thread. The writer used to checkpoint in its
// one-second round, and a push that arrived meanwhile waited for it: about
// one push a second under a steady stream, the propagation tail (issue 26).
// A PASSIVE checkpoint runs beside the writer in WAL mode (it copies the
// frames committed so far and never waits for a lock). After a checkpoint
// that copied the whole log it rewrites one row of its own table
// (wal_restart), so that the log's restart, and the fdatasync of its new
// header that SQLite does then, happen here and not in the writer's next
// commit (a push would collide only if it began in that moment; SQLite's
// busy timeout makes it wait). SQLite's own
// checkpoint inside a commit (wal_autocheckpoint, Store::kWalPages) stays
// the backstop should this one fall behind.
//
// Ownership: owns its thread and connection. Threads: construct and destroy
// on one thread (main); the destructor stops and joins the thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "folio/core/status.h"
#include "folio/sqlite/db.h"

namespace folio::ingest {

class WalCheckpointer {
 public:
  // Opens a connection to `db_path` (the writer's database, already in WAL
  // mode) and checkpoints every `interval_ms` until destroyed. kUnavailable
  // if the database cannot be opened.
  static Result<std::unique_ptr<WalCheckpointer>> Start(const std::string& db_path, int64_t interval_ms);
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Checkpoints completed so far (tests).
  uint64_t checkpoints() const;

 private:
  WalCheckpointer(std::unique_ptr<sqlite::Db> db, int64_t interval_ms);
  void Run();
  Status Checkpoint();

  std::unique_ptr<sqlite::Db> db_;  // used by the thread only
  const int64_t interval_ms_;
  mutable std::mutex mu_;
  std::condition_variable wake_;  // stop
  bool stop_ = false;
  uint64_t checkpoints_ = 0;
  std::thread thread_;
};

}  // namespace folio::ingest
