#include <utility>

#include "folio/vector/index.h"

namespace folio::vector {

AutoIndex::AutoIndex(size_t dim, AutoOptions options)
    : dim_(dim), options_(options), exact_(std::make_unique<ExactIndex>(dim)) {}

size_t AutoIndex::size() const { return hnsw_ ? hnsw_->size() : exact_->size(); }

Status AutoIndex::Upsert(uint64_t id, std::span<const float> v) {
  ++generation_;
  if (hnsw_) return hnsw_->Upsert(id, v);
  Status s = exact_->Upsert(id, v);
  if (s.ok() && exact_->size() > options_.threshold) SwitchToHnsw();
  return s;
}

Status AutoIndex::UpsertMany(std::span<const uint64_t> ids, std::span<const float> data) {
  ++generation_;
  if (hnsw_) return hnsw_->UpsertMany(ids, data);
  Status s = exact_->UpsertMany(ids, data);
  if (s.ok() && exact_->size() > options_.threshold) SwitchToHnsw();
  return s;
}

bool AutoIndex::Remove(uint64_t id) {
  ++generation_;
  return hnsw_ ? hnsw_->Remove(id) : exact_->Remove(id);
}

std::vector<Hit> AutoIndex::Search(std::span<const float> query, size_t k) const {
  return hnsw_ ? hnsw_->Search(query, k) : exact_->Search(query, k);
}

std::vector<std::vector<Hit>> AutoIndex::SearchMany(std::span<const float> queries, size_t k) const {
  return hnsw_ ? hnsw_->SearchMany(queries, k) : exact_->SearchMany(queries, k);
}

AutoIndex::Prepared AutoIndex::PrepareHnsw() const {
  Prepared p;
  p.generation = generation_;
  if (hnsw_) return p;
  p.index = std::make_unique<HnswIndex>(dim_, options_.hnsw);
  p.index->Build(exact_->ids(), exact_->data());
  return p;
}

bool AutoIndex::AdoptHnsw(Prepared prepared) {
  if (hnsw_ || !prepared.index || prepared.generation != generation_) return false;
  ++generation_;
  hnsw_ = std::move(prepared.index);
  exact_.reset();
  return true;
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
  ++generation_;
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
