// The state behind BlobWriter and BlobReader (blob.h). Owned by the handle;
// used by one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "journal_impl.h"

namespace folio::journal::internal {

struct WriterState {
  enum class Phase { kOpen, kCommitted, kAborted };
  ~WriterState();
  // Blocks written so far are released to compaction; the buffer goes back.
  void Finish(Phase phase);

  std::shared_ptr<JournalImpl> journal;
  std::string key, meta;
  uint64_t blob_id = 0;
  uint64_t size = 0;
  std::string buf;  // the unwritten tail, < block_bytes
  std::vector<BlockRef> blocks;
  std::vector<SegmentPtr> pins;  // segments holding our blocks (pending_writers)
  Phase phase = Phase::kOpen;
};

struct ReaderState {
  EntryPtr entry;
  std::vector<SegmentPtr> segments;  // every segment the entry references
  std::vector<uint64_t> starts;      // blob offset of each part (blocks, then the inline tail)
  size_t cached = SIZE_MAX;          // part held in cache_record
  std::string cache_record;
  std::string_view cache_data;

  const Segment* FindSegment(uint32_t id) const;
  Status LoadPart(size_t part);
};

}  // namespace folio::journal::internal
