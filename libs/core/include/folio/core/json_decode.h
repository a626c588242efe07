// The one way folio reads a JSON payload (libs/bus's schemas, libs/ingest_api's
// HTTP contract, libs/http's StatusFromHttp). Every codec parses with
// simdjson's DOM parser (it validates the whole document: malformed or
// trailing content is an error even under keys nobody reads), walks each
// object through a table of the keys it knows (Decoder::Fields: unknown keys
// are skipped, the first required key that is absent is named) and reads
// values with the typed readers below, so every payload words its errors the
// same way:
//   "<what>: malformed JSON"                 "<what>: not a JSON object"
//   "<what>: field \"k\" must be an integer"  "<what>: missing field \"k\""
//   "<what>: unknown schema 2"
// All errors are kInvalidArgument. simdjson is a public dependency of
// libs/core for this header only; a Decoder is a value on the caller's stack
// and any thread may use its own (the parser is per thread). Rules that
// belong to one contract (libs/bus's site names) live beside it and are
// written with these readers.
#pragma once

#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "folio/core/status.h"

namespace folio::json {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// A borrowed callable Status(element): a lambda written in the field table of
// the same expression (it must outlive the Fields call, which it does there).
class FieldReader {
 public:
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FieldReader>)
  FieldReader(F&& f)  // implicit: field tables are written as {"key", kRequired, [&](element v) {...}}
      : fn_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* fn, element v) -> Status { return (*static_cast<std::remove_reference_t<F>*>(fn))(v); }) {}
  Status operator()(element v) const { return call_(fn_, v); }

 private:
  void* fn_;
  Status (*call_)(void*, element);
};

// JSON has no NaN or infinity; a broken score must not make the whole
// message unparsable, so encoders write it as 0 (readers reject non-finite).
inline double FiniteOr0(double v) { return std::isfinite(v) ? v : 0.0; }

// The longest vault path a JSON payload may name (libs/bus's
// format::kMaxVaultPathSize is this value).
inline constexpr size_t kMaxVaultPathBytes = 1024;

enum class Presence : uint8_t { kRequired, kOptional };
inline constexpr Presence kRequired = Presence::kRequired;
inline constexpr Presence kOptional = Presence::kOptional;

// One known key of an object and how to read its value.
struct Field {
  std::string_view name;
  Presence presence;
  FieldReader read;
};

class Decoder {
 public:
  // `what` ("note event") starts every message; the bytes must outlive the Decoder.
  explicit Decoder(std::string_view what) : what_(what) {}

  // Parses `json` into *root, which stays valid until this thread parses again.
  Status Parse(std::string_view json, object* root) const;

  // Calls the reader of each key of `obj` found in `fields`, in document order
  // (a repeated key is read again: the last one wins); unknown keys are
  // skipped. Returns the first reader error, else "<where>missing field" for
  // the first kRequired entry of `fields` (in table order) not seen.
  // `where` names a nested object ("hit: "). REQUIRES: fields.size() <= 32.
  Status Fields(object obj, std::initializer_list<Field> fields, std::string_view where = {}) const;

  Status Error(std::string_view detail) const;
  Status FieldError(std::string_view key, std::string_view want) const;  // field "key" must be <want>
  Status Missing(std::string_view key, std::string_view where = {}) const;

  // Typed readers; on a wrong type the error names `key` and the type wanted.
  Status Schema(element v, int64_t want) const;  // an integer equal to want
  Status String(std::string_view key, element v, std::string* out) const;
  Status Bool(std::string_view key, element v, bool* out) const;
  Status Int(std::string_view key, element v, int64_t* out) const;
  Status Int(std::string_view key, element v, int64_t lo, int64_t hi, int64_t* out) const;
  Status Number(std::string_view key, element v, double* out) const;  // finite; integers too
  Status Strings(std::string_view key, element v, std::vector<std::string>* out) const;
  // A vault path: non-empty, valid UTF-8, at most kMaxVaultPathBytes bytes.
  Status VaultPath(std::string_view key, element v, std::string* out) const;
  Status Array(std::string_view key, element v, array* out) const;
  // An item of the array field `array_key` that must be an object.
  Status ObjectItem(std::string_view array_key, element v, object* out) const;

  // The items of an array field, each decoded by decode(element, T*) into a
  // new element of *out (cleared first). Stops at the first error.
  template <typename T, typename F>
  Status Items(std::string_view key, element v, std::vector<T>* out, F&& decode) const {
    array items;
    if (Status st = Array(key, v, &items); !st.ok()) return st;
    return Items(items, out, decode);
  }
  template <typename T, typename F>
  Status Items(array items, std::vector<T>* out, F&& decode) const {
    out->clear();
    for (element item : items) {
      if (Status st = decode(item, &out->emplace_back()); !st.ok()) return st;
    }
    return Status::Ok();
  }

 private:
  std::string_view what_;
};

}  // namespace folio::json
