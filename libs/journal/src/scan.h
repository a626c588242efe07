// SegmentScanner: reads one segment file front to back and yields its valid
// records. A record is valid when its header parses, names this segment and
// its own offset, fits in the file, and its CRC matches. After an invalid one
// the scanner steps kAlign bytes at a time until a valid record starts again
// (resync). Owned and used by one thread (recovery).
#pragma once

#include <string>
#include <string_view>

#include "folio/journal/env.h"
#include "format.h"

namespace folio::journal::internal {

class SegmentScanner {
 public:
  // Scans [start, end) of `file`, segment `id`. REQUIRES: start % kAlign == 0.
  SegmentScanner(const File& file, uint32_t id, uint64_t start, uint64_t end);

  // The next valid record: header, offset, key and body (views valid until
  // the next call). False at the end or on an I/O error (see status()).
  bool Next(format::RecordHeader* h, uint64_t* pos, std::string_view* key, std::string_view* body);

  // End of the last valid record (start if none): the truncation point.
  uint64_t valid_end() const { return valid_end_; }
  // Invalid regions followed by a valid record (the trailing one is not
  // counted: it is a torn tail or garbage after the last record).
  uint64_t corrupt_regions() const { return corrupt_; }
  uint64_t bytes_read() const { return bytes_read_; }
  const Status& status() const { return status_; }

 private:
  // Makes [pos, pos + n) available in buf_; false past `end_` or on error.
  bool Load(uint64_t pos, uint64_t n);
  const char* At(uint64_t pos) const { return buf_.data() + (pos - buf_start_); }
  bool ValidAt(uint64_t pos, format::RecordHeader* h);

  const File& file_;
  const uint32_t id_;
  const uint64_t end_;
  uint64_t cursor_, valid_end_;
  bool in_bad_ = false;
  uint64_t corrupt_ = 0, bytes_read_ = 0;
  std::string buf_;
  uint64_t buf_start_ = 0;
  Status status_;
};

}  // namespace folio::journal::internal
