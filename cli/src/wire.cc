#include "wire.h"

#include <algorithm>
#include <charconv>
#include <ctime>

#include "folio/http/client.h"
#include "folio/ingest_api/manifest.h"

namespace folio::cli {
namespace {

// Single-line, bounded: the message ends up in a one-line CLI error.
std::string OneLine(std::string_view s) {
  std::string out(s.substr(0, 500));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

RemoteFile ToRemote(ingest_api::ManifestFile& f) {
  return RemoteFile{std::move(f.path), std::move(f.sha256), std::move(f.url)};
}

}  // namespace

Result<Manifest> ParseManifest(std::string_view json) {
  Result<ingest_api::Manifest> wire = ingest_api::DecodeManifest(json);
  if (!wire.ok()) return wire.status();
  ingest_api::Manifest& w = *wire;
  Manifest m;
  m.version = w.version;
  m.max_note_bytes = w.max_note_bytes;
  m.max_attachment_bytes = w.max_attachment_bytes;
  m.site = std::move(w.site);
  m.site_url = w.site_url.value_or("");
  m.epoch = std::move(w.epoch);
  m.strict_line_breaks = w.strict_line_breaks;
  for (ingest_api::ManifestFile& n : w.notes) {
    if (!n.warnings.empty()) m.warnings[n.path] = std::move(n.warnings);
    m.notes.push_back(ToRemote(n));
  }
  for (ingest_api::ManifestFile& a : w.attachments) m.attachments.push_back(ToRemote(a));
  m.delta = w.since.has_value();
  m.too_old = w.too_old;
  m.deleted = std::move(w.deleted);
  m.note_count = w.note_count;
  m.attachment_count = w.attachment_count;
  m.missing_attachments = std::move(w.missing_attachments).value_or(std::vector<std::string>{});
  return m;
}

Result<PushReply> ParsePushReply(std::string_view json) { return ingest_api::DecodePushReply(json); }
Result<StageReply> ParseStageReply(std::string_view json) { return ingest_api::DecodeStageReply(json); }
Result<ExportPage> ParseExportPage(std::string_view json) { return ingest_api::DecodeExportPage(json); }

std::string BuildPushBody(std::span<const OutgoingNote> notes,
                          std::span<const OutgoingAttachment> attachments,
                          std::span<const std::string> deletes, const VaultSettings* settings) {
  return ingest_api::EncodePushRequest(notes, attachments, deletes,
                                       settings ? settings->strict_line_breaks : std::nullopt);
}

std::string ErrorMessage(std::string_view body) {
  Result<http::ErrorBody> e = http::DecodeErrorBody(body);
  return e.ok() ? OneLine(e->message) : "";
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
  // The code comes from the one reverse map; the words are the CLI's.
  const Status mapped = http::StatusFromHttp(http_status, body);
  const std::string message = OneLine(mapped.message());
  const std::string detail = message.empty() ? "" : ": " + message;
  const std::string request = std::string(server) + std::string(what);
  const std::string code = " (HTTP " + std::to_string(http_status) + ")";
  switch (mapped.code()) {
    case Code::kUnauthenticated:
      return Status::Unauthenticated("the server rejected the token (check --token / FOLIO_TOKEN)");
    case Code::kPermissionDenied:
      return Status::PermissionDenied("the server refused " + request + code + detail);
    case Code::kNotFound:
      if (!message.empty()) return Status::NotFound(request + code + detail);
      return Status::NotFound(request + " not found" + code + ": is --server a folio-ingest server?");
    case Code::kTooLarge:
      return Status::TooLarge("the server refused a request as too large" + detail +
                              " (lower --batch-bytes / --batch-notes)");
    case Code::kInvalidArgument:
    case Code::kConflict:
    case Code::kUnprocessable:
      return Status(mapped.code(), "the server rejected " + request + code + detail);
    default:
      break;
  }
  // Unavailable, DeadlineExceeded (retried: api.h IsRetryable), NoSpace,
  // DataLoss, Internal (not retried: the same request would fail again).
  return Status(mapped.code(), "the server failed on " + request + code + detail);
}

}  // namespace folio::cli
