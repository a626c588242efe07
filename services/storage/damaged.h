// DamagedBlobs: the blob versions folio-storage found damaged on disk (a
// block failed its checksum while being read), so that later GET and HEAD
// answer an error status up front instead of a 200 that is cut short, and a
// PUT of the same content may replace the damaged copy. Each version is
// reported once (Add returns true the first time).
//
// Bounded: past `capacity` entries the oldest is forgotten (its next read
// finds the damage again). A key's entry names one version (its seq): a new
// version of the key is not damaged until proven so.
//
// Threading: none; folio-storage uses it on its loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace folio::storage {

class DamagedBlobs {
 public:
  explicit DamagedBlobs(size_t capacity = 10'000) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Records that version `seq` of `key` is damaged. True if it was not known.
  bool Add(const std::string& key, uint64_t seq);
  bool Contains(const std::string& key, uint64_t seq) const;
  size_t size() const { return seq_of_.size(); }

 private:
  size_t capacity_;
  std::unordered_map<std::string, uint64_t> seq_of_;
  std::deque<std::string> order_;  // keys, oldest first (a key at most once)
};

}  // namespace folio::storage
