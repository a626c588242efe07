// Codec of the related-notes updates (related_schema.h): JSON written by
// core's JsonWriter, read through json_decode.h; unknown keys are skipped at
// every level.
#include "folio/bus/related_schema.h"

#include "folio/core/json.h"
#include "json_decode.h"

namespace folio::bus {

std::string RelatedSubject(std::string_view site) {
  std::string subject(kRelatedSubjectPrefix);
  subject.append(site);
  return subject;
}

namespace {

using json::element;
using json::kRequired;
using json::object;

void WriteRelatedList(const RelatedList& l, JsonWriter* w) {
  w->BeginObject().Key("path").String(l.path).Key("related").BeginArray();
  for (const RelatedEntry& e : l.related) {
    w->BeginObject().Key("path").String(e.path).Key("score").Double(json::FiniteOr0(e.score)).EndObject();
  }
  w->EndArray().EndObject();
}

Status DecodeRelatedEntry(const json::Decoder& d, element v, RelatedEntry* e) {
  object obj;
  if (Status st = d.ObjectItem("related", v, &obj); !st.ok()) return st;
  return d.Fields(obj, {
      {"path", kRequired, [&](element f) { return d.VaultPath("path", f, &e->path); }},
      {"score", kRequired, [&](element f) { return d.Number("score", f, &e->score); }},
  }, "related entry: ");
}

Status DecodeRelatedEntries(const json::Decoder& d, element v, std::vector<RelatedEntry>* out) {
  json::array related;
  if (Status st = d.Array("related", v, &related); !st.ok()) return st;
  if (related.size() > static_cast<size_t>(kMaxRelatedK)) {
    return d.Error("related list of more than " + std::to_string(kMaxRelatedK) + " notes");
  }
  return d.Items(related, out, [&](element item, RelatedEntry* e) { return DecodeRelatedEntry(d, item, e); });
}

Status DecodeRelatedList(const json::Decoder& d, element v, RelatedList* l) {
  object obj;
  if (Status st = d.ObjectItem("lists", v, &obj); !st.ok()) return st;
  return d.Fields(obj, {
      {"path", kRequired, [&](element f) { return d.VaultPath("path", f, &l->path); }},
      {"related", kRequired, [&](element f) { return DecodeRelatedEntries(d, f, &l->related); }},
  }, "list: ");
}

}  // namespace

std::string EncodeRelatedUpdate(const RelatedUpdate& u) {
  JsonWriter w;
  w.BeginObject().Key("schema").Int(kRelatedUpdateSchema).Key("site").String(u.site).Key("lists").BeginArray();
  for (const RelatedList& l : u.lists) WriteRelatedList(l, &w);
  w.EndArray().EndObject();
  return w.Take();
}

Status DecodeRelatedUpdate(std::string_view json, RelatedUpdate* out) {
  json::Decoder d("related update");
  object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  RelatedUpdate u;
  auto list = [&](element v, RelatedList* l) { return DecodeRelatedList(d, v, l); };
  Status st = d.Fields(obj, {
      {"schema", kRequired, [&](element v) { return d.Schema(v, kRelatedUpdateSchema); }},
      {"site", kRequired, [&](element v) { return DecodeSite(d, v, &u.site); }},
      {"lists", kRequired, [&](element v) { return d.Items("lists", v, &u.lists, list); }},
  });
  if (!st.ok()) return st;
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
