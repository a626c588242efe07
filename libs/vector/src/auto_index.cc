#include <utility>

#include "folio/vector/index.h"

namespace folio::vector {

AutoIndex::AutoIndex(size_t dim, AutoOptions options)
    : dim_(dim), options_(options), exact_(std::make_unique<ExactIndex>(dim)) {}

size_t AutoIndex::size() const { return hnsw_ ? hnsw_->size() : exact_->size(); }

Status AutoIndex::Upsert(uint64_t id, std::span<const float> v) {
  if (hnsw_) return hnsw_->Upsert(id, v);
  Status s = exact_->Upsert(id, v);
  if (s.ok() && exact_->size() > options_.threshold) SwitchToHnsw();
  return s;
}

bool AutoIndex::Remove(uint64_t id) { return hnsw_ ? hnsw_->Remove(id) : exact_->Remove(id); }

std::vector<Hit> AutoIndex::Search(std::span<const float> query, size_t k) const {
  return hnsw_ ? hnsw_->Search(query, k) : exact_->Search(query, k);
}

void AutoIndex::ForEach(const std::function<void(uint64_t, std::span<const float>)>& fn) const {
  if (hnsw_) {
    hnsw_->ForEach(fn);
  } else {
    exact_->ForEach(fn);
  }
}

std::span<const float> AutoIndex::Get(uint64_t id) const { return hnsw_ ? hnsw_->Get(id) : exact_->Get(id); }

void AutoIndex::SwitchToHnsw() {
  auto h = std::make_unique<HnswIndex>(dim_, options_.hnsw);
  h->Build(exact_->ids(), exact_->data());
  hnsw_ = std::move(h);
  exact_.reset();
}

void AutoIndex::Reset(std::vector<uint64_t> ids, std::vector<float> data) {
  if (ids.size() > options_.threshold) {
    auto h = std::make_unique<HnswIndex>(dim_, options_.hnsw);
    h->Build(ids, data);
    hnsw_ = std::move(h);
    exact_.reset();
    return;
  }
  auto e = std::make_unique<ExactIndex>(dim_);
  for (size_t i = 0; i < ids.size(); ++i) {
    // Load has already checked sizes and finiteness.
    (void)e->Upsert(ids[i], std::span<const float>(data.data() + i * dim_, dim_));
  }
  exact_ = std::move(e);
  hnsw_.reset();
}

}  // namespace folio::vector
