// The JSON error body (client.h: ErrorBody), written by Response::Error and
// read by StatusFromHttp and every client of a folio HTTP API.
#include "folio/core/json.h"
#include "folio/core/json_decode.h"
#include "folio/http/client.h"

namespace folio::http {

Result<ErrorBody> DecodeErrorBody(std::string_view body) {
  using json::element;
  json::Decoder d("error body");
  json::object root;
  if (Status st = d.Parse(body, &root); !st.ok()) return st;
  ErrorBody e;
  auto inner = [&](element v) -> Status {
    json::object obj;
    if (v.get_object().get(obj)) return d.FieldError("error", "an object");
    return d.Fields(obj, {
        {"code", json::kOptional, [&](element f) { return d.String("code", f, &e.code); }},
        {"message", json::kOptional, [&](element f) { return d.String("message", f, &e.message); }},
        {"path", json::kOptional, [&](element f) { return d.String("path", f, &e.path); }},
    }, "error: ");
  };
  if (Status st = d.Fields(root, {{"error", json::kRequired, inner}}); !st.ok()) return st;
  return e;
}

std::string EncodeErrorBody(const ErrorBody& e) {
  JsonWriter w;
  w.BeginObject().Key("error").BeginObject().Key("code").String(e.code).Key("message").String(e.message);
  if (!e.path.empty()) w.Key("path").String(e.path);
  w.EndObject().EndObject();
  return w.Take();
}

}  // namespace folio::http
