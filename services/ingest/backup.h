// Backups of ingest's database (<data>/ingest.db) in folio-storage.
//
//   folio-ingest backup [--storage URL] [--backup-keep N] [--data DIR]
//       takes an online, consistent snapshot (SQLite Online Backup API on its
//       own connection: ingest may keep running and writing), uploads it
//       streamed to PUT <storage>/objects/backups/ingest/<UTC time>-<sha256
//       prefix>.db?keep=N and prints the object name (one line, stdout).
//   folio-ingest restore [NAME] [--storage URL] [--data DIR]
//       downloads the newest backup (or NAME, with or without the
//       "backups/ingest/" folder), checks its SHA-256 prefix and PRAGMA
//       integrity_check, keeps the current database as
//       ingest.db.before-restore-<time> (with its -wal) and renames the
//       backup into place. Refused while a process has ingest.db open:
//       stop ingest first. Prints the restored name (one line, stdout).
//   folio-ingest --backup-every 6h --backup-keep 7   (serving)
//       BackupSchedule runs Backup on its own thread every interval.
//
// Backups are plain .db files, not gzip: libs/core's gzip works on whole
// in-memory buffers, and a backup is streamed from disk and back; a
// plain file is also what integrity_check and sqlite3 open directly.
// Exit codes of the commands: 0 done, 1 failed (one line on stderr), 2 usage.
// Threading: Backup and Restore block (disk, HTTP); call them off event loops.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "folio/core/config.h"
#include "folio/core/status.h"
#include "folio/metrics/metrics.h"

namespace folio::ingest {

inline constexpr const char* kBackupFolder = "backups/ingest/";

// Backs up <data_dir>/ingest.db to storage_url, keeping the newest `keep`
// backups there. On success *name_out is the object name (with folder).
// kNotFound if there is no database; kUnavailable if storage cannot be
// reached or refuses the upload; kInternal if the size stored differs.
// The temp file in data_dir is removed in every case. REQUIRES: keep >= 1.
Status Backup(const std::string& data_dir, const std::string& storage_url, int keep, std::string* name_out);

// Restores the backup `name` ("" = the newest) into data_dir as described
// above; *restored_out is the object name. kNotFound if there is no such
// backup; kConflict if ingest.db is open in another process; kInternal if
// the download is damaged (hash or integrity_check); the current database
// is untouched on every failure.
Status Restore(const std::string& data_dir, const std::string& storage_url, const std::string& name,
               std::string* restored_out);

// `folio-ingest backup|restore`. REQUIRES: flags parsed, positional()[0]
// is "backup" or "restore"; flags "data", "storage", "backup-keep" declared.
int RunBackupCommand(const Flags& flags);
int RunRestoreCommand(const Flags& flags);

// Runs Backup every interval_ms on its own thread and logs each result; a
// failure is counted, logged and retried at the next tick. Counts
// folio_ingest_backups_total{result="ok"|"error"} in registry.
class BackupSchedule {
 public:
  BackupSchedule(std::string data_dir, std::string storage_url, int keep, int64_t interval_ms,
                 metrics::Registry* registry);
  ~BackupSchedule();  // Stop()
  void Start();
  void Stop();  // waits for a backup in progress to finish

 private:
  void Run();
  std::string data_dir_, storage_url_;
  int keep_;
  int64_t interval_ms_;
  metrics::Counter &ok_, &error_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace folio::ingest
