// HnswIndex: the only file that includes hnswlib (its header defines
// non-inline globals, so it must stay in one translation unit).
//
// hnswlib 0.6.2's SSE prefetches read one element past the end of a link list
// (_mm_prefetch(... *(datal + j + 1))): harmless on real hardware, but an
// AddressSanitizer heap-buffer-overflow. Under ASan we build hnswlib's scalar
// path, which has no prefetches.
#if defined(__SANITIZE_ADDRESS__)
#define NO_MANUAL_VECTORIZATION
#endif
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>
#include <utility>

#include "folio/vector/index.h"
#include "index_internal.h"

namespace folio::vector {

namespace {

constexpr size_t kMinDeletedForCompaction = 1024;

// hnswlib reports OOM and internal inconsistencies by throwing; both are fatal.
[[noreturn]] void Fatal(const std::exception& e) {
  std::fprintf(stderr, "folio/vector: hnswlib failed: %s\n", e.what());
  std::abort();
}

}  // namespace

class HnswGraph {
 public:
  HnswGraph(size_t dim, const HnswOptions& o, size_t capacity)
      : space(dim), alg(&space, std::max<size_t>(capacity, 1), o.m, o.ef_construction, o.seed) {
    alg.setEf(o.ef_search);
  }
  hnswlib::InnerProductSpace space;
  hnswlib::HierarchicalNSW<float> alg;
};

namespace {

// Adds rows [0, n) of data under labels first..first+n-1 on `threads`
// threads. hnswlib's addPoint locks what it touches, so distinct labels may
// be added concurrently. REQUIRES: capacity for them.
void AddRows(hnswlib::HierarchicalNSW<float>& alg, const float* data, size_t dim, size_t first, size_t n,
             size_t threads) {
  threads = std::clamp<size_t>(threads ? threads : std::thread::hardware_concurrency(), 1, 64);
  if (n < 64) threads = 1;
  std::atomic<size_t> next{0};
  auto work = [&] {
    try {
      for (size_t i = next++; i < n; i = next++) alg.addPoint(data + i * dim, first + i);
    } catch (const std::exception& e) {
      Fatal(e);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace

HnswIndex::HnswIndex(size_t dim, HnswOptions options)
    : dim_(dim), options_(options),
      graph_(std::make_unique<HnswGraph>(dim, options_, options_.initial_capacity)) {}

HnswIndex::~HnswIndex() = default;

Status HnswIndex::Upsert(uint64_t id, std::span<const float> v) {
  Status s = CheckVector(v, dim_);
  if (!s.ok()) return s;
  try {
    auto& alg = graph_->alg;
    auto it = label_of_.find(id);
    if (it != label_of_.end()) alg.markDelete(it->second);
    size_t label = id_of_.size();
    if (label >= alg.max_elements_) alg.resizeIndex(std::max<size_t>(2 * alg.max_elements_, 1024));
    alg.addPoint(v.data(), label);
    id_of_.push_back(id);
    label_of_[id] = label;
  } catch (const std::exception& e) {
    Fatal(e);
  }
  Compact();
  return Status::Ok();
}

Status HnswIndex::UpsertMany(std::span<const uint64_t> ids, std::span<const float> data) {
  if (Status s = CheckRows(ids, data, dim_); !s.ok()) return s;
  if (ids.empty()) return Status::Ok();
  auto& alg = graph_->alg;
  const size_t first = id_of_.size();
  try {
    for (uint64_t id : ids) {
      auto it = label_of_.find(id);
      if (it != label_of_.end()) alg.markDelete(it->second);
    }
    const size_t need = first + ids.size();
    if (need > alg.max_elements_) alg.resizeIndex(std::max(need, 2 * alg.max_elements_));
  } catch (const std::exception& e) {
    Fatal(e);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    id_of_.push_back(ids[i]);
    label_of_[ids[i]] = first + i;
  }
  AddRows(alg, data.data(), dim_, first, ids.size(), options_.build_threads);
  Compact();
  return Status::Ok();
}

bool HnswIndex::Remove(uint64_t id) {
  auto it = label_of_.find(id);
  if (it == label_of_.end()) return false;
  try {
    graph_->alg.markDelete(it->second);
  } catch (const std::exception& e) {
    Fatal(e);
  }
  label_of_.erase(it);
  Compact();
  return true;
}

size_t HnswIndex::deleted_nodes() const { return graph_->alg.num_deleted_; }

void HnswIndex::Compact() {
  size_t deleted = deleted_nodes();
  if (deleted < kMinDeletedForCompaction || deleted <= label_of_.size()) return;
  std::vector<uint64_t> ids;
  std::vector<float> data;
  ids.reserve(label_of_.size());
  data.reserve(label_of_.size() * dim_);
  ForEach([&](uint64_t id, std::span<const float> v) {
    ids.push_back(id);
    data.insert(data.end(), v.begin(), v.end());
  });
  Build(ids, data);
}

std::vector<Hit> HnswIndex::Search(std::span<const float> query, size_t k) const {
  std::vector<Hit> hits;
  if (query.size() != dim_ || k == 0 || label_of_.empty()) return hits;
  k = std::min(k, label_of_.size());
  try {
    auto pq = graph_->alg.searchKnn(query.data(), k);
    hits.reserve(pq.size());
    while (!pq.empty()) {
      auto [dist, label] = pq.top();
      pq.pop();
      hits.push_back({id_of_[label], 1.0f - dist});
    }
  } catch (const std::exception& e) {
    Fatal(e);
  }
  SortHits(&hits);
  return hits;
}

void HnswIndex::ForEach(const std::function<void(uint64_t, std::span<const float>)>& fn) const {
  const auto& alg = graph_->alg;
  for (const auto& [id, label] : label_of_) {
    auto it = alg.label_lookup_.find(label);
    const auto* p = reinterpret_cast<const float*>(alg.getDataByInternalId(it->second));
    fn(id, std::span<const float>(p, dim_));
  }
}

std::span<const float> HnswIndex::Get(uint64_t id) const {
  auto found = label_of_.find(id);
  if (found == label_of_.end()) return {};
  const auto& alg = graph_->alg;
  auto it = alg.label_lookup_.find(found->second);
  if (it == alg.label_lookup_.end()) return {};
  return std::span<const float>(reinterpret_cast<const float*>(alg.getDataByInternalId(it->second)), dim_);
}

void HnswIndex::Build(const std::vector<uint64_t>& ids, std::span<const float> data) {
  try {
    graph_ = std::make_unique<HnswGraph>(dim_, options_, std::max(ids.size(), options_.initial_capacity));
  } catch (const std::exception& e) {
    Fatal(e);
  }
  id_of_ = ids;
  label_of_.clear();
  label_of_.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) label_of_[ids[i]] = i;

  AddRows(graph_->alg, data.data(), dim_, 0, ids.size(), options_.build_threads);
}

void HnswIndex::set_ef_search(size_t ef) {
  options_.ef_search = ef;
  graph_->alg.setEf(ef);
}

void HnswIndex::Reset(std::vector<uint64_t> ids, std::vector<float> data) { Build(ids, data); }

}  // namespace folio::vector
