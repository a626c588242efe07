#include "request_parser.h"

#include <climits>
#include <cstring>
#include <string_view>

#include "folio/core/status.h"
#include "folio/core/text.h"

namespace folio::http {

namespace {

RequestParser* Self(http_parser* p) { return static_cast<RequestParser*>(p->data); }

std::string_view TrimTrailingSpace(std::string_view v) {
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

// Bytes a chunked request may occupy on the wire before we call it abuse
// (chunk framing and extensions are not body, but they do fill the buffer).
size_t RawLimit(const ServerOptions& o) { return o.max_header_bytes + 2 * o.max_body_bytes + 65536; }

}  // namespace

RequestParser::RequestParser(const ServerOptions* options) : options_(options) {
  http_parser_init(&parser_, HTTP_REQUEST);
  parser_.data = this;
}

size_t RequestParser::Execute(char* base, size_t from, size_t to) {
  static const http_parser_settings settings = [] {
    http_parser_settings s;
    http_parser_settings_init(&s);
    s.on_url = OnUrl;
    s.on_header_field = OnHeaderField;
    s.on_header_value = OnHeaderValue;
    s.on_headers_complete = OnHeadersComplete;
    s.on_body = OnBody;
    s.on_message_complete = OnMessageComplete;
    return s;
  }();
  base_ = base;
  size_t n = http_parser_execute(&parser_, &settings, base + from, to - from);
  base_ = nullptr;
  http_errno err = HTTP_PARSER_ERRNO(&parser_);
  if (err == HPE_PAUSED || error_status_ != 0) return n;
  if (err == HPE_HEADER_OVERFLOW) {
    Fail(431, "too_large", "request headers too large");
  } else if (err != HPE_OK) {
    Fail(400, "invalid_argument", std::string("malformed request: ") + http_errno_description(err));
  } else if (!headers_complete_ && from + n > options_->max_header_bytes) {
    Fail(431, "too_large", "request headers too large");
  } else if (!message_complete_ && from + n > RawLimit(*options_)) {
    Fail(413, "too_large", "request body too large");
  }
  return n;
}

int RequestParser::Fail(int status, const char* code, std::string message) {
  if (error_status_ == 0) {
    error_status_ = status;
    error_code_ = code;
    error_message_ = std::move(message);
  }
  return -1;
}

bool RequestParser::Extend(Span* span, const char* at, size_t len) {
  size_t off = static_cast<size_t>(at - base_);
  // Fragments of one element are contiguous because the buffer keeps every
  // byte of the current request; extending to the new end also covers
  // obs-folded values.
  if (span->len == 0) span->off = off;
  span->len = off + len - span->off;
  return off + len <= options_->max_header_bytes;
}

int RequestParser::OnUrl(http_parser* p, const char* at, size_t len) {
  RequestParser* self = Self(p);
  bool fits = self->Extend(&self->url_, at, len);
  if (self->url_.len > self->options_->max_url_bytes) {
    return self->Fail(414, "too_large", "request target too long");
  }
  return fits ? 0 : self->Fail(431, "too_large", "request headers too large");
}

int RequestParser::OnHeaderField(http_parser* p, const char* at, size_t len) {
  RequestParser* self = Self(p);
  if (self->last_ != Last::kField) {
    if (self->header_spans_.size() >= self->options_->max_headers) {
      return self->Fail(431, "too_large", "too many request headers");
    }
    self->header_spans_.emplace_back();
    self->last_ = Last::kField;
  }
  if (!self->Extend(&self->header_spans_.back().name, at, len)) {
    return self->Fail(431, "too_large", "request headers too large");
  }
  return 0;
}

int RequestParser::OnHeaderValue(http_parser* p, const char* at, size_t len) {
  RequestParser* self = Self(p);
  self->last_ = Last::kValue;
  if (self->header_spans_.empty()) return 0;
  if (!self->Extend(&self->header_spans_.back().value, at, len)) {
    return self->Fail(431, "too_large", "request headers too large");
  }
  return 0;
}

int RequestParser::OnHeadersComplete(http_parser* p) {
  RequestParser* self = Self(p);
  self->headers_complete_ = true;
  if (p->http_major != 1) return self->Fail(400, "invalid_argument", "unsupported HTTP version");
  bool chunked = (p->flags & F_CHUNKED) != 0;
  bool has_length = p->content_length != ULLONG_MAX;
  if (!chunked && has_length && p->content_length > self->options_->max_body_bytes) {
    return self->Fail(413, "too_large", "request body too large");
  }
  bool has_body = chunked || (has_length && p->content_length > 0);
  if (has_body && p->http_major == 1 && p->http_minor >= 1) {
    for (const HeaderSpan& h : self->header_spans_) {
      if (EqualsIgnoreAsciiCase(self->View(self->base_, h.name), "expect") &&
          EqualsIgnoreAsciiCase(TrimTrailingSpace(self->View(self->base_, h.value)),
                                "100-continue")) {
        self->expect_continue_ = true;
      }
    }
  }
  return 0;
}

int RequestParser::OnBody(http_parser* p, const char* at, size_t len) {
  RequestParser* self = Self(p);
  size_t off = static_cast<size_t>(at - self->base_);
  Span& body = self->body_;
  if (body.len == 0) {
    body.off = off;
  } else if (off != body.off + body.len) {
    // A later chunk: slide it down over the consumed framing (dest < src).
    memmove(self->base_ + body.off + body.len, at, len);
  }
  body.len += len;
  if (body.len > self->options_->max_body_bytes) {
    return self->Fail(413, "too_large", "request body too large");
  }
  return 0;
}

int RequestParser::OnMessageComplete(http_parser* p) {
  RequestParser* self = Self(p);
  self->message_complete_ = true;
  self->keep_alive_ = http_should_keep_alive(p) != 0;
  // Pausing makes http_parser_execute return right after this request, so
  // pipelined requests wait in the buffer until this one is answered.
  http_parser_pause(p, 1);
  return 0;
}

bool RequestParser::TakeExpectContinue() {
  bool e = expect_continue_;
  expect_continue_ = false;
  return e;
}

uint64_t RequestParser::body_remaining() const {
  if (!headers_complete_ || (parser_.flags & F_CHUNKED) || parser_.content_length == ULLONG_MAX) {
    return 0;
  }
  return parser_.content_length;
}

void RequestParser::Fill(const char* base, Request* req) {
  req->method = http_method_str(static_cast<http_method>(parser_.method));
  req->target = View(base, url_);
  std::string_view path = req->target;
  // Absolute-form ("http://host/p?q"): keep the path and what follows.
  if (!path.empty() && path[0] != '/') {
    size_t scheme = path.find("://");
    if (scheme != std::string_view::npos) {
      size_t slash = path.find('/', scheme + 3);
      path = slash == std::string_view::npos ? std::string_view("/") : path.substr(slash);
    }
  }
  path = path.substr(0, path.find('#'));
  size_t q = path.find('?');
  req->query = q == std::string_view::npos ? std::string_view() : path.substr(q + 1);
  req->path = path.substr(0, q);
  headers_.clear();
  for (const HeaderSpan& h : header_spans_) {
    headers_.push_back({View(base, h.name), TrimTrailingSpace(View(base, h.value))});
  }
  req->headers = headers_;
  req->body = View(base, body_);
  req->keep_alive = keep_alive_;
  req->is_head = is_head();
}

void RequestParser::Reset() {
  http_parser_pause(&parser_, 0);
  url_ = {};
  body_ = {};
  header_spans_.clear();
  last_ = Last::kNone;
  headers_complete_ = false;
  message_complete_ = false;
  keep_alive_ = false;
  expect_continue_ = false;
}

}  // namespace folio::http
