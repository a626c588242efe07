// JsonWriter: builds compact JSON text into a string. The one JSON emitter of
// the project (parsing is simdjson's job). Not thread-safe; one writer per
// document. Keys and strings are escaped; invalid UTF-8 is replaced by U+FFFD.
//
//   JsonWriter w;
//   w.BeginObject().Key("version").Int(3).Key("notes").BeginArray()...
//   std::string body = w.Take();
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace folio {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view k);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Double(double v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // Inside an object: appends the members of `object`, JSON text this
  // writer (or another JsonWriter) made earlier: "{...}", or its members
  // without the braces (as folio stored them before). Nothing for "{}" or
  // "". REQUIRES: valid JSON members; not checked.
  JsonWriter& RawMembers(std::string_view object);

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void Separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// Appends `s` as a quoted, escaped JSON string.
void AppendJsonString(std::string_view s, std::string* out);

// {"error":{"code":"invalid_argument","message":"..."}} for a Status.
std::string JsonError(std::string_view code, std::string_view message);

}  // namespace folio
