#include "folio/core/json_decode.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "folio/core/text.h"

namespace folio::json {

Status Decoder::Parse(std::string_view json, object* root) const {
  // One parser per thread, reused: its buffers grow to the largest document.
  // The DOM parser, not On-Demand: On-Demand in simdjson 3.0 cannot report
  // trailing content or malformed values under keys nobody reads.
  thread_local simdjson::dom::parser parser;
  element doc;
  if (parser.parse(json.data(), json.size()).get(doc)) return Error("malformed JSON");
  if (doc.get_object().get(*root)) return Error("not a JSON object");
  return Status::Ok();
}

Status Decoder::Fields(object obj, std::initializer_list<Field> fields, std::string_view where) const {
  if (fields.size() > 32) {
    std::fprintf(stderr, "json::Decoder::Fields: %zu fields (max 32)\n", fields.size());
    std::abort();
  }
  uint32_t seen = 0;
  for (simdjson::dom::key_value_pair kv : obj) {
    uint32_t bit = 1;
    for (const Field& f : fields) {
      if (f.name == kv.key) {
        if (Status st = f.read(kv.value); !st.ok()) return st;
        seen |= bit;
        break;
      }
      bit <<= 1;
    }
  }
  uint32_t bit = 1;
  for (const Field& f : fields) {
    if (f.presence == kRequired && !(seen & bit)) return Missing(f.name, where);
    bit <<= 1;
  }
  return Status::Ok();
}

Status Decoder::Error(std::string_view detail) const {
  std::string m(what_);
  m += ": ";
  m += detail;
  return Status::Invalid(std::move(m));
}

Status Decoder::FieldError(std::string_view key, std::string_view want) const {
  return Error("field \"" + std::string(key) + "\" must be " + std::string(want));
}

Status Decoder::Missing(std::string_view key, std::string_view where) const {
  return Error(std::string(where) + "missing field \"" + std::string(key) + "\"");
}

Status Decoder::Schema(element v, int64_t want) const {
  int64_t schema = 0;
  if (v.get_int64().get(schema)) return FieldError("schema", "an integer");
  if (schema != want) return Error("unknown schema " + std::to_string(schema));
  return Status::Ok();
}

Status Decoder::String(std::string_view key, element v, std::string* out) const {
  std::string_view s;
  if (v.get_string().get(s)) return FieldError(key, "a string");
  out->assign(s);
  return Status::Ok();
}

Status Decoder::Bool(std::string_view key, element v, bool* out) const {
  if (v.get_bool().get(*out)) return FieldError(key, "a boolean");
  return Status::Ok();
}

Status Decoder::Int(std::string_view key, element v, int64_t* out) const {
  if (v.get_int64().get(*out)) return FieldError(key, "an integer");
  return Status::Ok();
}

Status Decoder::Int(std::string_view key, element v, int64_t lo, int64_t hi, int64_t* out) const {
  if (Status st = Int(key, v, out); !st.ok()) return st;
  if (*out < lo || *out > hi) return FieldError(key, "in " + std::to_string(lo) + ".." + std::to_string(hi));
  return Status::Ok();
}

Status Decoder::Number(std::string_view key, element v, double* out) const {
  // get_double also takes integers ("1"), which JsonWriter writes for whole numbers.
  if (v.get_double().get(*out) || !std::isfinite(*out)) return FieldError(key, "a finite number");
  return Status::Ok();
}

Status Decoder::Strings(std::string_view key, element v, std::vector<std::string>* out) const {
  array items;
  if (v.get_array().get(items)) return FieldError(key, "an array of strings");
  out->clear();
  for (element item : items) {
    std::string_view s;
    if (item.get_string().get(s)) return FieldError(key, "an array of strings");
    out->emplace_back(s);
  }
  return Status::Ok();
}

Status Decoder::VaultPath(std::string_view key, element v, std::string* out) const {
  if (Status st = String(key, v, out); !st.ok()) return st;
  if (out->empty() || out->size() > kMaxVaultPathBytes || !IsValidUtf8(*out)) {
    return FieldError(key, "a non-empty UTF-8 path of at most " + std::to_string(kMaxVaultPathBytes) +
                               " bytes");
  }
  return Status::Ok();
}

Status Decoder::Array(std::string_view key, element v, array* out) const {
  if (v.get_array().get(*out)) return FieldError(key, "an array");
  return Status::Ok();
}

Status Decoder::ObjectItem(std::string_view array_key, element v, object* out) const {
  if (v.get_object().get(*out)) return FieldError(array_key, "an array of objects");
  return Status::Ok();
}

}  // namespace folio::json
