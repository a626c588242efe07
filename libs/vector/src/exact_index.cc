#include <algorithm>
#include <cmath>
#include <utility>

#include "folio/vector/index.h"
#include "index_internal.h"

namespace folio::vector {

float Dot(const float* a, const float* b, size_t n) {
  // Eight independent accumulators: no loop-carried dependency, so the
  // compiler turns the body into SIMD multiply-adds without -ffast-math.
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float tail = 0;
  for (; i < n; ++i) tail += a[i] * b[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail;
}

float Score(std::span<const float> a, std::span<const float> b) { return Dot(a.data(), b.data(), a.size()); }

bool AllFinite(std::span<const float> v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

Status CheckVector(std::span<const float> v, size_t dim) {
  if (v.size() != dim) {
    return Status::Invalid("vector has " + std::to_string(v.size()) + " values, index dim is " +
                           std::to_string(dim));
  }
  if (!AllFinite(v)) return Status::Invalid("vector has a NaN or infinite value");
  return Status::Ok();
}

bool HitBetter(const Hit& a, const Hit& b) {
  return a.score != b.score ? a.score > b.score : a.id < b.id;
}

ExactIndex::ExactIndex(size_t dim) : dim_(dim) {}

Status ExactIndex::Upsert(uint64_t id, std::span<const float> v) {
  Status s = CheckVector(v, dim_);
  if (!s.ok()) return s;
  auto [it, inserted] = row_.try_emplace(id, ids_.size());
  if (inserted) {
    ids_.push_back(id);
    data_.insert(data_.end(), v.begin(), v.end());
  } else {
    std::copy(v.begin(), v.end(), data_.begin() + it->second * dim_);
  }
  return Status::Ok();
}

bool ExactIndex::Remove(uint64_t id) {
  auto it = row_.find(id);
  if (it == row_.end()) return false;
  size_t row = it->second;
  size_t last = ids_.size() - 1;
  row_.erase(it);
  if (row != last) {
    std::copy(data_.begin() + last * dim_, data_.begin() + (last + 1) * dim_,
              data_.begin() + row * dim_);
    ids_[row] = ids_[last];
    row_[ids_[row]] = row;
  }
  ids_.pop_back();
  data_.resize(last * dim_);
  return true;
}

namespace {

// The k best hits seen so far: a min-heap by HitBetter, front() the worst kept.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(k + 1); }
  void Push(const Hit& h) {
    if (heap_.size() < k_) {
      heap_.push_back(h);
      std::push_heap(heap_.begin(), heap_.end(), HitBetter);
    } else if (HitBetter(h, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), HitBetter);
      heap_.back() = h;
      std::push_heap(heap_.begin(), heap_.end(), HitBetter);
    }
  }
  std::vector<Hit> Sorted() && {
    SortHits(&heap_);
    return std::move(heap_);
  }

 private:
  size_t k_;
  std::vector<Hit> heap_;
};

// SearchMany's blocking: kQueryBlock queries share one pass over the rows,
// which are read kRowBlockBytes at a time (a block stays in L2 while every
// query of the block scores it), so memory traffic drops ~kQueryBlock-fold.
constexpr size_t kQueryBlock = 32;
constexpr size_t kRowBlockBytes = 256 * 1024;

}  // namespace

std::vector<Hit> ExactIndex::Search(std::span<const float> query, size_t k) const {
  if (query.size() != dim_ || k == 0 || ids_.empty()) return {};
  TopK top(std::min(k, ids_.size()));
  const float* q = query.data();
  const float* row = data_.data();
  for (size_t i = 0; i < ids_.size(); ++i, row += dim_) top.Push({ids_[i], Dot(q, row, dim_)});
  return std::move(top).Sorted();
}

std::vector<std::vector<Hit>> ExactIndex::SearchMany(std::span<const float> queries, size_t k) const {
  const size_t nq = queries.size() / dim_;
  std::vector<std::vector<Hit>> out(nq);
  if (k == 0 || ids_.empty()) return out;
  k = std::min(k, ids_.size());
  const size_t rows_per_block = std::max<size_t>(16, kRowBlockBytes / (dim_ * sizeof(float)));
  for (size_t qb = 0; qb < nq; qb += kQueryBlock) {
    const size_t qn = std::min(kQueryBlock, nq - qb);
    std::vector<TopK> tops(qn, TopK(k));
    for (size_t rb = 0; rb < ids_.size(); rb += rows_per_block) {
      const size_t re = std::min(ids_.size(), rb + rows_per_block);
      for (size_t q = 0; q < qn; ++q) {
        const float* qv = queries.data() + (qb + q) * dim_;
        const float* row = data_.data() + rb * dim_;
        for (size_t i = rb; i < re; ++i, row += dim_) tops[q].Push({ids_[i], Dot(qv, row, dim_)});
      }
    }
    for (size_t q = 0; q < qn; ++q) out[qb + q] = std::move(tops[q]).Sorted();
  }
  return out;
}

void ExactIndex::ForEach(const std::function<void(uint64_t, std::span<const float>)>& fn) const {
  for (size_t i = 0; i < ids_.size(); ++i) {
    fn(ids_[i], std::span<const float>(data_.data() + i * dim_, dim_));
  }
}

std::span<const float> ExactIndex::Get(uint64_t id) const {
  auto it = row_.find(id);
  if (it == row_.end()) return {};
  return std::span<const float>(data_.data() + it->second * dim_, dim_);
}

void ExactIndex::Reset(std::vector<uint64_t> ids, std::vector<float> data) {
  ids_ = std::move(ids);
  data_ = std::move(data);
  row_.clear();
  row_.reserve(ids_.size());
  for (size_t i = 0; i < ids_.size(); ++i) row_[ids_[i]] = i;
}

}  // namespace folio::vector
