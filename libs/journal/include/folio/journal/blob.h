// BlobWriter and BlobReader: the handles Journal::BeginBlob and Journal::Get
// return (journal.h).
//
// BlobWriter streams one blob into the journal: Append any number of times,
// then Commit (durable on return) or Abort. Until Commit returns OK nobody
// sees the blob, not even after a restart; a writer destroyed without Commit
// aborts. It owns its unwritten tail (< one block) and keeps the journal's
// state alive (calls after the Journal is destroyed fail with kUnavailable).
//
// BlobReader is a snapshot of one committed blob: key, size, meta and where
// its blocks lie. ReadAt preads only the blocks it needs and checks each
// block's CRC-32C before copying a byte out; a mismatch is an error, never
// wrong bytes. It keeps the segment files it reads open (shared ownership),
// so it stays valid across overwrite, delete, compaction and even after the
// Journal is destroyed.
//
// Threading: each handle is used by one thread at a time (not synchronised);
// different handles may be used from different threads concurrently. Both
// are movable, not copyable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "folio/core/status.h"

namespace folio::journal {

namespace internal {
struct WriterState;
struct ReaderState;
}  // namespace internal

class BlobWriter {
 public:
  BlobWriter(BlobWriter&&) noexcept;
  BlobWriter& operator=(BlobWriter&&) noexcept;
  ~BlobWriter();  // aborts unless committed

  // Adds bytes at the end of the blob. Full blocks are written to the journal
  // at once (not synced); the rest is buffered. Fails with kTooLarge past
  // Options::max_blob_bytes, kNoSpace when the disk is full (the failed
  // write is undone and the journal stays writable; abort this writer),
  // kUnavailable on any other disk error (sticky: the journal refuses writes
  // until reopened), kInvalidArgument after Commit/Abort or on a moved-from
  // writer.
  Status Append(std::string_view data);
  // Writes the commit record and returns after it is durable (group commit:
  // one fdatasync may cover many writers). On OK the blob replaces any blob
  // of the same key atomically. On error the blob is not visible now; after a
  // crash it is either absent or complete (never partial). kNoSpace: the disk
  // is full; nothing of the commit was kept (not even after a crash) and the
  // journal stays writable.
  // REQUIRES: not yet committed or aborted.
  Status Commit();
  // Forgets the blob; blocks already written become garbage for compaction.
  void Abort();

  const std::string& key() const;
  uint64_t size() const;  // bytes appended so far

 private:
  friend class Journal;
  explicit BlobWriter(std::unique_ptr<internal::WriterState> s);
  std::unique_ptr<internal::WriterState> s_;
};

class BlobReader {
 public:
  BlobReader(BlobReader&&) noexcept;
  BlobReader& operator=(BlobReader&&) noexcept;
  ~BlobReader();

  const std::string& key() const;
  const std::string& meta() const;
  uint64_t size() const;
  // Commit sequence number: grows with every commit; a new version of a key
  // has a larger seq. Compaction keeps it.
  uint64_t seq() const;

  // Replaces *out with bytes [offset, offset + n) of the blob, fewer at its
  // end (offset == size gives ""). Fails with kInvalidArgument if
  // offset > size, kDataLoss ("checksum mismatch ...") if a block fails its
  // CRC or does not belong to this blob, kUnavailable on an I/O error. On
  // error *out is empty. The last verified block is cached, so sequential
  // reads in small pieces verify each block once.
  Status ReadAt(uint64_t offset, size_t n, std::string* out);
  // The whole blob (ReadAt(0, size())).
  Status ReadAll(std::string* out);

 private:
  friend class Journal;
  explicit BlobReader(std::unique_ptr<internal::ReaderState> s);
  std::unique_ptr<internal::ReaderState> s_;
};

}  // namespace folio::journal
