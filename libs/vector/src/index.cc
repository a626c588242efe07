// VectorIndex: the batch operations' default implementations, in terms of
// the single-vector ones.
#include <string>

#include "folio/vector/index.h"
#include "index_internal.h"

namespace folio::vector {

Status CheckRows(std::span<const uint64_t> ids, std::span<const float> data, size_t dim) {
  if (data.size() != ids.size() * dim) {
    return Status::Invalid("batch has " + std::to_string(data.size()) + " values for " + std::to_string(ids.size()) +
                           " vectors of dim " + std::to_string(dim));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (Status s = CheckVector(data.subspan(i * dim, dim), dim); !s.ok()) {
      return Status::Invalid("vector " + std::to_string(i) + " of the batch: " + s.message());
    }
  }
  return Status::Ok();
}

Status VectorIndex::UpsertMany(std::span<const uint64_t> ids, std::span<const float> data) {
  const size_t d = dim();
  if (Status s = CheckRows(ids, data, d); !s.ok()) return s;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (Status s = Upsert(ids[i], data.subspan(i * d, d)); !s.ok()) return s;  // checked: cannot fail
  }
  return Status::Ok();
}

std::vector<std::vector<Hit>> VectorIndex::SearchMany(std::span<const float> queries, size_t k) const {
  const size_t d = dim();
  std::vector<std::vector<Hit>> out(queries.size() / d);
  for (size_t i = 0; i < out.size(); ++i) out[i] = Search(queries.subspan(i * d, d), k);
  return out;
}

}  // namespace folio::vector
