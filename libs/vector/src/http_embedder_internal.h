// Wire helpers of HttpEmbedder (request body, answer parsing, input
// truncation), exposed for its tests. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio::vector {

// The longest prefix of `s` of at most max_bytes bytes that does not split a
// UTF-8 sequence. REQUIRES: s is valid UTF-8.
std::string_view TruncateUtf8(std::string_view s, size_t max_bytes);

// {"model":<model>,"input":[<inputs>...]}.
std::string EmbeddingRequestBody(std::string_view model, std::span<const std::string_view> inputs);

// Parses an OpenAI embeddings answer for n inputs into (*out)[0..n), each of
// length dim and L2-normalised (a zero vector stays zero). Items may come in
// any order; "index" defaults to the item's position. Fails with kInternal
// naming the problem: not JSON, no "data" array, item count != n, index out
// of range or repeated, missing or non-array "embedding", a vector whose
// length != dim, a non-numeric or non-finite value.
Status ParseEmbeddingResponse(std::string_view body, size_t n, size_t dim,
                              std::vector<std::vector<float>>* out);

// At most max_bytes of an HTTP body for an error message: cut at a UTF-8
// boundary, control characters and invalid bytes replaced by ' ', "..."
// appended when cut.
std::string BodyPrefix(std::string_view body, size_t max_bytes = 200);

}  // namespace folio::vector
