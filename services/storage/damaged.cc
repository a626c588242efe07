#include "damaged.h"

namespace folio::storage {

bool DamagedBlobs::Add(const std::string& key, uint64_t seq) {
  auto [it, inserted] = seq_of_.try_emplace(key, seq);
  if (!inserted) {
    if (it->second == seq) return false;
    it->second = seq;  // another version of a key already listed
    return true;
  }
  order_.push_back(key);
  while (seq_of_.size() > capacity_) {
    seq_of_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

bool DamagedBlobs::Contains(const std::string& key, uint64_t seq) const {
  auto it = seq_of_.find(key);
  return it != seq_of_.end() && it->second == seq;
}

}  // namespace folio::storage
