#include "folio/core/json.h"

#include <cstdio>

#include "folio/core/text.h"

namespace folio {

void AppendJsonString(std::string_view s, std::string* out) {
  static const char* kHex = "0123456789abcdef";
  out->push_back('"');
  bool valid = IsValidUtf8(s);
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20) {
          *out += "\\u00";
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else if (c >= 0x80 && !valid) {
          *out += "\\ufffd";
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

void JsonWriter::Separate() {
  if (after_key_) { after_key_ = false; return; }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() { Separate(); out_ += '{'; first_.push_back(true); return *this; }
JsonWriter& JsonWriter::EndObject() { out_ += '}'; first_.pop_back(); return *this; }
JsonWriter& JsonWriter::BeginArray() { Separate(); out_ += '['; first_.push_back(true); return *this; }
JsonWriter& JsonWriter::EndArray() { out_ += ']'; first_.pop_back(); return *this; }
JsonWriter& JsonWriter::Key(std::string_view k) {
  Separate();
  AppendJsonString(k, &out_);
  out_ += ':';
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::String(std::string_view s) { Separate(); AppendJsonString(s, &out_); return *this; }
JsonWriter& JsonWriter::Int(int64_t v) { Separate(); out_ += std::to_string(v); return *this; }
JsonWriter& JsonWriter::Double(double v) {
  Separate();
  char buf[32];
  snprintf(buf, sizeof buf, "%.6g", v);
  out_ += buf;
  return *this;
}
JsonWriter& JsonWriter::Bool(bool v) { Separate(); out_ += v ? "true" : "false"; return *this; }
JsonWriter& JsonWriter::Null() { Separate(); out_ += "null"; return *this; }
JsonWriter& JsonWriter::RawMembers(std::string_view object) {
  if (object.size() >= 2 && object.front() == '{' && object.back() == '}') object = object.substr(1, object.size() - 2);
  if (object.empty()) return *this;
  Separate();
  out_ += object;
  return *this;
}

std::string JsonError(std::string_view code, std::string_view message) {
  JsonWriter w;
  w.BeginObject().Key("error").BeginObject().Key("code").String(code).Key("message").String(message).EndObject().EndObject();
  return w.Take();
}

}  // namespace folio
