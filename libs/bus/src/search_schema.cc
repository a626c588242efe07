// Codecs of the search requests, their reply and the related-notes updates
// (schema.h, "Search (request/reply) and related notes"). JSON written by
// core's JsonWriter, read with simdjson's DOM parser (which validates the
// whole document); unknown keys are skipped at every level.
#include <simdjson.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>

#include "folio/bus/schema.h"
#include "folio/core/json.h"
#include "folio/core/text.h"
#include "schema_format.h"

namespace folio::bus {

std::string RelatedSubject(std::string_view site) {
  std::string subject(kRelatedSubjectPrefix);
  subject.append(site);
  return subject;
}

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

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// JSON has no NaN or infinity; a broken score must not make the whole
// message unparsable, so it is written as 0.
double FiniteOr0(double v) { return std::isfinite(v) ? v : 0.0; }

// Reads one document. `what` ("search query") starts every message.
class Decoder {
 public:
  explicit Decoder(std::string_view what) : what_(what) {}

  Status Parse(std::string_view json, object* root) {
    // One parser per thread, reused: its buffers grow to the largest document.
    thread_local simdjson::dom::parser parser;
    element doc;
    if (parser.parse(json.data(), json.size()).get(doc)) return Error("malformed JSON");
    if (doc.get_object().get(*root)) return Error("not a JSON object");
    return Status::Ok();
  }

  Status Error(std::string_view detail) const {
    std::string m(what_);
    m += ": ";
    m += detail;
    return Status::Invalid(std::move(m));
  }
  Status FieldError(std::string_view key, std::string_view want) const {
    return Error("field \"" + std::string(key) + "\" must be " + std::string(want));
  }
  Status Missing(std::string_view key) const {
    return Error("missing field \"" + std::string(key) + "\"");
  }

  Status Schema(element v) const {
    int64_t schema = 0;
    if (v.get_int64().get(schema)) return FieldError("schema", "an integer");
    if (schema != kSearchSchema) return Error("unknown schema " + std::to_string(schema));
    return Status::Ok();
  }
  Status String(std::string_view key, element v, std::string* out) const {
    std::string_view s;
    if (v.get_string().get(s)) return FieldError(key, "a string");
    out->assign(s);
    return Status::Ok();
  }
  Status Site(element v, std::string* out) const {
    if (Status st = String("site", v, out); !st.ok()) return st;
    if (!IsValidSiteName(*out)) return Error("invalid site name \"" + *out + "\"");
    return Status::Ok();
  }
  // A vault path: non-empty, valid UTF-8, at most kMaxVaultPathSize bytes.
  Status Path(std::string_view key, element v, std::string* out) const {
    if (Status st = String(key, v, out); !st.ok()) return st;
    if (out->empty() || out->size() > format::kMaxVaultPathSize || !IsValidUtf8(*out)) {
      return FieldError(key, "a non-empty UTF-8 path of at most " +
                                 std::to_string(format::kMaxVaultPathSize) + " bytes");
    }
    return Status::Ok();
  }
  Status Int(std::string_view key, element v, int64_t lo, int64_t hi, int64_t* out) const {
    if (v.get_int64().get(*out)) return FieldError(key, "an integer");
    if (*out < lo || *out > hi) {
      return FieldError(key, "in " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return Status::Ok();
  }
  Status Score(std::string_view key, element v, double* out) const {
    // get_double also takes integers ("1"), which JsonWriter writes for whole numbers.
    if (v.get_double().get(*out) || !std::isfinite(*out)) return FieldError(key, "a finite number");
    return Status::Ok();
  }
  Status Array(std::string_view key, element v, array* out) const {
    if (v.get_array().get(*out)) return FieldError(key, "an array");
    return Status::Ok();
  }

 private:
  std::string_view what_;
};

// Keys seen so far, to report the first missing one.
class Seen {
 public:
  void Add(unsigned bit) { bits_ |= bit; }
  bool Has(unsigned bit) const { return (bits_ & bit) != 0; }
  // The first required key not seen, or nullptr.
  const char* FirstMissing(std::initializer_list<std::pair<unsigned, const char*>> required) const {
    for (auto [bit, name] : required) {
      if (!(bits_ & bit)) return name;
    }
    return nullptr;
  }

 private:
  unsigned bits_ = 0;
};

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
  Decoder d("search query");
  object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  SearchQuery q;
  Seen seen;
  for (simdjson::dom::key_value_pair f : obj) {
    std::string_view key = f.key;
    Status st;
    if (key == "schema") {
      st = d.Schema(f.value);
      seen.Add(1);
    } else if (key == "site") {
      st = d.Site(f.value, &q.site);
      seen.Add(2);
    } else if (key == "q") {
      st = d.String(key, f.value, &q.q);
      seen.Add(4);
      if (st.ok() && (q.q.empty() || q.q.size() > kMaxQueryBytes || !IsValidUtf8(q.q))) {
        st = d.FieldError(key, "valid UTF-8 of 1.." + std::to_string(kMaxQueryBytes) + " bytes");
      }
    } else if (key == "k") {
      int64_t k = 0;
      st = d.Int(key, f.value, 1, kMaxSearchK, &k);
      q.k = static_cast<int>(k);
    } else if (key == "mode") {
      std::string_view mode;
      if (f.value.get_string().get(mode)) {
        st = d.FieldError(key, "a string");
      } else if (!ParseSearchMode(mode, &q.mode)) {
        st = d.FieldError(key, "\"hybrid\", \"vector\" or \"text\"");
      }
    }
    if (!st.ok()) return st;
  }
  if (const char* m = seen.FirstMissing({{1, "schema"}, {2, "site"}, {4, "q"}})) return d.Missing(m);
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
  Decoder d("related query");
  object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  RelatedQuery q;
  Seen seen;
  for (simdjson::dom::key_value_pair f : obj) {
    std::string_view key = f.key;
    Status st;
    if (key == "schema") {
      st = d.Schema(f.value);
      seen.Add(1);
    } else if (key == "site") {
      st = d.Site(f.value, &q.site);
      seen.Add(2);
    } else if (key == "path") {
      st = d.Path(key, f.value, &q.path);
      seen.Add(4);
    } else if (key == "k") {
      int64_t k = 0;
      st = d.Int(key, f.value, 1, kMaxRelatedK, &k);
      q.k = static_cast<int>(k);
    }
    if (!st.ok()) return st;
  }
  if (const char* m = seen.FirstMissing({{1, "schema"}, {2, "site"}, {4, "path"}})) return d.Missing(m);
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
        .Key("score").Double(FiniteOr0(h.score))
        .EndObject();
  }
  w.EndArray().Key("took_us").Int(r.took_us).EndObject();
  return w.Take();
}

namespace {

Status DecodeHit(const Decoder& d, element v, SearchHit* h) {
  object obj;
  if (v.get_object().get(obj)) return d.FieldError("hits", "an array of objects");
  Seen seen;
  for (simdjson::dom::key_value_pair f : obj) {
    std::string_view key = f.key;
    Status st;
    if (key == "path") {
      st = d.String(key, f.value, &h->path);
      seen.Add(1);
    } else if (key == "url") {
      st = d.String(key, f.value, &h->url);
      seen.Add(2);
    } else if (key == "title") {
      st = d.String(key, f.value, &h->title);
      seen.Add(4);
    } else if (key == "snippet") {
      st = d.String(key, f.value, &h->snippet);
      seen.Add(8);
    } else if (key == "score") {
      st = d.Score(key, f.value, &h->score);
      seen.Add(16);
    }
    if (!st.ok()) return st;
  }
  if (const char* m = seen.FirstMissing(
          {{1, "path"}, {2, "url"}, {4, "title"}, {8, "snippet"}, {16, "score"}})) {
    return d.Error("hit: missing field \"" + std::string(m) + "\"");
  }
  return Status::Ok();
}

}  // namespace

namespace {

// The code CodeName calls `name`, or nullopt.
std::optional<Code> CodeNamed(std::string_view name) {
  for (int i = static_cast<int>(Code::kOk); i <= static_cast<int>(Code::kInternal); ++i) {
    if (CodeName(static_cast<Code>(i)) == name) return static_cast<Code>(i);
  }
  return std::nullopt;
}

// The code an error reply without "code" meant by its HTTP-like status.
Code CodeOfLegacyStatus(int64_t status) {
  switch (status) {
    case 400: return Code::kInvalidArgument;
    case 404: return Code::kNotFound;
    case 503: return Code::kUnavailable;
    default: return Code::kInternal;
  }
}

}  // namespace

Status DecodeSearchReply(std::string_view json, SearchReply* out) {
  Decoder d("search reply");
  object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  SearchReply r;
  Seen seen;
  int64_t legacy_status = 0;
  for (simdjson::dom::key_value_pair f : obj) {
    std::string_view key = f.key;
    Status st;
    if (key == "schema") {
      st = d.Schema(f.value);
      seen.Add(1);
    } else if (key == "error") {
      st = d.String(key, f.value, &r.error);
      seen.Add(2);
    } else if (key == "code") {
      std::string name;
      st = d.String(key, f.value, &name);
      std::optional<Code> code = CodeNamed(name);
      if (st.ok() && !code) st = d.FieldError(key, "a status code name (\"unavailable\", ...)");
      if (st.ok()) r.code = *code, seen.Add(16);
    } else if (key == "error_status") {  // the form before "code": a service not yet upgraded
      st = d.Int(key, f.value, 0, 599, &legacy_status);
    } else if (key == "hits") {
      array hits;
      if (st = d.Array(key, f.value, &hits); !st.ok()) return st;
      seen.Add(4);
      r.hits.clear();  // a repeated key replaces, as for every other field
      for (auto it = hits.begin(); st.ok() && it != hits.end(); ++it) {
        st = DecodeHit(d, *it, &r.hits.emplace_back());
      }
    } else if (key == "took_us") {
      st = d.Int(key, f.value, 0, std::numeric_limits<int64_t>::max(), &r.took_us);
      seen.Add(8);
    }
    if (!st.ok()) return st;
  }
  if (const char* m = seen.FirstMissing({{1, "schema"}, {2, "error"}, {4, "hits"}, {8, "took_us"}})) {
    return d.Missing(m);
  }
  if (r.error.empty()) {
    r.code = Code::kOk;
  } else if (!seen.Has(16)) {
    r.code = CodeOfLegacyStatus(legacy_status);
  } else if (r.code == Code::kOk) {
    r.code = Code::kInternal;  // an error that claims success: the sender's bug
  }
  *out = std::move(r);
  return Status::Ok();
}

// ---- related notes

namespace {

void WriteRelatedList(const RelatedList& l, JsonWriter* w) {
  w->BeginObject().Key("path").String(l.path).Key("related").BeginArray();
  for (const RelatedEntry& e : l.related) {
    w->BeginObject().Key("path").String(e.path).Key("score").Double(FiniteOr0(e.score)).EndObject();
  }
  w->EndArray().EndObject();
}

Status DecodeRelatedEntry(const Decoder& d, element v, RelatedEntry* e) {
  object obj;
  if (v.get_object().get(obj)) return d.FieldError("related", "an array of objects");
  Seen seen;
  for (simdjson::dom::key_value_pair f : obj) {
    std::string_view key = f.key;
    Status st;
    if (key == "path") {
      st = d.Path(key, f.value, &e->path);
      seen.Add(1);
    } else if (key == "score") {
      st = d.Score(key, f.value, &e->score);
      seen.Add(2);
    }
    if (!st.ok()) return st;
  }
  if (const char* m = seen.FirstMissing({{1, "path"}, {2, "score"}})) {
    return d.Error("related entry: missing field \"" + std::string(m) + "\"");
  }
  return Status::Ok();
}

Status DecodeRelatedList(const Decoder& d, element v, RelatedList* l) {
  object obj;
  if (v.get_object().get(obj)) return d.FieldError("lists", "an array of objects");
  Seen seen;
  for (simdjson::dom::key_value_pair f : obj) {
    std::string_view key = f.key;
    Status st;
    if (key == "path") {
      st = d.Path(key, f.value, &l->path);
      seen.Add(1);
    } else if (key == "related") {
      array related;
      if (st = d.Array(key, f.value, &related); !st.ok()) return st;
      seen.Add(2);
      if (related.size() > static_cast<size_t>(kMaxRelatedK)) {
        st = d.Error("related list of more than " + std::to_string(kMaxRelatedK) + " notes");
      }
      l->related.clear();
      for (auto it = related.begin(); st.ok() && it != related.end(); ++it) {
        st = DecodeRelatedEntry(d, *it, &l->related.emplace_back());
      }
    }
    if (!st.ok()) return st;
  }
  if (const char* m = seen.FirstMissing({{1, "path"}, {2, "related"}})) {
    return d.Error("list: missing field \"" + std::string(m) + "\"");
  }
  return Status::Ok();
}

}  // namespace

std::string EncodeRelatedUpdate(const RelatedUpdate& u) {
  JsonWriter w;
  w.BeginObject().Key("schema").Int(kSearchSchema).Key("site").String(u.site).Key("lists").BeginArray();
  for (const RelatedList& l : u.lists) WriteRelatedList(l, &w);
  w.EndArray().EndObject();
  return w.Take();
}

Status DecodeRelatedUpdate(std::string_view json, RelatedUpdate* out) {
  Decoder d("related update");
  object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  RelatedUpdate u;
  Seen seen;
  for (simdjson::dom::key_value_pair f : obj) {
    std::string_view key = f.key;
    Status st;
    if (key == "schema") {
      st = d.Schema(f.value);
      seen.Add(1);
    } else if (key == "site") {
      st = d.Site(f.value, &u.site);
      seen.Add(2);
    } else if (key == "lists") {
      array lists;
      if (st = d.Array(key, f.value, &lists); !st.ok()) return st;
      seen.Add(4);
      u.lists.clear();
      for (auto it = lists.begin(); st.ok() && it != lists.end(); ++it) {
        st = DecodeRelatedList(d, *it, &u.lists.emplace_back());
      }
    }
    if (!st.ok()) return st;
  }
  if (const char* m = seen.FirstMissing({{1, "schema"}, {2, "site"}, {4, "lists"}})) return d.Missing(m);
  *out = std::move(u);
  return Status::Ok();
}

std::vector<RelatedUpdate> SplitRelatedUpdate(const RelatedUpdate& u, size_t max_bytes) {
  // An update's encoding is the empty update's plus each list's own
  // encoding plus a ',' between lists: sizes add up exactly.
  const size_t empty_size = EncodeRelatedUpdate(RelatedUpdate{u.site, {}}).size();
  std::vector<RelatedUpdate> parts;
  size_t part_size = 0;
  for (const RelatedList& l : u.lists) {
    JsonWriter w;
    WriteRelatedList(l, &w);
    size_t list_size = w.str().size();
    if (!parts.empty() && part_size + 1 + list_size <= max_bytes) {
      part_size += 1 + list_size;
    } else {
      parts.push_back(RelatedUpdate{u.site, {}});
      part_size = empty_size + list_size;
    }
    parts.back().lists.push_back(l);
  }
  if (parts.empty()) parts.push_back(RelatedUpdate{u.site, {}});
  return parts;
}

}  // namespace folio::bus
