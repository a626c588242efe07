// JournalImpl: the state behind Journal, BlobWriter and BlobReader.
//
// Locks, in acquisition order (never take an earlier one while holding a
// later one): compact_mu_ (one compaction at a time) → checkpoint_mu_ (one
// checkpoint at a time) → append_mu_ (the write position: every byte written
// to a segment) → index_mu_ (shared_mutex: index_, segments_, per-segment
// bookkeeping, applied_). commit_mu_ (the group-commit queue), error_mu_,
// pool_mu_ and maint_mu_ are leaves: nothing else is taken while they are
// held, and no I/O happens under them.
// Readers take index_mu_ shared for a lookup only; reads of segment files
// happen without locks (pread on shared_ptr-owned files).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "folio/journal/journal.h"
#include "format.h"

namespace folio::journal::internal {

using format::BlockRef;

struct Position {
  uint32_t segment = 0;
  uint64_t offset = 0;
  auto operator<=>(const Position&) const = default;
};

struct Segment {
  Segment(uint32_t id_in, std::unique_ptr<File> file_in, uint64_t size_in)
      : id(id_in), file(std::move(file_in)), size(size_in) {}
  const uint32_t id;
  const std::unique_ptr<File> file;   // closed when the last owner (index or reader) lets go
  std::atomic<uint64_t> size;         // bytes appended; final once sealed
  std::atomic<bool> sealed{false};    // no longer the head (set under append_mu_)
  std::atomic<int> pending_writers{0};  // uncommitted writers with blocks here: not compactable
  // GUARDED_BY(index_mu_):
  uint64_t live_bytes = 0;                   // bytes of records the index references
  std::unordered_set<uint64_t> commit_keys;  // KeyHash of every commit record here, live or not
  std::vector<std::string> tombstones;       // keys of tombstone records here
};
using SegmentPtr = std::shared_ptr<Segment>;

// One committed blob: immutable once in the index; shared with readers.
struct BlobEntry {
  std::string key, meta;
  uint64_t seq = 0, blob_id = 0, size = 0;
  uint32_t commit_segment = 0, commit_offset = 0, commit_size = 0;
  uint32_t inline_offset = 0;  // of the inline tail within the commit record
  uint32_t inline_len = 0;
  std::vector<BlockRef> blocks;
  size_t parts() const { return blocks.size() + (inline_len > 0 ? 1 : 0); }
};
using EntryPtr = std::shared_ptr<const BlobEntry>;

// Stable 64-bit key hash (persisted in checkpoints): FNV-1a + fmix64.
uint64_t KeyHash(std::string_view key);

// One record for the group commit. Views are owned by the submitter, who
// waits in Submit until the batch is done.
struct CommitOp {
  enum class Kind { kCommit, kDelete, kCopy, kCopyTombstone };
  Kind kind = Kind::kCommit;
  std::string_view key, meta, inline_data;
  uint64_t blob_id = 0, size = 0;
  std::vector<BlockRef> blocks;
  EntryPtr expect;   // kCopy: written only while the index holds exactly this entry
  uint64_t seq = 0;  // kCopy: the copied version keeps its seq
  Status status;     // out: per-op result (kNotFound for a delete of nothing)
  bool written = false;
};

struct PendingRecord;  // group_commit.cc

struct CommitRequest {
  std::span<CommitOp> ops;
  Status status;
  bool done = false;
  std::condition_variable cv;
};

// Reads part `part` of e (a block, or the inline tail when part ==
// e.blocks.size()) from seg into *record and checks it: CRC, type, position,
// owner. *data views the blob bytes inside *record.
Status ReadVerifiedPart(const Segment& seg, const BlobEntry& e, size_t part, std::string* record,
                        std::string_view* data);

class JournalImpl : public std::enable_shared_from_this<JournalImpl> {
 public:
  static Result<std::shared_ptr<JournalImpl>> Open(const std::string& dir, const Options& options);
  JournalImpl(std::string dir, const Options& options);
  ~JournalImpl();
  void Close();

  const std::string& dir() const { return dir_; }
  const Options& options() const { return options_; }
  Status CheckKeyMeta(std::string_view key, std::string_view meta) const;
  Status CheckWritable() const;

  uint64_t NewBlobId() { return next_blob_id_.fetch_add(1); }
  // Writes one block record (no sync) and pins its segment in *pins.
  Result<BlockRef> AppendBlock(uint64_t blob_id, uint32_t index, std::string_view data,
                               std::vector<SegmentPtr>* pins);
  static void ReleasePins(std::vector<SegmentPtr>* pins);
  // Group commit: queues ops, returns once their batch is durable and applied.
  Status Submit(std::span<CommitOp> ops);

  Status Put(std::string_view key, std::string_view meta, std::string_view data);
  Status Delete(std::string_view key);
  Result<EntryPtr> Lookup(std::string_view key, std::vector<SegmentPtr>* segments) const;
  Result<std::vector<BlobInfo>> List(std::string_view prefix, size_t limit, std::string_view after) const;
  Status Checkpoint();
  Status Compact();
  Stats stats() const;

  std::string TakeBuffer();  // a block-sized buffer from the freelist
  void ReturnBuffer(std::string buf);

 private:
  Status Recover();
  Status LoadCheckpoint(const std::map<uint32_t, SegmentPtr>& on_disk, Position* start,
                        std::vector<uint32_t>* retired);
  Status ScanTail(Position start);
  void ResetRecoveredState();
  void AccountLocked(const BlobEntry& e, int64_t sign);
  // Starts a new segment (append_mu_ held). kNoSpace if the disk is full
  // (nothing changed: the old segment stays the head); any other failure is
  // made sticky and returned as the sticky error.
  Status RollLocked();
  // Where a write began in a segment.
  struct Cut {
    SegmentPtr segment;
    uint64_t offset;
  };
  // A write under append_mu_ failed with `why`. A full disk (kNoSpace) is
  // undone: each segment in cuts is truncated back to its offset and synced,
  // the write position returns to cuts.back() (the head), and kNoSpace is
  // returned; the journal stays writable. Anything else (or a failed undo)
  // becomes the sticky error, which is returned.
  Status UndoWriteLocked(std::span<const Cut> cuts, const Status& why);
  Status WriteBatch(std::span<CommitRequest* const> batch);
  std::vector<PendingRecord> DecideBatch(std::span<CommitRequest* const> batch);
  static void PrepareBody(PendingRecord* p);
  Result<Position> AppendBatch(std::vector<PendingRecord>* recs, SegmentPtr* sync_target);
  void ApplyBatch(std::vector<PendingRecord>& recs, Position end);
  void SetError(const Status& s);
  Status Fail(const Status& s);  // SetError(s), then the sticky error
  void MaintenanceLoop();
  void WakeMaintenance();
  bool CheckpointDue() const;
  bool CompactionDue() const;
  Status CopyLiveEntries(const std::vector<EntryPtr>& live);
  Status CopyTombstones(const std::vector<SegmentPtr>& victims);
  Status Retire(const std::vector<SegmentPtr>& victims);

  const std::string dir_;
  const Options options_;
  Env* const env_;
  std::unique_ptr<DirLock> lock_;

  std::mutex commit_mu_;
  std::deque<CommitRequest*> queue_;  // GUARDED_BY(commit_mu_)

  std::mutex compact_mu_, checkpoint_mu_;

  std::mutex append_mu_;
  SegmentPtr active_;        // GUARDED_BY(append_mu_)
  uint64_t append_pos_ = 0;  // GUARDED_BY(append_mu_)
  uint32_t next_segment_id_ = 1;  // GUARDED_BY(append_mu_)
  bool closed_ = false;      // GUARDED_BY(append_mu_): nothing is written once set

  mutable std::shared_mutex index_mu_;
  std::map<std::string, EntryPtr, std::less<>> index_;  // GUARDED_BY(index_mu_)
  std::map<uint32_t, SegmentPtr> segments_;             // GUARDED_BY(index_mu_)
  Position applied_;                                     // GUARDED_BY(index_mu_): end of the last applied batch
  std::atomic<uint64_t> changes_{0};                     // records applied + segments retired since the last checkpoint

  std::atomic<uint64_t> next_seq_{1}, next_blob_id_{1};
  std::atomic<bool> failed_{false};
  mutable std::mutex error_mu_;
  Status error_;  // GUARDED_BY(error_mu_): sticky

  std::mutex pool_mu_;
  std::vector<std::string> pool_;  // GUARDED_BY(pool_mu_)

  std::mutex maint_mu_;
  std::condition_variable maint_cv_;
  bool maint_stop_ = false, maint_wake_ = false;  // GUARDED_BY(maint_mu_)
  std::thread maint_;

  // Counters (Stats).
  std::atomic<uint64_t> fsyncs_{0}, batches_{0}, batch_sync_us_{0}, bytes_written_{0}, blob_bytes_{0}, records_{0},
      commits_{0}, deletes_{0}, checkpoints_{0}, checkpoint_bytes_{0}, compactions_{0},
      compaction_bytes_{0}, corrupt_records_{0}, truncated_bytes_{0}, scanned_bytes_{0};
  std::atomic<bool> checkpoint_loaded_{false};
  std::atomic<uint64_t> appended_{0};           // record bytes appended since open
  std::atomic<uint64_t> appended_at_ckpt_{0};   // appended_ when the last checkpoint was snapshot
  std::atomic<uint64_t> last_ckpt_size_{0};
};

}  // namespace folio::journal::internal
