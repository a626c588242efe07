#include "wire.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <ctime>

#include "folio/core/json.h"

namespace folio::cli {
namespace {

namespace od = simdjson::ondemand;

// simdjson's exceptions stay inside this file: every parser below catches them
// and returns a Status.
std::vector<std::string> ParseStrings(od::value v) {
  std::vector<std::string> out;
  for (std::string_view s : v.get_array()) out.emplace_back(s);
  return out;
}

RemoteFile ParseRemoteFile(od::object obj) {
  RemoteFile n;
  for (od::field f : obj) {
    std::string_view key = f.unescaped_key();
    if (key == "path") n.path = std::string_view(f.value());
    else if (key == "sha256") n.sha256 = std::string_view(f.value());
    else if (key == "url") n.url = std::string_view(f.value());
  }
  return n;
}

// A note of the full manifest: its "warnings" go to m->warnings.
void ParseManifestNote(od::object obj, Manifest* m) {
  RemoteFile n;
  std::vector<std::string> warnings;
  for (od::field f : obj) {
    std::string_view key = f.unescaped_key();
    if (key == "path") n.path = std::string_view(f.value());
    else if (key == "sha256") n.sha256 = std::string_view(f.value());
    else if (key == "url") n.url = std::string_view(f.value());
    else if (key == "warnings") warnings = ParseStrings(f.value());
  }
  if (!warnings.empty()) m->warnings[n.path] = std::move(warnings);
  m->notes.push_back(std::move(n));
}

NoteReport ParseNoteReport(od::object obj) {
  NoteReport n;
  for (od::field f : obj) {
    std::string_view key = f.unescaped_key();
    if (key == "path") n.path = std::string_view(f.value());
    else if (key == "url") n.url = std::string_view(f.value());
    else if (key == "warnings") n.warnings = ParseStrings(f.value());
  }
  return n;
}

// Single-line, bounded: the message ends up in a one-line CLI error.
std::string OneLine(std::string_view s) {
  std::string out(s.substr(0, 500));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

}  // namespace

Result<Manifest> ParseManifest(std::string_view json) {
  try {
    simdjson::padded_string padded(json);
    od::parser parser;
    od::document doc = parser.iterate(padded);
    Manifest m;
    bool has_notes = false;
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "version") {
        m.version = f.value().get_int64();
      } else if (key == "site") {
        m.site = std::string_view(f.value());
      } else if (key == "epoch") {
        m.epoch = std::string_view(f.value());
      } else if (key == "site_url") {
        m.site_url = std::string_view(f.value());
      } else if (key == "since") {
        m.delta = true;
      } else if (key == "too_old") {
        m.too_old = f.value().get_bool();
      } else if (key == "deleted") {
        m.deleted = ParseStrings(f.value());
      } else if (key == "missing_attachments") {
        m.missing_attachments = ParseStrings(f.value());
      } else if (key == "note_count") {
        m.note_count = f.value().get_int64();
      } else if (key == "attachment_count") {
        m.attachment_count = f.value().get_int64();
      } else if (key == "notes") {
        has_notes = true;
        for (od::object note : f.value().get_array()) ParseManifestNote(note, &m);
      } else if (key == "attachments") {
        for (od::object a : f.value().get_array()) m.attachments.push_back(ParseRemoteFile(a));
      } else if (key == "settings") {
        for (od::field sf : f.value().get_object()) {
          std::string_view setting = sf.unescaped_key();
          if (setting == "strict_line_breaks") m.strict_line_breaks = static_cast<bool>(sf.value().get_bool());
        }
      } else if (key == "limits") {
        for (od::field l : f.value().get_object()) {
          std::string_view name = l.unescaped_key();
          if (name == "max_note_bytes") m.max_note_bytes = l.value().get_int64();
          else if (name == "max_attachment_bytes") m.max_attachment_bytes = l.value().get_int64();
        }
      }
    }
    if (!has_notes && !(m.delta && m.too_old)) return Status::Invalid("manifest has no \"notes\"");
    if (m.max_note_bytes < 0 || m.max_attachment_bytes < 0) return Status::Invalid("manifest has negative limits");
    for (const RemoteNote& n : m.notes) {
      if (n.path.empty()) return Status::Invalid("manifest lists a note without a path");
    }
    for (const RemoteAttachment& a : m.attachments) {
      if (a.path.empty()) return Status::Invalid("manifest lists an attachment without a path");
    }
    return m;
  } catch (const simdjson::simdjson_error& e) {
    return Status::Invalid(std::string("manifest is not the expected JSON: ") + e.what());
  }
}

Result<PushReply> ParsePushReply(std::string_view json) {
  try {
    simdjson::padded_string padded(json);
    od::parser parser;
    od::document doc = parser.iterate(padded);
    PushReply r;
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "version") r.version = f.value().get_int64();
      else if (key == "received") r.received = f.value().get_int64();
      else if (key == "changed") r.changed = f.value().get_int64();
      else if (key == "rendered") r.rendered = f.value().get_int64();
      else if (key == "deleted") r.deleted = f.value().get_int64();
      else if (key == "took_ms") r.took_ms = f.value().get_int64();
      else if (key == "attachments_received") r.attachments_received = f.value().get_int64();
      else if (key == "attachments_changed") r.attachments_changed = f.value().get_int64();
      else if (key == "attachments_deleted") r.attachments_deleted = f.value().get_int64();
      else if (key == "phases_ms") r.phases = std::string(std::string_view(f.value().get_string()));
      else if (key == "settings_changed") r.settings_changed = static_cast<bool>(f.value().get_bool());
      else if (key == "settings") {
        for (od::field sf : f.value().get_object()) {
          std::string_view setting = sf.unescaped_key();
          if (setting == "strict_line_breaks") r.strict_line_breaks = static_cast<bool>(sf.value().get_bool());
        }
      }
      else if (key == "notes") {
        for (od::object note : f.value().get_array()) r.notes.push_back(ParseNoteReport(note));
      }
    }
    return r;
  } catch (const simdjson::simdjson_error& e) {
    return Status::Invalid(std::string("push reply is not the expected JSON: ") + e.what());
  }
}

Result<StageReply> ParseStageReply(std::string_view json) {
  StageReply r;
  try {
    simdjson::padded_string padded(json);
    od::parser parser;
    od::document doc = parser.iterate(padded);
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "stage") r.staged = true;
      else if (key == "batches") r.batches = f.value().get_int64();
      else if (key == "bytes") r.bytes = f.value().get_int64();
    }
  } catch (const simdjson::simdjson_error& e) {
    return Status::Invalid(std::string("staged batch reply is not the expected JSON: ") + e.what());
  }
  if (r.staged) return r;
  Result<PushReply> applied = ParsePushReply(json);  // a server without staging pushed it
  if (!applied.ok()) return applied.status();
  r.applied = std::move(applied).value();
  return r;
}

Result<ExportPage> ParseExportPage(std::string_view json) {
  ExportPage page;
  bool has_urls = false;
  try {
    simdjson::padded_string padded(json);
    od::parser parser;
    od::document doc = parser.iterate(padded);
    for (od::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "urls") {
        has_urls = true;
        for (auto u : f.value().get_array()) page.urls.emplace_back(std::string_view(u.get_string()));
      } else if (key == "next") {
        page.next = std::string_view(f.value().get_string());
      }
    }
  } catch (const simdjson::simdjson_error& e) {
    return Status::Invalid(std::string("export answer is not the expected JSON: ") + e.what());
  }
  if (!has_urls) return Status::Invalid("export answer has no \"urls\" (is the server older than folio export?)");
  return page;
}

std::string BuildPushBody(std::span<const OutgoingNote> notes,
                          std::span<const OutgoingAttachment> attachments,
                          std::span<const std::string> deletes, const VaultSettings* settings) {
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
  if (settings && settings->strict_line_breaks) {
    w.Key("settings").BeginObject().Key("strict_line_breaks").Bool(*settings->strict_line_breaks).EndObject();
  }
  w.EndObject();
  return w.Take();
}

std::string ErrorMessage(std::string_view body) {
  try {
    simdjson::padded_string padded(body);
    od::parser parser;
    od::document doc = parser.iterate(padded);
    std::string_view message = doc["error"]["message"];
    return OneLine(message);
  } catch (const simdjson::simdjson_error&) {
    return "";
  }
}

int64_t RetryAfterMs(std::string_view value, int64_t now_unix_s) {
  constexpr int64_t kMaxSeconds = 24 * 3600;
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
    // An HTTP-date (IMF-fixdate, the form servers send).
    std::tm tm{};
    std::string text(value);
    const char* parsed = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (parsed == nullptr || *parsed != '\0') return 0;
    seconds = static_cast<int64_t>(timegm(&tm)) - now_unix_s;
  }
  return std::clamp<int64_t>(seconds, 0, kMaxSeconds) * 1000;
}

Status ErrorForResponse(std::string_view server, std::string_view what, int http_status,
                        std::string_view body) {
  std::string message = ErrorMessage(body);
  std::string detail = message.empty() ? "" : ": " + message;
  std::string request = std::string(server) + std::string(what);
  std::string code = " (HTTP " + std::to_string(http_status) + ")";
  switch (http_status) {
    case 401:
      return Status::Unauthenticated("the server rejected the token (check --token / FOLIO_TOKEN)");
    case 403:
      return Status(Code::kPermissionDenied, "the server refused " + request + code + detail);
    case 404:
      if (!message.empty()) return Status::NotFound(request + code + detail);
      return Status::NotFound(request + " not found (HTTP 404): is --server a folio-ingest server?");
    case 413:
      return Status::TooLarge("the server refused a request as too large" + detail +
                              " (lower --batch-bytes / --batch-notes)");
    default:
      break;
  }
  if (http_status >= 400 && http_status < 500) {
    return Status::Invalid("the server rejected " + request + code + detail);
  }
  return Status::Unavailable("the server failed on " + request + code + detail);
}

}  // namespace folio::cli
