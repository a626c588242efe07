// Free disk space, and DiskFull: the "disk is full" state a service keeps
// while it refuses writes (HTTP 507) until space returns, without a restart.
//
// A service reports each write's outcome (Observe: kNoSpace sets the state,
// success clears it) and, while the state is set, calls Recheck
// periodically (e.g. once a second): it clears the state once the file
// system holding the directory has at least resume_bytes available again.
// Transitions are logged once each.
//
// Threading: every method may be called from any thread (the state is an
// atomic). AvailableBytes and Recheck call statvfs: keep them off loops that
// must not wait on a file system.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "folio/core/status.h"

namespace folio {

// Bytes an unprivileged process may still write on the file system holding
// `path` (statvfs: f_bavail × f_frsize). kUnavailable if statvfs fails.
Result<uint64_t> AvailableBytes(const std::string& path);

// The file system holding `path`, from one statvfs: its size (f_blocks ×
// f_frsize) and what an unprivileged process may still write (as
// AvailableBytes). kUnavailable if statvfs fails.
struct DiskUsage {
  uint64_t size_bytes = 0;
  uint64_t available_bytes = 0;
};
Result<DiskUsage> DiskUsageOf(const std::string& path);

class DiskFull {
 public:
  // `dir` is the directory whose file system the writes go to; `what` names
  // it in logs ("journal", "database").
  explicit DiskFull(std::string dir, std::string what, uint64_t resume_bytes = kDefaultResumeBytes);
  DiskFull(const DiskFull&) = delete;
  DiskFull& operator=(const DiskFull&) = delete;

  // Writes resume once this much is free (1 MiB): a write that fails again
  // simply sets the state again.
  static constexpr uint64_t kDefaultResumeBytes = 1u << 20;

  bool full() const { return full_.load(std::memory_order_relaxed); }
  // After a write: kNoSpace marks the disk full; OK clears the mark; any
  // other status leaves it as it is.
  void Observe(const Status& s);
  // If marked full, clears the mark when at least resume_bytes are available
  // (a failing statvfs leaves it set). Returns full() afterwards.
  bool Recheck();

 private:
  void Set(bool full, const std::string& why);

  const std::string dir_;
  const std::string what_;
  const uint64_t resume_bytes_;
  std::atomic<bool> full_{false};
};

}  // namespace folio
