// libFuzzer target: bytes -> RequestParser, exactly as a connection feeds it
// (in reads of varying size, one request at a time, buffer compacted between
// requests). Checks that every view lies inside the request's bytes.
// Build (clang): cmake --build B --target http_request_fuzz
// Run: ./B/bin/http_request_fuzz libs/http/fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "request_parser.h"

namespace {

void CheckInside(std::string_view v, const char* lo, const char* hi) {
  if (v.empty()) return;
  if (v.data() < lo || v.data() + v.size() > hi) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  folio::http::ServerOptions options;
  options.max_header_bytes = 2048;
  options.max_headers = 16;
  options.max_url_bytes = 512;
  options.max_body_bytes = 4096;
  // The first byte picks the read size, so splits land everywhere.
  size_t step = 1 + data[0] % 64;
  std::vector<char> buf(data + 1, data + size);
  folio::http::RequestParser parser(&options);
  size_t start = 0, parsed = 0, end = 0;
  while (parsed < buf.size() || end < buf.size()) {
    if (parsed == end) {
      if (end == buf.size()) break;
      end = std::min(buf.size(), end + step);
    }
    char* base = buf.data() + start;
    size_t n = parser.Execute(base, parsed - start, end - start);
    parsed += n;
    if (parser.error_status() != 0) break;
    if (!parser.message_complete()) continue;
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
    if (req.headers.size() > options.max_headers) abort();
    if (!req.keep_alive) break;
    parser.Reset();
    start = parsed;
  }
  return 0;
}
