// RequestParser: drives http-parser over one connection's input buffer and
// records where each part of the current request lies, as offsets from the
// request's first byte (never as pointers), so the owner may move or grow the
// buffer between Execute() calls. Views are made only at the end (Fill), when
// the buffer holds still until the request is answered.
//
// Chunked bodies are compacted in place: each decoded chunk is moved down over
// the (already consumed) chunk framing, so the body is one contiguous range.
// Limits come from ServerOptions; a violation records the status to send.
// Not thread-safe; one per connection.
#pragma once

#include <http_parser.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "folio/http/server.h"

namespace folio::http {

class RequestParser {
 public:
  explicit RequestParser(const ServerOptions* options);
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Parses base[from, to). base[0] is the first byte of the current request
  // and base[0, from) holds what earlier calls consumed, unchanged. Stops after
  // one complete request. Returns the bytes consumed.
  // REQUIRES: from < to; !message_complete(); error_status() == 0.
  size_t Execute(char* base, size_t from, size_t to);

  bool headers_complete() const { return headers_complete_; }
  bool message_complete() const { return message_complete_; }
  bool is_head() const { return parser_.method == HTTP_HEAD; }
  bool is_http10() const { return parser_.http_major == 1 && parser_.http_minor == 0; }
  // Whether the connection may carry another request (HTTP/1.0 and 1.1 rules).
  bool keep_alive() const { return keep_alive_; }
  // 0 while fine; else the status to answer (400, 413, 414, 431).
  int error_status() const { return error_status_; }
  const char* error_code() const { return error_code_; }
  const std::string& error_message() const { return error_message_; }
  // True once per request that sent "Expect: 100-continue" and has a body.
  bool TakeExpectContinue();
  // Body bytes still due on a Content-Length request (0 if unknown or chunked).
  uint64_t body_remaining() const;

  // Points req's views into base (method, target, path, query, headers, body,
  // keep_alive, is_head; not peer). Header views live in this parser.
  // REQUIRES: message_complete().
  void Fill(const char* base, Request* req);
  // Makes ready for the next request on the same stream.
  // REQUIRES: message_complete() and no error.
  void Reset();

 private:
  struct Span {
    size_t off = 0;
    size_t len = 0;
  };
  struct HeaderSpan {
    Span name;
    Span value;
  };
  enum class Last { kNone, kField, kValue };

  static int OnUrl(http_parser* p, const char* at, size_t len);
  static int OnHeaderField(http_parser* p, const char* at, size_t len);
  static int OnHeaderValue(http_parser* p, const char* at, size_t len);
  static int OnHeadersComplete(http_parser* p);
  static int OnBody(http_parser* p, const char* at, size_t len);
  static int OnMessageComplete(http_parser* p);

  int Fail(int status, const char* code, std::string message);
  // Extends `span` by a fragment at `at`; false if the header section is too big.
  bool Extend(Span* span, const char* at, size_t len);
  std::string_view View(const char* base, Span s) const { return {base + s.off, s.len}; }

  const ServerOptions* options_;
  http_parser parser_;
  char* base_ = nullptr;  // set only during Execute
  Span url_;
  Span body_;
  std::vector<HeaderSpan> header_spans_;  // capacity reused across requests
  std::vector<Header> headers_;           // views handed out by Fill
  Last last_ = Last::kNone;
  bool headers_complete_ = false;
  bool message_complete_ = false;
  bool keep_alive_ = false;
  bool expect_continue_ = false;
  int error_status_ = 0;
  const char* error_code_ = "";
  std::string error_message_;
};

}  // namespace folio::http
