// DecodePushRequest (push.h): the push body, validated whole before anything
// is kept. simdjson's DOM API directly (not json::Decoder): these messages
// name the note and index concerned, and clients show them as they are.
#include "folio/ingest_api/push.h"

#include <simdjson.h>

#include <set>

#include "folio/core/hash.h"
#include "folio/core/text.h"

namespace folio::ingest_api {
namespace {

bool Fail(PushError* err, Status s, std::string path = "") {
  err->status = std::move(s);
  err->path = std::move(path);
  return false;
}

bool CheckAnyPath(std::string_view path, PushError* err) {
  if (Status s = CheckVaultPath(path); !s.ok()) {
    return Fail(err, Status::Invalid("'" + std::string(path) + "': " + s.message()), std::string(path));
  }
  return true;
}

bool CheckNotePath(std::string_view path, PushError* err) {
  if (Status s = CheckVaultPath(path); !s.ok()) {
    return Fail(err, Status::Invalid("note '" + std::string(path) + "': " + s.message()), std::string(path));
  }
  if (!EndsWith(AsciiLower(path), ".md")) {
    return Fail(err, Status::Invalid("note '" + std::string(path) + "': only .md notes can be pushed"),
                std::string(path));
  }
  return true;
}

std::string JsonProblem(simdjson::error_code e) {
  return std::string("body is not valid JSON: ") + simdjson::error_message(e);
}

// The state of one parse: what was seen and counted so far, and where the
// result and the first problem go.
struct PushParse {
  const PushLimits& limits;
  PushRequest* out;
  PushError* err;
  std::set<std::string, std::less<>> seen;  // every path pushed or deleted
  size_t count = 0;                         // notes + attachments + deletions

  bool TooMany() {
    return Fail(err, Status::TooLarge("too many notes in one push; the limit is " + std::to_string(limits.max_notes) +
                                      " (send batches)"));
  }
};

// One element of "notes": {"path","content"}.
bool ParseNote(simdjson::dom::element item, size_t index, PushParse* st) {
  using namespace simdjson;
  PushError* err = st->err;
  std::string where = "notes[" + std::to_string(index) + "]";
  dom::object obj;
  if (item.get_object().get(obj)) return Fail(err, Status::Invalid(where + " must be an object"));
  std::string_view path, content;
  dom::element v;
  if (obj["path"].get(v) != SUCCESS) return Fail(err, Status::Invalid(where + " has no \"path\""));
  if (v.get_string().get(path)) return Fail(err, Status::Invalid(where + ".path must be a string"));
  if (!CheckNotePath(path, err)) return false;
  std::string p(path);
  if (obj["content"].get(v) != SUCCESS) return Fail(err, Status::Invalid("note '" + p + "' has no \"content\""), p);
  if (v.get_string().get(content)) return Fail(err, Status::Invalid("note '" + p + "': content must be a string"), p);
  if (content.size() > st->limits.max_note_bytes) {
    return Fail(err, Status::TooLarge("note '" + p + "' is " + std::to_string(content.size()) +
                                      " bytes; the limit is " + std::to_string(st->limits.max_note_bytes)), p);
  }
  // simdjson validates UTF-8 of the raw text, but an escaped lone
  // surrogate ("\ud800") decodes to bytes that are not UTF-8.
  if (!IsValidUtf8(content)) return Fail(err, Status::Invalid("note '" + p + "': content is not valid UTF-8"), p);
  if (!st->seen.insert(p).second) return Fail(err, Status::Invalid("note '" + p + "' appears twice in one push"), p);
  ++st->count;
  st->out->notes.push_back({std::move(p), std::string(content)});
  return true;
}

bool ParseNotes(simdjson::dom::element notes_el, PushParse* st) {
  simdjson::dom::array notes;
  if (notes_el.get_array().get(notes)) {
    return Fail(st->err, Status::Invalid("\"notes\" must be an array of {\"path\",\"content\"} objects"));
  }
  if (notes.size() > st->limits.max_notes) return st->TooMany();
  size_t index = 0;
  for (simdjson::dom::element item : notes) {
    if (!ParseNote(item, index++, st)) return false;
  }
  return true;
}

// One element of "attachments": {"path","data"} with base64 data.
bool ParseAttachment(simdjson::dom::element item, size_t index, PushParse* st) {
  using namespace simdjson;
  PushError* err = st->err;
  const size_t max_bytes = st->limits.max_attachment_bytes;
  std::string where = "attachments[" + std::to_string(index) + "]";
  dom::element v;
  std::string_view path, data;
  if (item["path"].get(v) != SUCCESS || v.get_string().get(path)) {
    return Fail(err, Status::Invalid(where + " needs a string \"path\""));
  }
  if (!CheckAnyPath(path, err)) return false;
  std::string p(path);
  if (EndsWith(AsciiLower(p), ".md")) {
    return Fail(err, Status::Invalid("attachment '" + p + "' is a note; send it in \"notes\""), p);
  }
  if (item["data"].get(v) != SUCCESS || v.get_string().get(data)) {
    return Fail(err, Status::Invalid("attachment '" + p + "' needs base64 \"data\""), p);
  }
  if (data.size() / 4 * 3 > max_bytes + 3) {
    return Fail(err, Status::TooLarge("attachment '" + p + "' is over the limit of " +
                                      std::to_string(max_bytes) + " bytes"), p);
  }
  PushAttachment a{p, ""};
  if (!Base64Decode(data, &a.data)) {
    return Fail(err, Status::Invalid("attachment '" + p + "': data is not valid base64"), p);
  }
  if (a.data.size() > max_bytes) {
    return Fail(err, Status::TooLarge("attachment '" + p + "' is " + std::to_string(a.data.size()) +
                                      " bytes; the limit is " + std::to_string(max_bytes)), p);
  }
  if (!st->seen.insert(p).second) return Fail(err, Status::Invalid("'" + p + "' appears twice in one push"), p);
  if (++st->count > st->limits.max_notes) return st->TooMany();
  st->out->attachments.push_back(std::move(a));
  return true;
}

bool ParseAttachments(simdjson::dom::element atts_el, PushParse* st) {
  simdjson::dom::array atts;
  if (atts_el.get_array().get(atts)) {
    return Fail(st->err, Status::Invalid("\"attachments\" must be an array of {\"path\",\"data\"} objects"));
  }
  size_t index = 0;
  for (simdjson::dom::element item : atts) {
    if (!ParseAttachment(item, index++, st)) return false;
  }
  return true;
}

// "delete": paths of notes (.md) and attachments (everything else).
bool ParseDeletes(simdjson::dom::element dels_el, PushParse* st) {
  PushError* err = st->err;
  simdjson::dom::array dels;
  if (dels_el.get_array().get(dels)) return Fail(err, Status::Invalid("\"delete\" must be an array of paths"));
  for (simdjson::dom::element item : dels) {
    std::string_view path;
    if (item.get_string().get(path)) return Fail(err, Status::Invalid("\"delete\" entries must be strings"));
    if (!CheckAnyPath(path, err)) return false;
    std::string p(path);
    if (st->seen.count(p)) return Fail(err, Status::Invalid("'" + p + "' is both pushed and deleted"), p);
    if (++st->count > st->limits.max_notes) return st->TooMany();
    st->seen.insert(p);
    if (EndsWith(AsciiLower(p), ".md")) st->out->deletes.push_back(std::move(p));
    else st->out->delete_attachments.push_back(std::move(p));
  }
  return true;
}

// "settings": known keys only, each with a value of its type.
bool ParseSettings(simdjson::dom::element settings_el, PushParse* st) {
  PushError* err = st->err;
  simdjson::dom::object obj;
  if (settings_el.get_object().get(obj)) {
    return Fail(err, Status::Invalid("\"settings\" must be an object, e.g. {\"strict_line_breaks\":true}"));
  }
  for (auto [key, value] : obj) {
    if (key != "strict_line_breaks") {
      return Fail(err, Status::Invalid("unknown setting \"" + std::string(key).substr(0, 64) +
                                       "\" in \"settings\"; the known one is \"strict_line_breaks\""));
    }
    bool v = false;
    if (value.get_bool().get(v)) {
      return Fail(err, Status::Invalid("settings.strict_line_breaks must be true or false"));
    }
    st->out->settings.strict_line_breaks = v;
  }
  return true;
}

}  // namespace

// The DOM API is used (not On Demand) because Debian's simdjson picks its
// SIMD kernel at run time only for the DOM parser; On Demand compiled
// without -march would use the slow fallback kernel.
static_assert(kPushBodyPadding >= simdjson::SIMDJSON_PADDING);

bool DecodePushRequest(std::string_view body, const PushLimits& limits, PushRequest* out, PushError* err,
                       bool padded) {
  using namespace simdjson;
  dom::parser parser;
  dom::element doc;
  // Unpadded, simdjson copies the body (issue 22: a second copy of each push).
  if (auto e = parser.parse(body.data(), body.size(), /*realloc_if_needed=*/!padded).get(doc)) {
    return Fail(err, Status::Invalid(JsonProblem(e)));
  }
  dom::object root;
  if (doc.get_object().get(root)) return Fail(err, Status::Invalid("body must be a JSON object"));
  PushParse st{limits, out, err, {}, 0};
  dom::element el;
  if (root["notes"].get(el) == SUCCESS) {
    if (!ParseNotes(el, &st)) return false;
  } else if (root.size() != 0 && root["delete"].error() != SUCCESS && root["attachments"].error() != SUCCESS &&
             root["settings"].error() != SUCCESS) {
    // None of the fields: {} is a no-op, anything else is probably a client
    // bug worth naming.
    return Fail(err, Status::Invalid("body needs \"notes\", \"attachments\", \"delete\" and/or \"settings\""));
  }
  if (root["attachments"].get(el) == SUCCESS && !ParseAttachments(el, &st)) return false;
  if (root["delete"].get(el) == SUCCESS && !ParseDeletes(el, &st)) return false;
  if (root["settings"].get(el) == SUCCESS && !ParseSettings(el, &st)) return false;
  return true;
}

}  // namespace folio::ingest_api
