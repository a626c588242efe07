// RequestParser: drives http-parser over one connection's input buffer and
// records where each part of the current request lies, as offsets from the
// request's first byte (never as pointers), so the owner may move or grow the
// buffer between Execute() calls. Views are made only at the end (Fill), when
// the buffer holds still until the request is answered.
//
// Once the headers are complete, the BodyPolicy (the owner, who routes the
// request there) says how to read the body. Execute() stops after one
// complete request and, when the body streams, also once the headers are
// complete and after each body piece; when the plan says `hold`, also once
// the headers are complete (the owner decides before a body byte is parsed).
// A buffered request thus parses in one call, as it did before bodies could
// stream.
//
// A buffered body is compacted in place: each decoded chunk is moved down
// over the (already consumed) chunk framing, so the body is one contiguous
// range. A streamed body is only reported piece by piece (TakeBodyPiece); the
// parser keeps no offset into it, so the owner may drop consumed body bytes
// and move later ones down between calls (the header bytes must stay).
// Chunked trailers are parsed and ignored.
// Framing is strict (RFC 9112, issue 22): every head byte passes HeaderCheck
// (header_check.h) and every byte of a chunked body ChunkCheck
// (chunk_check.h) before http-parser sees it; an HTTP/1.1 request needs one
// Host, an HTTP/1.0 one has no Transfer-Encoding, CONNECT is refused (its
// Content-Length would frame nothing); a violation is a 400.
// Limits come from ServerOptions and the BodyPolicy; a violation records the
// status to send. Not thread-safe; one per connection.
#pragma once

#include <http_parser.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/http/server.h"
#include "chunk_check.h"
#include "header_check.h"

namespace folio::http {

class RequestParser;

struct BodyPlan {
  bool streaming = false;       // else buffered
  uint64_t max_body_bytes = 0;  // past it 413
  bool hold = false;            // stop once the headers are complete, body or not
};

// Decides, once a request's headers are complete, how its body is read.
// Buffered: collected in place. Streaming: reported piece by piece (only if
// the request has a body). Called inside Execute(); must not touch the
// buffer. Views from parser.Path(base) are valid during the call.
class BodyPolicy {
 public:
  virtual BodyPlan PlanBody(const RequestParser& parser, const char* base) = 0;

 protected:
  ~BodyPolicy() = default;
};

class RequestParser {
 public:
  // policy == nullptr: every body buffered, up to options->max_body_bytes.
  RequestParser(const ServerOptions* options, BodyPolicy* policy);
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Parses base[from, to). base[0] is the first byte of the current request
  // and base[0, from) holds what earlier calls consumed, unchanged (but see
  // streaming above). Returns the bytes consumed, possibly 0 at a stop.
  // REQUIRES: from < to; !message_complete(); error_status() == 0.
  size_t Execute(char* base, size_t from, size_t to);

  bool headers_complete() const { return headers_complete_; }
  // The body streams (the BodyPolicy said so and there is a body).
  bool streaming() const { return streaming_; }
  // Chunked, or Content-Length > 0. REQUIRES: headers_complete().
  bool has_body() const { return has_body_; }
  // Streaming: the piece the last Execute() stopped after (a view into
  // `base`, the same base as that call); false if it stopped for another
  // reason. Each piece is returned once.
  bool TakeBodyPiece(const char* base, std::string_view* piece);
  bool message_complete() const { return message_complete_; }
  bool is_head() const { return parser_.method == HTTP_HEAD; }
  // "GET", ... REQUIRES: headers_complete().
  std::string_view method() const { return method_; }
  bool is_http10() const { return parser_.http_major == 1 && parser_.http_minor == 0; }
  // Whether the connection may carry another request (HTTP/1.0 and 1.1 rules).
  // Known once the headers are complete.
  bool keep_alive() const { return keep_alive_; }
  // 0 while fine; else the status to answer (400, 413, 414, 431).
  int error_status() const { return error_status_; }
  const char* error_code() const { return error_code_; }
  const std::string& error_message() const { return error_message_; }
  // True once per request that sent "Expect: 100-continue" and has a body.
  bool TakeExpectContinue();
  // Body bytes still due on a Content-Length request (0 if unknown or chunked).
  uint64_t body_remaining() const;

  // The request path (percent-encoded, without query). REQUIRES: headers_complete().
  std::string_view Path(const char* base) const;
  // Points req's views into base (method, target, path, query, headers, body,
  // keep_alive, is_head; not peer). Header views live in this parser. The
  // body is what is buffered so far: empty when streaming.
  // REQUIRES: headers_complete().
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
  static const http_parser_settings& Settings();
  // Runs our framing rules over base[from, to) ahead of http-parser: returns
  // `to`, or the offset of the first byte that breaks one.
  size_t CheckFraming(const char* base, size_t from, size_t to);
  const char* FramingError() const;  // the rule broken, or nullptr
  void FailFraming();
  // After http_parser_execute took n bytes from `from`: its errors, a broken
  // rule it has reached, the size limits.
  void CheckOutcome(size_t from, size_t n, bool at_broken_rule);
  // Extends `span` by a fragment at `at`; false if the header section is too big.
  bool Extend(Span* span, const char* at, size_t len);
  std::string_view View(const char* base, Span s) const { return {base + s.off, s.len}; }
  // Run in OnHeadersComplete: find path and query, then apply the policy.
  void SplitTarget();
  int PlanBody();

  const ServerOptions* options_;
  BodyPolicy* policy_;
  http_parser parser_;
  HeaderCheck check_;     // the head's framing rules, ahead of parser_
  ChunkCheck chunks_;     // a chunked body's, likewise
  char* base_ = nullptr;  // set only during Execute
  std::string_view method_;  // static string from http-parser
  Span url_;
  Span path_;   // inside url_, unless root_path_
  Span query_;
  bool root_path_ = false;  // absolute-form without a path: "/"
  Span body_;   // buffered body
  Span piece_;  // streaming: the last piece, until taken
  std::vector<HeaderSpan> header_spans_;  // capacity reused across requests
  std::vector<Header> headers_;           // views handed out by Fill
  Last last_ = Last::kNone;
  bool headers_complete_ = false;
  bool streaming_ = false;
  bool has_body_ = false;
  bool has_piece_ = false;
  bool yielded_ = false;  // paused at streaming headers or a piece; Execute goes on
  bool message_complete_ = false;
  bool keep_alive_ = false;
  bool expect_continue_ = false;
  uint64_t body_limit_ = 0;
  uint64_t body_bytes_ = 0;  // decoded body bytes so far
  uint64_t consumed_ = 0;    // raw bytes of this request consumed so far
  uint64_t checked_ = 0;     // raw bytes of this request the checks saw (>= consumed_)
  int error_status_ = 0;
  const char* error_code_ = "";
  std::string error_message_;
};

}  // namespace folio::http
