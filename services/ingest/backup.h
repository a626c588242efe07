// Backups of ingest's database (<data>/ingest.db) in folio-storage.
//
//   folio-ingest backup --storage URL --storage-token T [--backup-keep N] [--data DIR]
//       takes an online, consistent snapshot (SQLite Online Backup API on its
//       own connection: ingest may keep running and writing), uploads it
//       streamed to PUT <storage>/objects/backups/ingest/<signed name>?keep=N
//       (backup_key.h: the name carries the file's SHA-256 and an HMAC of it
//       under <data>/backup.key or --backup-key-file) and prints the object
//       name (one line, stdout).
//   folio-ingest restore [NAME] --storage URL --storage-token T [--data DIR]
//       NAME (with or without the "backups/ingest/" folder) must be signed by
//       this ingest's backup key, else it is refused before it is
//       downloaded. Without NAME: the newest backup whose name verifies, by
//       the (signed) time in its name; every object whose name does not
//       verify is skipped with a warning line naming it, and the one taken
//       is named on stderr with its age ("restoring <name>, taken <stamp>
//       (<N> hours ago)"), so that a rollback shows. The download must
//       hash to the SHA-256 its name signs and pass PRAGMA
//       integrity_check. Then the current database is kept as
//       ingest.db.before-restore-<time> (with its -wal) and the backup is
//       renamed into place. Refused while a process has ingest.db open: stop
//       ingest first. Prints the restored name (one line, stdout).
//   folio-ingest --backup-every 6h --backup-keep 7   (serving)
//       BackupSchedule runs Backup on its own thread every interval.
//
// Backups are plain .db files, not gzip: libs/core's gzip works on whole
// in-memory buffers, and a backup is streamed from disk and back; a
// plain file is also what integrity_check and sqlite3 open directly.
// Exit codes of the commands: 0 done, 1 failed (the reason: the last line
// on stderr), 2 usage.
// Threading: Backup and Restore block (disk, HTTP); call them off event loops.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "folio/core/config.h"
#include "folio/core/status.h"
#include "folio/metrics/metrics.h"
#include "backup_key.h"
#include "storage_client.h"

namespace folio::ingest {

inline constexpr const char* kBackupFolder = "backups/ingest/";

// Where backups come from and go: ingest's data folder, storage (with the
// write token), and the key that signs them.
struct BackupTarget {
  std::string data_dir;
  StorageAccess storage;
  BackupKey key;
};

// Backs up <data_dir>/ingest.db to storage, keeping the newest `keep`
// backups there. On success *name_out is the object name (with folder).
// kNotFound if there is no database; kUnavailable if storage cannot be
// reached or refuses the upload (or the token); kInternal if the size
// stored differs. The temp file in data_dir is removed in every case.
// REQUIRES: keep >= 1.
Status Backup(const BackupTarget& target, int keep, std::string* name_out);

// Restores the backup `name` ("" = the newest signed one) into data_dir as
// described above; *restored_out is the object name, *skipped the objects
// passed over because their names are not signed by the key.
// kPermissionDenied if `name` is not signed by the key, or (no name) no
// backup is; kNotFound if there is no such backup; kConflict if ingest.db
// is open in another process; kInternal if the download is not what its
// name signs or is damaged (hash, integrity_check). Every message names the
// backup; the current database is untouched on every failure.
Status Restore(const BackupTarget& target, const std::string& name, std::string* restored_out,
               std::vector<std::string>* skipped);

// --restore-from-storage (issue 23): if <data_dir>/ingest.db does not exist,
// restores the newest signed backup that verifies (an older one when the
// newest's download does not hash to its name or fails integrity_check),
// creating data_dir. The key: key_file ("" = <data_dir>/backup.key); when
// it does not exist and storage holds no backups, a new one is made there.
// OK with *restored_out "" when the database exists or storage holds no
// backups (logged: starting empty). kPermissionDenied if backups exist but
// there is no key, none is signed by the key, or none verifies: starting
// empty over them would hide the loss. kUnavailable if storage cannot be
// listed.
Status RestoreIfEmpty(const std::string& data_dir, const std::string& key_file, const StorageAccess& storage,
                      std::string* restored_out);

// `folio-ingest backup|restore`. REQUIRES: flags parsed, positional()[0]
// is "backup" or "restore"; flags "data", "storage", "storage-token"
// (AddSecretFlags), "backup-keep", "backup-key-file" declared.
int RunBackupCommand(const Flags& flags);
int RunRestoreCommand(const Flags& flags);

// The scheduled backups on ingest's /metrics, registered whether or not
// --backup-every is set (so the alert rules' names always exist):
//   folio_ingest_backups_total{result="ok"|"error"} (counter)
//   folio_ingest_backup_interval_seconds (gauge: --backup-every; 0 = off)
//   folio_ingest_backup_last_success_timestamp_seconds (gauge: Unix time of
//     the last scheduled backup stored; at start, that of the newest backup
//     in storage the key signed; 0 = none)
//   folio_ingest_backup_failing (gauge: 1 while the latest scheduled backup
//     failed; the next success clears it)
// Threading: the metrics are atomics, set from the schedule's thread.
struct BackupMetrics {
  BackupMetrics(metrics::Registry* registry, int64_t interval_ms);
  metrics::Counter &ok, &error;
  metrics::Gauge &last_success, &failing;
};

// Runs Backup every interval_ms on its own thread and logs each result; a
// failure is counted, logged and retried at the next tick. REQUIRES:
// `m` outlives the schedule.
class BackupSchedule {
 public:
  BackupSchedule(BackupTarget target, int keep, int64_t interval_ms, BackupMetrics* m);
  ~BackupSchedule();  // Stop()
  void Start();
  void Stop();  // waits for a backup in progress to finish

 private:
  void Run();
  const BackupTarget target_;
  int keep_;
  int64_t interval_ms_;
  BackupMetrics* m_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace folio::ingest
