// Codecs of the search requests and their reply (search_schema.h). JSON
// written by core's JsonWriter, read through json_decode.h; unknown keys are
// skipped at every level.
#include "folio/bus/search_schema.h"

#include <initializer_list>
#include <limits>
#include <optional>

#include "folio/core/json.h"
#include "folio/core/text.h"
#include "json_decode.h"

namespace folio::bus {

std::string_view SearchModeName(SearchMode m) {
  switch (m) {
    case SearchMode::kHybrid: return "hybrid";
    case SearchMode::kVector: return "vector";
    case SearchMode::kText: return "text";
  }
  return "hybrid";  // not reached: every enumerator is listed
}

bool ParseSearchMode(std::string_view name, SearchMode* out) {
  for (SearchMode m : {SearchMode::kHybrid, SearchMode::kVector, SearchMode::kText}) {
    if (name == SearchModeName(m)) {
      *out = m;
      return true;
    }
  }
  return false;
}

namespace {

using json::element;
using json::kOptional;
using json::kRequired;
using json::object;

// k in 1..max into an int.
Status DecodeK(const json::Decoder& d, element v, int max, int* out) {
  int64_t k = 0;
  if (Status st = d.Int("k", v, 1, max, &k); !st.ok()) return st;
  *out = static_cast<int>(k);
  return Status::Ok();
}

Status DecodeQueryText(const json::Decoder& d, element v, std::string* out) {
  if (Status st = d.String("q", v, out); !st.ok()) return st;
  if (out->empty() || out->size() > kMaxQueryBytes || !IsValidUtf8(*out)) {
    return d.FieldError("q", "valid UTF-8 of 1.." + std::to_string(kMaxQueryBytes) + " bytes");
  }
  return Status::Ok();
}

Status DecodeMode(const json::Decoder& d, element v, SearchMode* out) {
  std::string name;
  if (Status st = d.String("mode", v, &name); !st.ok()) return st;
  if (!ParseSearchMode(name, out)) return d.FieldError("mode", "\"hybrid\", \"vector\" or \"text\"");
  return Status::Ok();
}

}  // namespace

// ---- search.query

std::string EncodeSearchQuery(const SearchQuery& q) {
  JsonWriter w;
  w.BeginObject()
      .Key("schema").Int(kSearchSchema)
      .Key("site").String(q.site)
      .Key("q").String(q.q)
      .Key("k").Int(q.k)
      .Key("mode").String(SearchModeName(q.mode))
      .EndObject();
  return w.Take();
}

Status DecodeSearchQuery(std::string_view json, SearchQuery* out) {
  json::Decoder d("search query");
  object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  SearchQuery q;
  Status st = d.Fields(obj, {
      {"schema", kRequired, [&](element v) { return d.Schema(v, kSearchSchema); }},
      {"site", kRequired, [&](element v) { return DecodeSite(d, v, &q.site); }},
      {"q", kRequired, [&](element v) { return DecodeQueryText(d, v, &q.q); }},
      {"k", kOptional, [&](element v) { return DecodeK(d, v, kMaxSearchK, &q.k); }},
      {"mode", kOptional, [&](element v) { return DecodeMode(d, v, &q.mode); }},
  });
  if (!st.ok()) return st;
  *out = std::move(q);
  return Status::Ok();
}

// ---- search.related

std::string EncodeRelatedQuery(const RelatedQuery& q) {
  JsonWriter w;
  w.BeginObject()
      .Key("schema").Int(kSearchSchema)
      .Key("site").String(q.site)
      .Key("path").String(q.path)
      .Key("k").Int(q.k)
      .EndObject();
  return w.Take();
}

Status DecodeRelatedQuery(std::string_view json, RelatedQuery* out) {
  json::Decoder d("related query");
  object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  RelatedQuery q;
  Status st = d.Fields(obj, {
      {"schema", kRequired, [&](element v) { return d.Schema(v, kSearchSchema); }},
      {"site", kRequired, [&](element v) { return DecodeSite(d, v, &q.site); }},
      {"path", kRequired, [&](element v) { return d.VaultPath("path", v, &q.path); }},
      {"k", kOptional, [&](element v) { return DecodeK(d, v, kMaxRelatedK, &q.k); }},
  });
  if (!st.ok()) return st;
  *out = std::move(q);
  return Status::Ok();
}

// ---- reply to either request

std::string EncodeSearchReply(const SearchReply& r) {
  JsonWriter w;
  w.BeginObject()
      .Key("schema").Int(kSearchSchema)
      .Key("error").String(r.error)
      .Key("code").String(CodeName(r.error.empty() ? Code::kOk : r.code))
      .Key("hits").BeginArray();
  for (const SearchHit& h : r.hits) {
    w.BeginObject()
        .Key("path").String(h.path)
        .Key("url").String(h.url)
        .Key("title").String(h.title)
        .Key("snippet").String(h.snippet)
        .Key("score").Double(json::FiniteOr0(h.score))
        .EndObject();
  }
  w.EndArray().Key("took_us").Int(r.took_us).EndObject();
  return w.Take();
}

namespace {

Status DecodeHit(const json::Decoder& d, element v, SearchHit* h) {
  object obj;
  if (Status st = d.ObjectItem("hits", v, &obj); !st.ok()) return st;
  return d.Fields(obj, {
      {"path", kRequired, [&](element f) { return d.String("path", f, &h->path); }},
      {"url", kRequired, [&](element f) { return d.String("url", f, &h->url); }},
      {"title", kRequired, [&](element f) { return d.String("title", f, &h->title); }},
      {"snippet", kRequired, [&](element f) { return d.String("snippet", f, &h->snippet); }},
      {"score", kRequired, [&](element f) { return d.Number("score", f, &h->score); }},
  }, "hit: ");
}

Status DecodeCode(const json::Decoder& d, element v, std::optional<Code>* out) {
  std::string name;
  if (Status st = d.String("code", v, &name); !st.ok()) return st;
  *out = CodeNamed(name);
  if (!*out) return d.FieldError("code", "a status code name (\"unavailable\", ...)");
  return Status::Ok();
}

}  // namespace

Status DecodeSearchReply(std::string_view json, SearchReply* out) {
  json::Decoder d("search reply");
  object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  SearchReply r;
  std::optional<Code> code;
  int64_t legacy_status = 0;
  auto hit = [&](element v, SearchHit* h) { return DecodeHit(d, v, h); };
  Status st = d.Fields(obj, {
      {"schema", kRequired, [&](element v) { return d.Schema(v, kSearchSchema); }},
      {"error", kRequired, [&](element v) { return d.String("error", v, &r.error); }},
      {"code", kOptional, [&](element v) { return DecodeCode(d, v, &code); }},
      // The form before "code": a service not yet upgraded.
      {"error_status", kOptional, [&](element v) { return d.Int("error_status", v, 0, 599, &legacy_status); }},
      {"hits", kRequired, [&](element v) { return d.Items("hits", v, &r.hits, hit); }},
      {"took_us", kRequired,
       [&](element v) { return d.Int("took_us", v, 0, std::numeric_limits<int64_t>::max(), &r.took_us); }},
  });
  if (!st.ok()) return st;
  if (r.error.empty()) {
    r.code = Code::kOk;
  } else if (!code) {
    r.code = CodeForHttpStatus(static_cast<int>(legacy_status));
  } else {
    r.code = *code == Code::kOk ? Code::kInternal : *code;  // an error that claims success: the sender's bug
  }
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace folio::bus
