// libFuzzer target: bytes -> RequestParser, exactly as a connection feeds it
// (in reads of varying size, one request at a time, buffer compacted between
// requests; when bodies stream, consumed body bytes dropped after each piece). Checks that every view and
// piece lies inside the bytes it must, that limits hold, and that every head
// the parser completes keeps the strict framing rules (issue 22), checked
// here by plain string code apart from header_check.cc.
// Seeds: tests/fuzz/corpus/http_request_fuzz; build and run: tests/fuzz/README.md.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "folio/core/text.h"

#include "request_parser.h"

namespace {

void CheckInside(std::string_view v, const char* lo, const char* hi) {
  if (v.empty()) return;
  if (v.data() < lo || v.data() + v.size() > hi) abort();
}

bool IsTchar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c != '\0' && std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos);
}

// One header line of a completed head: "name:value", the name all tchar,
// no obs-fold, no control byte but HTAB in the value. Counts the framing fields.
void CheckField(std::string_view line, int* lengths, int* encodings, int* hosts) {
  size_t colon = line.find(':');
  if (colon == 0 || colon == std::string_view::npos) abort();
  std::string_view name = line.substr(0, colon);
  for (char c : name) {
    if (!IsTchar(c)) abort();
  }
  for (char c : line.substr(colon + 1)) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) abort();
  }
  if (folio::EqualsIgnoreAsciiCase(name, "content-length")) ++*lengths;
  if (folio::EqualsIgnoreAsciiCase(name, "transfer-encoding")) ++*encodings;
  if (folio::EqualsIgnoreAsciiCase(name, "host")) ++*hosts;
}

// A head the parser completed, at the start of `bytes`: CRLF line ends only,
// no NUL or other control byte in the request line, one Content-Length or
// one Transfer-Encoding at most, one Host (HTTP/1.1: exactly one).
void CheckStrictHead(std::string_view bytes) {
  while (bytes.substr(0, 2) == "\r\n") bytes.remove_prefix(2);  // empty lines first
  size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) abort();  // complete without a CRLF blank line
  std::string_view head = bytes.substr(0, end + 2);
  size_t eol = head.find("\r\n");
  std::string_view request_line = head.substr(0, eol);
  for (char c : request_line) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) abort();
  }
  int lengths = 0, encodings = 0, hosts = 0;
  for (size_t at = eol + 2; at < head.size();) {
    size_t next = head.find("\r\n", at);
    CheckField(head.substr(at, next - at), &lengths, &encodings, &hosts);
    at = next + 2;
  }
  if (lengths + encodings > 1 || hosts > 1) abort();
  if (request_line.ends_with("HTTP/1.1") && hosts != 1) abort();
}

// Streams every body (as a HandleStreaming route would) or none.
struct Policy final : folio::http::BodyPolicy {
  folio::http::BodyPlan plan;
  folio::http::BodyPlan PlanBody(const folio::http::RequestParser& parser, const char* base) override {
    std::string_view path = parser.Path(base);
    if (!path.empty() && path != "/" && path.data() < base) abort();
    return plan;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  folio::http::ServerOptions options;
  options.max_header_bytes = 2048;
  options.max_headers = 16;
  options.max_url_bytes = 512;
  options.max_body_bytes = 4096;
  // The first byte picks the read size, so splits land everywhere, and
  // whether bodies stream (as on a HandleStreaming route, with a limit of
  // its own) with consumed body bytes dropped between reads, as the
  // connection does.
  size_t step = 1 + data[0] % 64;
  bool streaming = (data[0] & 0x40) != 0;
  uint64_t stream_limit = (data[0] & 0x80) ? 100 : 1 << 20;
  std::vector<char> buf(data + 1, data + size);
  Policy policy;
  policy.plan = {streaming, streaming ? stream_limit : options.max_body_bytes};
  folio::http::RequestParser parser(&options, &policy);
  size_t start = 0, parsed = 0, end = 0;
  size_t keep = 0;  // streaming: first droppable byte (absolute)
  uint64_t streamed = 0;
  while (parsed < buf.size() || end < buf.size()) {
    if (parsed == end) {
      if (end == buf.size()) break;
      end = std::min(buf.size(), end + step);
    }
    char* base = buf.data() + start;
    bool had_headers = parser.headers_complete();
    size_t n = parser.Execute(base, parsed - start, end - start);
    parsed += n;
    if (parser.error_status() != 0) break;
    std::string_view piece;
    if (parser.TakeBodyPiece(base, &piece)) {
      if (!streaming) abort();
      CheckInside(piece, buf.data() + keep, buf.data() + end);
      streamed += piece.size();
      if (streamed > stream_limit) abort();
      // Drop what the parser consumed, as Connection::DropStreamedBytes does.
      if (parsed > keep) {
        buf.erase(buf.begin() + static_cast<std::ptrdiff_t>(keep), buf.begin() + static_cast<std::ptrdiff_t>(parsed));
        end -= parsed - keep;
        parsed = keep;
      }
      continue;
    }
    if (!had_headers && parser.headers_complete()) {
      if (parser.streaming() != (streaming && parser.has_body())) abort();
      CheckStrictHead(std::string_view(base, end - start));  // the last LF may be unparsed yet
      keep = parsed;  // a streamed body starts here (the parser stopped)
      streamed = 0;
    }
    if (!parser.message_complete()) {
      // The connection answers 400 when a call makes no progress at all.
      if (n == 0 && had_headers == parser.headers_complete()) break;
      continue;
    }
    folio::http::Request req;
    parser.Fill(base, &req);
    const char* hi = buf.data() + parsed;
    CheckInside(req.target, base, hi);
    if (req.path != "/") CheckInside(req.path, base, hi);  // absolute-form "http://h" -> "/"
    CheckInside(req.query, base, hi);
    CheckInside(req.body, base, hi);
    for (const auto& h : req.headers) {
      CheckInside(h.name, base, hi);
      CheckInside(h.value, base, hi);
    }
    if (req.body.size() > options.max_body_bytes) abort();
    if (streaming && parser.has_body() && !req.body.empty()) abort();
    if (req.headers.size() > options.max_headers) abort();
    if (!req.keep_alive) break;
    parser.Reset();
    start = parsed;
  }
  return 0;
}
