// Tiny JSON readers for test assertions (simdjson DOM).
#pragma once

#include <simdjson.h>

#include <string>

namespace folio::it {

inline int64_t JsonInt(const std::string& body, const char* key) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  if (p.parse(body).get(doc)) return -1;
  int64_t v;
  if (doc[key].get_int64().get(v)) return -1;
  return v;
}

inline std::string JsonErrorCode(const std::string& body) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  std::string_view v;
  if (p.parse(body).get(doc) || doc["error"]["code"].get_string().get(v)) return "";
  return std::string(v);
}

inline std::string JsonErrorField(const std::string& body, const char* field) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  std::string_view v;
  if (p.parse(body).get(doc) || doc["error"][field].get_string().get(v)) return "";
  return std::string(v);
}

}  // namespace folio::it
