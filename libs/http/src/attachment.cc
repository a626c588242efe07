#include "folio/http/attachment.h"

#include <utility>

#include "folio/core/text.h"

namespace folio::http {
namespace {

// Extension -> type. ingest records these with the blobs it uploads, the
// edge serves attachments by them: one table for both.
constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
    {"avif", "image/avif"}, {"bmp", "image/bmp"}, {"css", "text/css; charset=utf-8"},
    {"flac", "audio/flac"}, {"gif", "image/gif"}, {"ico", "image/x-icon"}, {"jpeg", "image/jpeg"},
    {"jpg", "image/jpeg"}, {"json", "application/json"}, {"m4a", "audio/mp4"}, {"mkv", "video/x-matroska"},
    {"mov", "video/quicktime"}, {"mp3", "audio/mpeg"}, {"mp4", "video/mp4"}, {"ogg", "audio/ogg"},
    {"ogv", "video/ogg"}, {"opus", "audio/opus"}, {"otf", "font/otf"}, {"pdf", "application/pdf"},
    {"png", "image/png"}, {"svg", "image/svg+xml"}, {"ttf", "font/ttf"}, {"txt", "text/plain; charset=utf-8"},
    {"wav", "audio/wav"}, {"webm", "video/webm"}, {"webp", "image/webp"}, {"woff", "font/woff"},
    {"woff2", "font/woff2"},
};

constexpr std::string_view kInlineImages[] = {"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
                                              "image/bmp", "image/x-icon", "image/vnd.microsoft.icon"};

// The JavaScript MIME type essences (WHATWG MIME Sniffing): a browser runs
// bytes of these types as a script or module.
constexpr std::string_view kScriptTypes[] = {
    "application/ecmascript", "application/javascript", "application/x-ecmascript", "application/x-javascript",
    "text/ecmascript", "text/javascript", "text/javascript1.0", "text/javascript1.1", "text/javascript1.2",
    "text/javascript1.3", "text/javascript1.4", "text/javascript1.5", "text/jscript", "text/livescript",
    "text/x-ecmascript", "text/x-javascript"};

// "type/subtype", lower case, without parameters.
std::string Essence(std::string_view content_type) {
  return AsciiLower(TrimAsciiSpace(content_type.substr(0, content_type.find(';'))));
}

// A value that is safe to echo into a header and looks like a media type:
// printable ASCII, one '/', a token on each side.
bool LooksLikeMediaType(std::string_view t) {
  if (t.empty() || t.size() > 255) return false;
  for (char c : t) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  std::string e = Essence(t);
  size_t slash = e.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == e.size()) return false;
  for (char c : e) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '.' || c == '+' || c == '-' ||
              c == '_' || c == '!' || c == '#' || c == '$' || c == '&' || c == '^';
    if (!ok) return false;
  }
  return e.find('/', slash + 1) == std::string::npos;
}

bool IsScriptType(std::string_view content_type) {
  std::string e = Essence(content_type);
  for (std::string_view t : kScriptTypes) {
    if (e == t) return true;
  }
  return false;
}

bool IsAttrChar(unsigned char c) {  // RFC 8187 attr-char
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '!' || c == '#' ||
         c == '$' || c == '&' || c == '+' || c == '-' || c == '.' || c == '^' || c == '_' || c == '`' || c == '|' ||
         c == '~';
}

}  // namespace

std::string_view ContentTypeForName(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || name.find('/', dot) != std::string_view::npos) return "";
  std::string ext = AsciiLower(name.substr(dot + 1));
  for (const auto& [e, type] : kTypes) {
    if (e == ext) return type;
  }
  return "";
}

bool IsInlineSafeType(std::string_view content_type) {
  std::string e = Essence(content_type);
  if (e.starts_with("audio/") || e.starts_with("video/")) return true;
  if (e == "application/pdf" || e == "text/plain") return true;
  for (std::string_view t : kInlineImages) {
    if (e == t) return true;
  }
  return false;
}

AttachmentHeaders AttachmentHeadersFor(std::string_view name, std::string_view stored_type) {
  const std::string_view by_name = ContentTypeForName(name);
  const std::string_view stored =
      LooksLikeMediaType(stored_type) ? TrimAsciiSpace(stored_type) : std::string_view();
  const std::string stored_essence = Essence(stored);
  AttachmentHeaders h;
  if (!by_name.empty()) {
    bool same = Essence(by_name) == stored_essence;
    h.content_type = same && stored.find(';') != std::string_view::npos ? stored : by_name;
  } else {
    h.content_type = stored.empty() ? "application/octet-stream" : stored;
  }
  // Never servable as script: <script src> ignores Content-Disposition, and
  // a note page with a self-hosted mermaid allows script-src 'self'. With
  // nosniff, a browser runs no script sent as bytes.
  if (IsScriptType(h.content_type)) h.content_type = "application/octet-stream";
  // The stored type may only be overruled by the name towards a download,
  // never towards inline: both must agree that the file is harmless.
  const bool stored_agrees =
      stored.empty() || stored_essence == "application/octet-stream" || IsInlineSafeType(stored);
  if (!IsInlineSafeType(h.content_type) || !stored_agrees) h.disposition = ContentDispositionAttachment(name);
  return h;
}

std::string ContentDispositionAttachment(std::string_view name) {
  if (name.empty()) name = "download";
  std::string out = "attachment; filename=\"";
  bool ascii = true;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    if (c >= 0x80) ascii = false;
    out += plain ? ch : '_';
  }
  out += '"';
  if (!ascii && IsValidUtf8(name)) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    out += "; filename*=UTF-8''";
    for (char ch : name) {
      auto c = static_cast<unsigned char>(ch);
      if (IsAttrChar(c)) {
        out += ch;
      } else {
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
  }
  return out;
}

}  // namespace folio::http
