// The push request's encoder and the replies' codecs (push.h).
#include "folio/core/json.h"
#include "folio/core/json_decode.h"
#include "folio/ingest_api/push.h"
#include "json_fields.h"

namespace folio::ingest_api {
namespace {

using json::element;
using json::kOptional;

void WriteReport(const NoteReport& r, JsonWriter* w) {
  w->BeginObject().Key("path").String(r.path).Key("url").String(r.url);
  if (!r.published) w->Key("published").Bool(false);
  if (r.attachment) w->Key("attachment").Bool(true);
  if (r.rerendered) w->Key("rerendered").Bool(true);
  w->Key("warnings").BeginArray();
  for (const auto& s : r.warnings) w->String(s);
  w->EndArray().EndObject();
}

Status DecodeReport(const json::Decoder& d, element v, NoteReport* n) {
  json::object obj;
  if (Status st = d.ObjectItem("notes", v, &obj); !st.ok()) return st;
  return d.Fields(obj, {
      {"path", kOptional, [&](element f) { return d.String("path", f, &n->path); }},
      {"url", kOptional, [&](element f) { return d.String("url", f, &n->url); }},
      {"warnings", kOptional, [&](element f) { return d.Strings("warnings", f, &n->warnings); }},
      {"published", kOptional, [&](element f) { return d.Bool("published", f, &n->published); }},
      {"attachment", kOptional, [&](element f) { return d.Bool("attachment", f, &n->attachment); }},
      {"rerendered", kOptional, [&](element f) { return d.Bool("rerendered", f, &n->rerendered); }},
  }, "note: ");
}

Status DecodePushReplyObject(const json::Decoder& d, json::object obj, PushReply* r) {
  auto report = [&](element v, NoteReport* n) { return DecodeReport(d, v, n); };
  return d.Fields(obj, {
      {"version", kOptional, [&](element v) { return d.Int("version", v, &r->version); }},
      {"received", kOptional, [&](element v) { return d.Int("received", v, &r->received); }},
      {"changed", kOptional, [&](element v) { return d.Int("changed", v, &r->changed); }},
      {"rendered", kOptional, [&](element v) { return d.Int("rendered", v, &r->rendered); }},
      {"listings", kOptional, [&](element v) { return d.Int("listings", v, &r->listings); }},
      {"deleted", kOptional, [&](element v) { return d.Int("deleted", v, &r->deleted); }},
      {"attachments_received", kOptional,
       [&](element v) { return d.Int("attachments_received", v, &r->attachments_received); }},
      {"attachments_changed", kOptional,
       [&](element v) { return d.Int("attachments_changed", v, &r->attachments_changed); }},
      {"attachments_deleted", kOptional,
       [&](element v) { return d.Int("attachments_deleted", v, &r->attachments_deleted); }},
      {"notes", kOptional, [&](element v) { return d.Items("notes", v, &r->notes, report); }},
      {"settings", kOptional, [&](element v) { return DecodeSettings(d, v, &r->strict_line_breaks); }},
      {"settings_changed", kOptional, [&](element v) { return d.Bool("settings_changed", v, &r->settings_changed); }},
      {"published", kOptional, [&](element v) { return d.Bool("published", v, &r->published); }},
      {"took_ms", kOptional, [&](element v) { return d.Int("took_ms", v, &r->took_ms); }},
      {"phases_ms", kOptional, [&](element v) { return d.String("phases_ms", v, &r->phases); }},
      {"replayed", kOptional, [&](element v) { return d.Bool("replayed", v, &r->replayed); }},
  });
}

}  // namespace

std::string EncodePushRequest(std::span<const OutgoingNote> notes, std::span<const OutgoingAttachment> attachments,
                              std::span<const std::string> deletes, std::optional<bool> strict_line_breaks) {
  JsonWriter w;
  w.BeginObject().Key("notes").BeginArray();
  for (const OutgoingNote& n : notes) {
    w.BeginObject().Key("path").String(n.path).Key("content").String(n.content).EndObject();
  }
  w.EndArray();
  if (!attachments.empty()) {
    w.Key("attachments").BeginArray();
    for (const OutgoingAttachment& a : attachments) {
      w.BeginObject().Key("path").String(a.path).Key("data").String(a.base64).EndObject();
    }
    w.EndArray();
  }
  w.Key("delete").BeginArray();
  for (const std::string& d : deletes) w.String(d);
  w.EndArray();
  if (strict_line_breaks) {
    w.Key("settings").BeginObject().Key("strict_line_breaks").Bool(*strict_line_breaks).EndObject();
  }
  w.EndObject();
  return w.Take();
}

std::string EncodePushReplyRecord(const PushReply& r) {
  JsonWriter w;
  w.BeginObject().Key("version").Int(r.version);
  w.Key("received").Int(r.received).Key("changed").Int(r.changed);
  w.Key("rendered").Int(r.rendered).Key("listings").Int(r.listings);
  w.Key("deleted").Int(r.deleted);
  w.Key("attachments_received").Int(r.attachments_received);
  w.Key("attachments_changed").Int(r.attachments_changed);
  w.Key("attachments_deleted").Int(r.attachments_deleted);
  w.Key("notes").BeginArray();
  for (const NoteReport& n : r.notes) WriteReport(n, &w);
  w.EndArray();
  w.Key("settings").BeginObject().Key("strict_line_breaks").Bool(r.strict_line_breaks.value_or(false)).EndObject();
  if (r.settings_changed) w.Key("settings_changed").Bool(true);
  w.EndObject();
  return w.Take();
}

std::string EncodePushReply(std::string_view record, const PushReply& r) {
  JsonWriter w;
  w.BeginObject().RawMembers(record).Key("published").Bool(r.published).Key("took_ms").Int(r.took_ms);
  if (!r.phases.empty()) w.Key("phases_ms").String(r.phases);
  if (r.replayed) w.Key("replayed").Bool(true);
  w.EndObject();
  return w.Take();
}

Result<PushReply> DecodePushReply(std::string_view json) {
  json::Decoder d("push reply");
  json::object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  PushReply r;
  if (Status st = DecodePushReplyObject(d, obj, &r); !st.ok()) return st;
  return r;
}

std::string EncodeStageReply(const StageReply& r) {
  JsonWriter w;
  w.BeginObject().Key("stage").String(r.stage).Key("batch").Int(r.batch);
  w.Key("received").Int(r.received).Key("batches").Int(r.batches);
  w.Key("bytes").Int(r.bytes).Key("expires_in_ms").Int(r.expires_in_ms).EndObject();
  return w.Take();
}

Result<StageReply> DecodeStageReply(std::string_view json) {
  json::Decoder d("staged batch reply");
  json::object obj;
  if (Status st = d.Parse(json, &obj); !st.ok()) return st;
  StageReply r;
  Status st = d.Fields(obj, {
      {"stage", kOptional, [&](element v) { r.staged = true; return d.String("stage", v, &r.stage); }},
      {"batch", kOptional, [&](element v) { return d.Int("batch", v, &r.batch); }},
      {"received", kOptional, [&](element v) { return d.Int("received", v, &r.received); }},
      {"batches", kOptional, [&](element v) { return d.Int("batches", v, &r.batches); }},
      {"bytes", kOptional, [&](element v) { return d.Int("bytes", v, &r.bytes); }},
      {"expires_in_ms", kOptional, [&](element v) { return d.Int("expires_in_ms", v, &r.expires_in_ms); }},
  });
  if (!st.ok()) return st;
  if (r.staged) return r;
  // A server without staging pushed it: its answer is a push reply.
  Result<PushReply> applied = DecodePushReply(json);
  if (!applied.ok()) return applied.status();
  r.applied = std::move(applied).value();
  return r;
}

}  // namespace folio::ingest_api
