// Journal: an append-only, checksummed blob store in a directory of segment
// files on local disk (the storage engine under folio-storage). Format,
// durability and recovery rules: libs/journal/README.md.
//
// A blob is a key (1..max_key_bytes bytes), a small opaque meta string and
// bytes, split into blocks of block_bytes. It becomes visible only when its
// commit record is durable; overwrite replaces it atomically; Delete writes
// a durable tombstone. An in-memory index maps keys to block locations; it is
// rebuilt on Open from the last checkpoint plus a scan of the journal after
// it, truncating a torn tail. Commits share fdatasyncs (group commit).
//
// Ownership: Open returns the only owner. The Journal owns its files and, if
// Options::background, one maintenance thread (checkpoints, compaction).
// BlobWriter and BlobReader handles share internal state and may outlive it.
//
// Threading: every Journal method may be called from any thread concurrently
// (Put, Delete, Commit from many threads form shared batches; Get and List
// take a shared lock and never wait for a sync; Checkpoint and Compact run one
// at a time and block writers only while a batch is applied). The destructor
// must not race with other calls on the same Journal.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "folio/journal/blob.h"
#include "folio/journal/env.h"

namespace folio::journal {

struct Options {
  uint64_t segment_bytes = 64ull << 20;    // max size of a segment file (64 MiB); 64 KiB..1 GiB
  uint32_t block_bytes = 1u << 20;         // blob block size (1 MiB); 64..segment_bytes/4
  uint32_t max_key_bytes = 1024;           // 1..65535
  uint32_t max_meta_bytes = 4096;          // 0..65535
  uint64_t max_blob_bytes = 64ull << 30;   // 64 GiB
  uint64_t max_batch_bytes = 32ull << 20;  // group commit: bytes of records per batch (32 MiB)
  // Automatic checkpoint once this many bytes were appended since the last
  // one and at least checkpoint_ratio × the last checkpoint's size (keeps
  // their share of written bytes under 1/ratio).
  uint64_t checkpoint_bytes = 64ull << 20;  // 64 MiB
  uint32_t checkpoint_ratio = 50;           // 50
  // Compaction rewrites a sealed segment once garbage / size >= this.
  double compaction_garbage_ratio = 0.5;    // 50%
  // A maintenance thread runs automatic checkpoints and compaction. Off:
  // only explicit Checkpoint()/Compact() calls (and one at close) do.
  bool background = true;                   // on
  bool create_if_missing = true;            // on
  Env* env = nullptr;                       // nullptr = DefaultEnv()
};

// Counters since Open (monotonic unless noted). write_amplification =
// bytes_written / blob_bytes.
struct Stats {
  uint64_t fsyncs = 0;            // fdatasync/fsync calls: segments, checkpoints, directory
  uint64_t batches = 0;           // group commits (each one fdatasync)
  uint64_t batch_sync_us = 0;     // microseconds the group commits spent in their fdatasync
  uint64_t bytes_written = 0;     // every byte written: records, padding, checkpoints, copies
  uint64_t blob_bytes = 0;        // bytes of blobs committed by callers (not copies)
  uint64_t records = 0;           // records appended: blocks, commits, tombstones, copies
  uint64_t commits = 0;           // blobs committed by callers
  uint64_t deletes = 0;           // tombstones written by Delete
  uint64_t checkpoints = 0;       // checkpoint files written
  uint64_t checkpoint_bytes = 0;  // their bytes (included in bytes_written)
  uint64_t compactions = 0;       // segments compacted and removed
  uint64_t compaction_bytes = 0;  // bytes written by compaction copies (included above)
  uint64_t corrupt_records = 0;   // bad records skipped by the open scan or compaction
  uint64_t truncated_bytes = 0;   // torn tail cut off at open
  uint64_t scanned_bytes = 0;     // bytes read by the open scan
  bool checkpoint_loaded = false; // open used a checkpoint (false: full scan)
  // Gauges (current values).
  uint64_t live_blobs = 0;
  uint64_t live_bytes = 0;        // bytes of live records (blocks + commits)
  uint64_t disk_bytes = 0;        // sum of segment sizes
  uint64_t segments = 0;
  double write_amplification() const {
    return blob_bytes == 0 ? 0.0 : static_cast<double>(bytes_written) / static_cast<double>(blob_bytes);
  }
};

struct BlobInfo {
  std::string key;
  std::string meta;
  uint64_t size = 0;
  uint64_t seq = 0;
};

namespace internal {
class JournalImpl;
}

class Journal {
 public:
  // Opens (or creates) the journal in `dir` and recovers it. Fails with
  // kInvalidArgument for bad options, kNotFound if missing and not
  // create_if_missing, kConflict if another Journal holds the directory,
  // kUnavailable on an I/O error.
  static Result<std::unique_ptr<Journal>> Open(const std::string& dir, Options options = {});
  // Stops maintenance, writes a checkpoint if anything changed since the
  // last one, releases the directory. Open writers fail from then on.
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Starts a streaming blob. kInvalidArgument for a bad key or meta,
  // kUnavailable after a disk error.
  Result<BlobWriter> BeginBlob(std::string_view key, std::string_view meta);
  // BeginBlob + Append(data) + Commit, without copying data. kNoSpace when
  // the disk is full (nothing kept; the next write is tried again for real).
  Status Put(std::string_view key, std::string_view meta, std::string_view data);
  // The current blob of key, or kNotFound.
  Result<BlobReader> Get(std::string_view key) const;
  // Writes a tombstone; durable on return. kNotFound (nothing written) if
  // the key is absent; kNoSpace (nothing written) if the disk is full.
  Status Delete(std::string_view key);
  // Live blobs whose key starts with prefix and sorts after `after` (""
  // = from the start), in key order, at most limit (1..100000).
  Result<std::vector<BlobInfo>> List(std::string_view prefix, size_t limit, std::string_view after = "") const;

  // Writes the index checkpoint now (temp + fdatasync + rename).
  Status Checkpoint();
  // Compacts every sealed segment over compaction_garbage_ratio: copies its
  // live blobs to the head, switches the index, writes a checkpoint, removes
  // the segment (its space is freed when the last reader closes it).
  Status Compact();

  Stats stats() const;
  const std::string& dir() const;
  // OK while the journal takes writes; after a write or sync failed in a
  // way that is sticky, the kUnavailable error every write now gets (until
  // reopened). A full disk never shows here: it is not sticky.
  Status WriteError() const;

 private:
  explicit Journal(std::shared_ptr<internal::JournalImpl> impl);
  std::shared_ptr<internal::JournalImpl> impl_;
};

}  // namespace folio::journal
