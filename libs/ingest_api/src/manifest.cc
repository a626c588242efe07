// The manifest's codec (manifest.h).
#include "folio/ingest_api/manifest.h"

#include "folio/core/json.h"
#include "folio/core/json_decode.h"
#include "json_fields.h"

namespace folio::ingest_api {
namespace {

using json::element;
using json::kOptional;

void WriteFiles(JsonWriter* w, std::string_view key, const std::vector<ManifestFile>& files) {
  w->Key(key).BeginArray();
  for (const ManifestFile& f : files) {
    w->BeginObject().Key("path").String(f.path).Key("sha256").String(f.sha256).Key("url").String(f.url);
    if (!f.warnings.empty()) {
      w->Key("warnings").BeginArray();
      for (const std::string& s : f.warnings) w->String(s);
      w->EndArray();
    }
    w->EndObject();
  }
  w->EndArray();
}

void WriteStrings(JsonWriter* w, std::string_view key, const std::vector<std::string>& items) {
  w->Key(key).BeginArray();
  for (const std::string& s : items) w->String(s);
  w->EndArray();
}

// Both forms open alike: version, site, epoch, (since | site_url), limits, settings.
void WriteHead(const Manifest& m, JsonWriter* w) {
  w->BeginObject().Key("version").Int(m.version).Key("site").String(m.site);
  if (m.since || !m.epoch.empty()) w->Key("epoch").String(m.epoch);
  if (m.since) w->Key("since").Int(*m.since);
  else w->Key("site_url").String(m.site_url.value_or(""));
  w->Key("limits").BeginObject();
  w->Key("max_note_bytes").Int(m.max_note_bytes);
  w->Key("max_attachment_bytes").Int(m.max_attachment_bytes);
  w->EndObject();
  w->Key("settings").BeginObject().Key("strict_line_breaks").Bool(m.strict_line_breaks.value_or(false)).EndObject();
}

Status DecodeFile(const json::Decoder& d, std::string_view array_key, element v, ManifestFile* f) {
  json::object obj;
  if (Status st = d.ObjectItem(array_key, v, &obj); !st.ok()) return st;
  Status st = d.Fields(obj, {
      {"path", kOptional, [&](element x) { return d.String("path", x, &f->path); }},
      {"sha256", kOptional, [&](element x) { return d.String("sha256", x, &f->sha256); }},
      {"url", kOptional, [&](element x) { return d.String("url", x, &f->url); }},
      {"warnings", kOptional, [&](element x) { return d.Strings("warnings", x, &f->warnings); }},
  });
  if (st.ok() && f->path.empty()) return d.Error("lists a file of \"" + std::string(array_key) + "\" without a path");
  return st;
}

Status DecodeLimits(const json::Decoder& d, element v, Manifest* m) {
  json::object obj;
  if (v.get_object().get(obj)) return d.FieldError("limits", "an object");
  return d.Fields(obj, {
      {"max_note_bytes", kOptional,
       [&](element x) { return d.Int("max_note_bytes", x, 0, INT64_MAX, &m->max_note_bytes); }},
      {"max_attachment_bytes", kOptional,
       [&](element x) { return d.Int("max_attachment_bytes", x, 0, INT64_MAX, &m->max_attachment_bytes); }},
  });
}

}  // namespace

std::string EncodeManifest(const Manifest& m) {
  JsonWriter w;
  WriteHead(m, &w);
  if (m.since && m.too_old) {
    w.Key("too_old").Bool(true);
  } else {
    WriteFiles(&w, "notes", m.notes);
    WriteFiles(&w, "attachments", m.attachments);
    if (m.since) {
      WriteStrings(&w, "deleted", m.deleted);
      w.Key("note_count").Int(m.note_count).Key("attachment_count").Int(m.attachment_count);
    }
  }
  if (m.missing_attachments) WriteStrings(&w, "missing_attachments", *m.missing_attachments);
  w.EndObject();
  return w.Take();
}

Result<Manifest> DecodeManifest(std::string_view json) {
  json::Decoder d("manifest");
  json::object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  Manifest m;
  auto note = [&](element v, ManifestFile* f) { return DecodeFile(d, "notes", v, f); };
  auto attachment = [&](element v, ManifestFile* f) { return DecodeFile(d, "attachments", v, f); };
  std::vector<std::string> missing;
  bool has_missing = false;
  Status st = d.Fields(obj, {
      {"version", kOptional, [&](element v) { return d.Int("version", v, &m.version); }},
      {"site", kOptional, [&](element v) { return d.String("site", v, &m.site); }},
      {"epoch", kOptional, [&](element v) { return d.String("epoch", v, &m.epoch); }},
      {"site_url", kOptional, [&](element v) { return d.String("site_url", v, &m.site_url.emplace()); }},
      {"since", kOptional, [&](element v) { return d.Int("since", v, &m.since.emplace()); }},
      {"limits", kOptional, [&](element v) { return DecodeLimits(d, v, &m); }},
      {"settings", kOptional, [&](element v) { return DecodeSettings(d, v, &m.strict_line_breaks); }},
      {"too_old", kOptional, [&](element v) { return d.Bool("too_old", v, &m.too_old); }},
      {"notes", kOptional, [&](element v) { m.has_notes = true; return d.Items("notes", v, &m.notes, note); }},
      {"attachments", kOptional, [&](element v) { return d.Items("attachments", v, &m.attachments, attachment); }},
      {"deleted", kOptional, [&](element v) { return d.Strings("deleted", v, &m.deleted); }},
      {"note_count", kOptional, [&](element v) { return d.Int("note_count", v, &m.note_count); }},
      {"attachment_count", kOptional, [&](element v) { return d.Int("attachment_count", v, &m.attachment_count); }},
      {"missing_attachments", kOptional,
       [&](element v) { has_missing = true; return d.Strings("missing_attachments", v, &missing); }},
  });
  if (!st.ok()) return st;
  if (!m.has_notes && !(m.since && m.too_old)) return d.Error("no \"notes\" (is the server a folio-ingest server?)");
  if (has_missing) m.missing_attachments = std::move(missing);
  return m;
}

}  // namespace folio::ingest_api
