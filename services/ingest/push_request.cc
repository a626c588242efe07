#include "push_request.h"

#include <simdjson.h>

#include <set>

#include "folio/core/hash.h"
#include "folio/core/text.h"

namespace folio::ingest {
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

}  // namespace

// The DOM API is used (not On Demand) because Debian's simdjson picks its
// SIMD kernel at run time only for the DOM parser; On Demand compiled
// without -march would use the slow fallback kernel.
bool ParsePushRequest(std::string_view body, const PushLimits& limits, PushRequest* out, PushError* err) {
  using namespace simdjson;
  dom::parser parser;
  dom::element doc;
  if (auto e = parser.parse(body.data(), body.size()).get(doc)) return Fail(err, Status::Invalid(JsonProblem(e)));
  dom::object root;
  if (doc.get_object().get(root)) return Fail(err, Status::Invalid("body must be a JSON object"));
  std::set<std::string, std::less<>> seen;
  size_t count = 0;
  auto too_many = [&] {
    return Fail(err, Status::TooLarge("too many notes in one push; the limit is " + std::to_string(limits.max_notes) +
                                      " (send batches)"));
  };
  dom::element notes_el;
  if (root["notes"].get(notes_el) == SUCCESS) {
    dom::array notes;
    if (notes_el.get_array().get(notes)) {
      return Fail(err, Status::Invalid("\"notes\" must be an array of {\"path\",\"content\"} objects"));
    }
    if (notes.size() > limits.max_notes) return too_many();
    size_t index = 0;
    for (dom::element item : notes) {
      std::string where = "notes[" + std::to_string(index++) + "]";
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
      if (content.size() > limits.max_note_bytes) {
        return Fail(err, Status::TooLarge("note '" + p + "' is " + std::to_string(content.size()) +
                                          " bytes; the limit is " + std::to_string(limits.max_note_bytes)), p);
      }
      // simdjson validates UTF-8 of the raw text, but an escaped lone
      // surrogate ("\ud800") decodes to bytes that are not UTF-8.
      if (!IsValidUtf8(content)) return Fail(err, Status::Invalid("note '" + p + "': content is not valid UTF-8"), p);
      if (!seen.insert(p).second) return Fail(err, Status::Invalid("note '" + p + "' appears twice in one push"), p);
      ++count;
      out->notes.push_back({std::move(p), std::string(content)});
    }
  } else if (root.size() != 0 && root["delete"].error() != SUCCESS && root["attachments"].error() != SUCCESS) {
    // None of the fields: {} is a no-op, anything else is probably a client
    // bug worth naming.
    return Fail(err, Status::Invalid("body needs \"notes\", \"attachments\" and/or \"delete\""));
  }
  dom::element atts_el;
  if (root["attachments"].get(atts_el) == SUCCESS) {
    dom::array atts;
    if (atts_el.get_array().get(atts)) {
      return Fail(err, Status::Invalid("\"attachments\" must be an array of {\"path\",\"data\"} objects"));
    }
    size_t index = 0;
    for (dom::element item : atts) {
      std::string where = "attachments[" + std::to_string(index++) + "]";
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
      if (data.size() / 4 * 3 > limits.max_attachment_bytes + 3) {
        return Fail(err, Status::TooLarge("attachment '" + p + "' is over the limit of " +
                                          std::to_string(limits.max_attachment_bytes) + " bytes"), p);
      }
      PushAttachment a{p, ""};
      if (!Base64Decode(data, &a.data)) {
        return Fail(err, Status::Invalid("attachment '" + p + "': data is not valid base64"), p);
      }
      if (a.data.size() > limits.max_attachment_bytes) {
        return Fail(err, Status::TooLarge("attachment '" + p + "' is " + std::to_string(a.data.size()) +
                                          " bytes; the limit is " + std::to_string(limits.max_attachment_bytes)), p);
      }
      if (!seen.insert(p).second) return Fail(err, Status::Invalid("'" + p + "' appears twice in one push"), p);
      if (++count > limits.max_notes) return too_many();
      out->attachments.push_back(std::move(a));
    }
  }
  dom::element dels_el;
  if (root["delete"].get(dels_el) == SUCCESS) {
    dom::array dels;
    if (dels_el.get_array().get(dels)) return Fail(err, Status::Invalid("\"delete\" must be an array of paths"));
    for (dom::element item : dels) {
      std::string_view path;
      if (item.get_string().get(path)) return Fail(err, Status::Invalid("\"delete\" entries must be strings"));
      if (!CheckAnyPath(path, err)) return false;
      std::string p(path);
      if (seen.count(p)) return Fail(err, Status::Invalid("'" + p + "' is both pushed and deleted"), p);
      if (++count > limits.max_notes) return too_many();
      seen.insert(p);
      if (EndsWith(AsciiLower(p), ".md")) out->deletes.push_back(std::move(p));
      else out->delete_attachments.push_back(std::move(p));
    }
  }
  return true;
}

}  // namespace folio::ingest
