// Helpers shared by the index implementations. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "folio/core/status.h"
#include "folio/vector/index.h"

namespace folio::vector {

// Dot product of a[0..n) and b[0..n), written for the auto-vectoriser.
float Dot(const float* a, const float* b, size_t n);
bool AllFinite(std::span<const float> v);
// kInvalidArgument unless v.size() == dim and every value is finite.
Status CheckVector(std::span<const float> v, size_t dim);
// kInvalidArgument unless data holds ids.size() rows of dim values, all finite.
Status CheckRows(std::span<const uint64_t> ids, std::span<const float> data, size_t dim);
// True if a ranks before b: higher score, then lower id.
bool HitBetter(const Hit& a, const Hit& b);

}  // namespace folio::vector
