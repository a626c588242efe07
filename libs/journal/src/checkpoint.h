// The checkpoint file: a snapshot of the index and of each segment's
// bookkeeping, covering the journal up to a position (README.md
// "Checkpoint file"). Pure codec; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "journal_impl.h"

namespace folio::journal::internal {

struct SegmentMeta {
  uint32_t id = 0;
  std::vector<uint64_t> commit_keys;
  std::vector<std::string> tombstones;
};

struct CheckpointData {
  Position pos;  // every record before it is reflected; the scan resumes here
  uint64_t next_seq = 1, next_blob_id = 1;
  std::vector<SegmentMeta> segments;
  std::vector<EntryPtr> entries;
};

std::string EncodeCheckpoint(const CheckpointData& d);
// kInvalidArgument for a bad magic, version, CRC, or any inconsistency.
Status DecodeCheckpoint(std::string_view bytes, CheckpointData* out);

}  // namespace folio::journal::internal
