// File-system helpers shared by services (libs/journal keeps its own behind
// its Env, where tests inject faults). Thread-safe; they block on the disk:
// call them off event loops.
#pragma once

#include <memory>
#include <string>

#include "folio/core/status.h"

namespace folio {

// fsync of the directory `dir` itself, so that the creates, renames and
// removes done in it survive a crash. kUnavailable (naming dir and the
// error) if it cannot be opened or synced.
Status SyncDirectory(const std::string& dir);

// An exclusive advisory lock (flock) on a file, held while this object
// lives; the kernel drops it when the process dies, even by SIGKILL. For
// "one process per data directory".
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {}
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// Creates `path` if missing and locks it without waiting. kConflict
// ("... is locked by another process: ...") if another process holds it;
// kUnavailable if it cannot be created.
Result<std::unique_ptr<FileLock>> LockFile(const std::string& path);

}  // namespace folio
