#include "folio/bus/note_schema.h"

#include <cstdint>

#include "folio/core/json.h"
#include "json_decode.h"

namespace folio::bus {

std::string NotesSubject(std::string_view site) {
  std::string subject(kNotesSubjectPrefix);
  subject.append(site);
  return subject;
}

std::string EncodeNoteEvent(const NoteEvent& e) {
  JsonWriter w;
  w.BeginObject()
      .Key("schema").Int(kNoteEventSchema)
      .Key("site").String(e.site)
      .Key("path").String(e.path)
      .Key("url").String(e.url)
      .Key("version").Int(e.version)
      .Key("deleted").Bool(e.deleted)
      .Key("title").String(e.title)
      .Key("tags").BeginArray();
  for (const std::string& t : e.tags) w.String(t);
  w.EndArray().Key("text").String(e.text);
  if (!e.sections.empty()) {
    w.Key("sections").BeginArray();
    for (const NoteSection& sec : e.sections) {
      w.BeginObject().Key("heading").String(sec.heading).Key("anchor").String(sec.anchor)
          .Key("offset").Int(sec.offset).EndObject();
    }
    w.EndArray();
  }
  if (!e.aliases.empty()) {
    w.Key("aliases").BeginArray();
    for (const std::string& a : e.aliases) w.String(a);
    w.EndArray();
  }
  if (!e.links.empty()) {
    w.Key("links").BeginArray();
    for (const NoteLink& l : e.links) {
      w.BeginObject().Key("target").String(l.target);
      if (!l.text.empty()) w.Key("text").String(l.text);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!e.lang.empty()) w.Key("lang").String(e.lang);
  if (e.restored) w.Key("restored").Bool(true);
  w.EndObject();
  return w.Take();
}

NoteEvent RestoredEvent(std::string_view site, int64_t version) {
  NoteEvent e;
  e.site = std::string(site);
  e.version = version;
  e.restored = true;
  return e;
}

namespace {

using json::element;
using json::kRequired;
using json::object;

// Any flaw in one section is reported as the shape of "sections" as a whole.
Status DecodeSection(const json::Decoder& d, element v, NoteSection* sec) {
  object obj;
  int64_t offset = 0;
  Status st = d.ObjectItem("sections", v, &obj);
  if (st.ok()) {
    st = d.Fields(obj, {
        {"heading", kRequired, [&](element f) { return d.String("heading", f, &sec->heading); }},
        {"anchor", kRequired, [&](element f) { return d.String("anchor", f, &sec->anchor); }},
        {"offset", kRequired, [&](element f) { return d.Int("offset", f, 0, UINT32_MAX, &offset); }},
    });
  }
  if (!st.ok()) return d.FieldError("sections", "an array of {heading, anchor, offset}");
  sec->offset = static_cast<uint32_t>(offset);
  return Status::Ok();
}

Status DecodeLink(const json::Decoder& d, element v, NoteLink* link) {
  object obj;
  Status st = d.ObjectItem("links", v, &obj);
  if (st.ok()) {
    st = d.Fields(obj, {
        {"target", kRequired, [&](element f) { return d.String("target", f, &link->target); }},
        {"text", json::kOptional, [&](element f) { return d.String("text", f, &link->text); }},
    });
  }
  if (!st.ok()) return d.FieldError("links", "an array of {target, text}");
  return Status::Ok();
}

}  // namespace

Status DecodeNoteEvent(std::string_view json, NoteEvent* out) {
  json::Decoder d("note event");
  object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  NoteEvent e;
  auto section = [&](element v, NoteSection* sec) { return DecodeSection(d, v, sec); };
  auto link = [&](element v, NoteLink* l) { return DecodeLink(d, v, l); };
  Status st = d.Fields(obj, {
      {"schema", kRequired, [&](element v) { return d.Schema(v, kNoteEventSchema); }},
      {"site", kRequired, [&](element v) { return DecodeSite(d, v, &e.site); }},
      {"path", kRequired, [&](element v) { return d.String("path", v, &e.path); }},
      {"url", kRequired, [&](element v) { return d.String("url", v, &e.url); }},
      {"version", kRequired, [&](element v) { return d.Int("version", v, &e.version); }},
      {"deleted", kRequired, [&](element v) { return d.Bool("deleted", v, &e.deleted); }},
      {"title", kRequired, [&](element v) { return d.String("title", v, &e.title); }},
      {"tags", kRequired, [&](element v) { return d.Strings("tags", v, &e.tags); }},
      {"text", kRequired, [&](element v) { return d.String("text", v, &e.text); }},
      {"sections", json::kOptional, [&](element v) { return d.Items("sections", v, &e.sections, section); }},
      {"aliases", json::kOptional, [&](element v) { return d.Strings("aliases", v, &e.aliases); }},
      {"links", json::kOptional, [&](element v) { return d.Items("links", v, &e.links, link); }},
      {"lang", json::kOptional, [&](element v) { return d.String("lang", v, &e.lang); }},
      {"restored", json::kOptional, [&](element v) { return d.Bool("restored", v, &e.restored); }},
  });
  if (!st.ok()) return st;
  *out = std::move(e);
  return Status::Ok();
}

Status DecodeNoteEvents(std::string_view data, std::vector<NoteEvent>* out) {
  std::vector<NoteEvent> events;
  size_t line = 1;
  for (size_t at = 0; at <= data.size(); ++line) {
    size_t end = data.find('\n', at);
    if (end == std::string_view::npos) end = data.size();
    if (events.size() == kMaxNoteEventsPerMessage) {
      return Status::Invalid("note events: more than " + std::to_string(kMaxNoteEventsPerMessage) + " in one message");
    }
    NoteEvent e;
    if (Status st = DecodeNoteEvent(data.substr(at, end - at), &e); !st.ok()) {
      return Status::Invalid("line " + std::to_string(line) + ": " + st.message());
    }
    events.push_back(std::move(e));
    at = end + 1;
  }
  for (NoteEvent& e : events) out->push_back(std::move(e));
  return Status::Ok();
}

}  // namespace folio::bus
