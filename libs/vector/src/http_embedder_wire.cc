// HttpEmbedder's wire format: the request body, the answer, input truncation.
#include <simdjson.h>

#include <cmath>
#include <string>

#include "folio/core/json.h"
#include "folio/core/utf8.h"
#include "http_embedder_internal.h"

namespace folio::vector {

std::string_view TruncateUtf8(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  // s[cut] exists; back up while it is a continuation byte.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

std::string EmbeddingRequestBody(std::string_view model, std::span<const std::string_view> inputs) {
  JsonWriter w;
  w.BeginObject().Key("model").String(model).Key("input").BeginArray();
  for (std::string_view in : inputs) w.String(in);
  w.EndArray().EndObject();
  return w.Take();
}

std::string BodyPrefix(std::string_view body, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < body.size()) {
    size_t start = i;
    uint32_t cp = DecodeUtf8(body, &i);
    bool printable = cp != kBadCodePoint && cp >= 0x20 && cp != 0x7F;
    size_t len = printable ? i - start : 1;
    if (out.size() + len > max_bytes) {
      out += "...";
      break;
    }
    if (printable) {
      out.append(body.substr(start, len));
    } else {
      out.push_back(' ');
    }
  }
  return out;
}

namespace {

Status Bad(const std::string& what) { return Status::Internal("malformed embeddings answer: " + what); }

// Reads one "embedding" array into *v (length already checked) and normalises it.
Status ReadVector(simdjson::dom::array arr, size_t item, std::vector<float>* v) {
  v->clear();
  double norm = 0;
  for (simdjson::dom::element e : arr) {
    double d;
    if (e.get_double().get(d) || !std::isfinite(d) || std::fabs(d) > 3.4e38) {
      return Bad("item " + std::to_string(item) + " has a non-numeric or non-finite value");
    }
    v->push_back(static_cast<float>(d));
    norm += d * d;
  }
  if (norm > 0) {
    double inv = 1.0 / std::sqrt(norm);
    for (float& x : *v) x = static_cast<float>(x * inv);
  }
  return Status::Ok();
}

}  // namespace

Status ParseEmbeddingResponse(std::string_view body, size_t n, size_t dim,
                              std::vector<std::vector<float>>* out) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body.data(), body.size()).get(root)) return Bad("not JSON: " + BodyPrefix(body));
  simdjson::dom::array data;
  if (root["data"].get_array().get(data)) return Bad("no \"data\" array: " + BodyPrefix(body));
  if (data.size() != n) {
    return Bad(std::to_string(data.size()) + " embeddings for " + std::to_string(n) + " inputs");
  }
  out->assign(n, {});
  std::vector<bool> seen(n, false);
  size_t pos = 0;
  for (simdjson::dom::element element : data) {
    simdjson::dom::object item;
    if (element.get_object().get(item)) return Bad("item " + std::to_string(pos) + " is not an object");
    uint64_t index = pos;
    simdjson::dom::element idx;
    if (!item["index"].get(idx) && idx.get_uint64().get(index)) {
      return Bad("item " + std::to_string(pos) + " has a non-integer \"index\"");
    }
    if (index >= n || seen[index]) {
      return Bad("item " + std::to_string(pos) + " has index " + std::to_string(index) +
                 " (out of range or repeated)");
    }
    seen[index] = true;
    simdjson::dom::array arr;
    if (item["embedding"].get_array().get(arr)) {
      return Bad("item " + std::to_string(pos) + " has no \"embedding\" array of floats");
    }
    if (arr.size() != dim) {
      return Status::Internal("dim mismatch: the server returned " + std::to_string(arr.size()) +
                              "-dim vectors, configured dim is " + std::to_string(dim) +
                              " (check the model and dim settings)");
    }
    Status st = ReadVector(arr, pos, &(*out)[index]);
    if (!st.ok()) return st;
    ++pos;
  }
  return Status::Ok();
}

}  // namespace folio::vector
