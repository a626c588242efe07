// Env: the journal's only door to the disk, small enough that tests can wrap
// it and inject faults (short writes, failed syncs, torn files), like
// LevelDB's include/leveldb/env.h and db/fault_injection_test.cc.
//
// Ownership: DefaultEnv() is a process-wide singleton, never freed. A File is
// owned by whoever opened it (the journal keeps segment files in shared_ptrs
// so readers can outlive a segment's retirement); closing happens in its
// destructor. A wrapping Env must outlive every journal that uses it.
//
// Threading: every method of Env and File may be called from any thread
// concurrently; ReadAt is a positional read (pread) and never moves a cursor.
// Concurrent WriteAt calls on one File must not overlap (the journal writes
// under its append lock).
//
// Errors: kNoSpace when the disk (or a quota) is full (ENOSPC, EDQUOT),
// otherwise kUnavailable, with the path and strerror; a short write is an
// error (the bytes before it may be in the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio::journal {

class File {
 public:
  virtual ~File();
  const std::string& path() const { return path_; }

  // Writes the concatenation of `parts` at `offset` (pwritev), all or error.
  virtual Status WriteAt(uint64_t offset, std::span<const std::string_view> parts) = 0;
  // Reads up to n bytes at offset into out; *got < n only at end of file.
  virtual Status ReadAt(uint64_t offset, size_t n, char* out, size_t* got) const = 0;
  // fdatasync: data and the metadata needed to read it (the size) are durable.
  virtual Status Sync() = 0;
  virtual Status Truncate(uint64_t size) = 0;
  virtual Result<uint64_t> Size() const = 0;

 protected:
  explicit File(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

// Held for as long as the journal directory is open (flock, LOCK_EX).
class DirLock {
 public:
  virtual ~DirLock();
};

class Env {
 public:
  virtual ~Env();
  // Opens path read-write; creates it (mode 0644) if `create`. A missing file
  // without `create` is kNotFound.
  virtual Result<std::unique_ptr<File>> OpenFile(const std::string& path, bool create) = 0;
  // Reads a whole file (checkpoints). kNotFound if it does not exist.
  virtual Status ReadFile(const std::string& path, std::string* out) = 0;
  // Creates the directory (and parents); OK if it exists.
  virtual Status CreateDir(const std::string& path) = 0;
  // Names (not paths) of the entries of dir, unsorted, without "." and "..".
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  virtual Status Remove(const std::string& path) = 0;
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // fsync of the directory itself: makes creates, renames, removes durable.
  virtual Status SyncDir(const std::string& dir) = 0;
  // Exclusive, non-blocking lock on path (created if missing); kConflict if
  // another process (or another open journal) holds it.
  virtual Result<std::unique_ptr<DirLock>> LockFile(const std::string& path) = 0;
};

// The real thing: POSIX calls on the local file system.
Env* DefaultEnv();

}  // namespace folio::journal
