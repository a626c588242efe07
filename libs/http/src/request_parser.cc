#include "request_parser.h"

#include <climits>
#include <cstdint>
#include <cstdlib>
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
uint64_t RawLimit(const ServerOptions& o, uint64_t body_limit) {
  uint64_t slack = o.max_header_bytes + uint64_t{65536};
  if (body_limit > (UINT64_MAX - slack) / 2) return UINT64_MAX;
  return slack + 2 * body_limit;
}

}  // namespace

RequestParser::RequestParser(const ServerOptions* options, BodyPolicy* policy)
    : options_(options), policy_(policy) {
  http_parser_init(&parser_, HTTP_REQUEST);
  parser_.data = this;
}

const http_parser_settings& RequestParser::Settings() {
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
  return settings;
}

size_t RequestParser::Execute(char* base, size_t from, size_t to) {
  if (yielded_) {
    yielded_ = false;
    http_parser_pause(&parser_, 0);
  }
  // http-parser gets only the bytes our framing rules passed. The request
  // fails at the first byte that breaks one, once http-parser took those
  // before it (so a streamed body's earlier pieces are delivered first).
  size_t stop = CheckFraming(base, from, to);
  if (stop == from) {  // from < to: a rule broke at from
    FailFraming();
    return 0;
  }
  base_ = base;
  size_t n = http_parser_execute(&parser_, &Settings(), base + from, stop - from);
  base_ = nullptr;
  consumed_ += n;
  if (error_status_ == 0) CheckOutcome(from, n, stop < to && from + n == stop);
  return n;
}

void RequestParser::CheckOutcome(size_t from, size_t n, bool at_broken_rule) {
  http_errno err = HTTP_PARSER_ERRNO(&parser_);
  if (err == HPE_HEADER_OVERFLOW) {
    Fail(431, "too_large", "request headers too large");
  } else if (err != HPE_OK && err != HPE_PAUSED) {
    Fail(400, "invalid_argument", std::string("malformed request: ") + http_errno_description(err));
  } else if (err == HPE_OK && at_broken_rule) {
    FailFraming();  // paused: after the owner took the piece, on the next call
  } else if (!headers_complete_ && from + n > options_->max_header_bytes) {
    Fail(431, "too_large", "request headers too large");
  } else if (!message_complete_ && headers_complete_ && consumed_ > RawLimit(*options_, body_limit_)) {
    Fail(413, "too_large", "request body too large");
  }
}

// Both counters are raw bytes of this request, whatever the owner dropped
// since (streamed body bytes): base[from] is raw byte consumed_. Once a rule
// broke, the checks stop there for good.
size_t RequestParser::CheckFraming(const char* base, size_t from, size_t to) {
  size_t at = from + static_cast<size_t>(checked_ - consumed_);
  if (FramingError() == nullptr) {
    size_t begin = at;
    bool ok = check_.done() || check_.Scan(base, &at, to);
    if (ok && check_.done() && check_.chunked() && !chunks_.done()) chunks_.Scan(base, &at, to);
    checked_ += at - begin;
  }
  return FramingError() != nullptr ? at : to;
}

const char* RequestParser::FramingError() const {
  return check_.error() != nullptr ? check_.error() : chunks_.error();
}

void RequestParser::FailFraming() {
  Fail(400, "invalid_argument", std::string("malformed request: ") + FramingError());
}

// "/a?b#c" -> path "/a", query "b"; absolute-form "http://h/p?q" -> "/p", "q";
// "http://h" -> "/". Done once: the policy routes on the path, Fill hands it out.
void RequestParser::SplitTarget() {
  constexpr size_t npos = std::string_view::npos;
  std::string_view t = View(base_, url_);
  size_t begin = 0;
  if (!t.empty() && t[0] != '/') {
    size_t scheme = t.find("://");
    if (scheme != npos) {
      begin = t.find('/', scheme + 3);
      if (begin == npos) {
        root_path_ = true;
        return;
      }
    }
  }
  std::string_view p = t.substr(begin);
  p = p.substr(0, p.find('#'));
  size_t q = p.find('?');
  path_ = {url_.off + begin, q == npos ? p.size() : q};
  if (q != npos) query_ = {url_.off + begin + q + 1, p.size() - q - 1};
}

int RequestParser::PlanBody() {
  SplitTarget();
  BodyPlan plan = policy_ != nullptr ? policy_->PlanBody(*this, base_)
                                     : BodyPlan{false, options_->max_body_bytes};
  streaming_ = plan.streaming && has_body_;
  body_limit_ = plan.max_body_bytes;
  if (has_body_ && body_remaining() > body_limit_) return Fail(413, "too_large", "request body too large");
  if (streaming_ || plan.hold) {
    // Stop, so the owner starts the stream (or decides) outside the parser's callbacks.
    yielded_ = true;
    http_parser_pause(&parser_, 1);
  }
  return 0;
}

bool RequestParser::TakeBodyPiece(const char* base, std::string_view* piece) {
  if (!has_piece_) return false;
  has_piece_ = false;
  *piece = View(base, piece_);
  return true;
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
  if (self->headers_complete_) return 0;  // a chunked trailer: ignored
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
  if (self->headers_complete_) return 0;
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
  self->method_ = http_method_str(static_cast<http_method>(p->method));
  if (p->http_major != 1) return self->Fail(400, "invalid_argument", "unsupported HTTP version");
  // RFC 9112 §3.2: a server MUST refuse an HTTP/1.1 request without Host.
  if (p->http_minor >= 1 && !self->check_.has_host()) {
    return self->Fail(400, "invalid_argument", "malformed request: HTTP/1.1 request without Host");
  }
  // §6.1: an HTTP/1.0 Transfer-Encoding is faulty framing.
  if (p->http_minor == 0 && self->check_.chunked()) {
    return self->Fail(400, "invalid_argument", "malformed request: Transfer-Encoding in HTTP/1.0");
  }
  // http-parser reads no body after CONNECT: its Content-Length bytes would
  // be parsed as the next request. No folio service serves CONNECT.
  if (p->method == HTTP_CONNECT) return self->Fail(400, "invalid_argument", "CONNECT is not supported");
  bool chunked = (p->flags & F_CHUNKED) != 0;
  bool has_length = p->content_length != ULLONG_MAX;
  self->has_body_ = chunked || (has_length && p->content_length > 0);
  self->keep_alive_ = http_should_keep_alive(p) != 0;
  if (self->has_body_ && p->http_minor >= 1) {
    for (const HeaderSpan& h : self->header_spans_) {
      if (EqualsIgnoreAsciiCase(self->View(self->base_, h.name), "expect") &&
          EqualsIgnoreAsciiCase(TrimTrailingSpace(self->View(self->base_, h.value)),
                                "100-continue")) {
        self->expect_continue_ = true;
      }
    }
  }
  return self->PlanBody();
}

int RequestParser::OnBody(http_parser* p, const char* at, size_t len) {
  RequestParser* self = Self(p);
  size_t off = static_cast<size_t>(at - self->base_);
  if (self->streaming_) {
    self->body_bytes_ += len;
    if (self->body_bytes_ > self->body_limit_) {
      return self->Fail(413, "too_large", "request body too large");
    }
    self->piece_ = {off, len};
    self->has_piece_ = true;
    self->yielded_ = true;
    http_parser_pause(p, 1);  // the owner hands the piece on before parsing more
    return 0;
  }
  Span& body = self->body_;
  if (body.len == 0) {
    body.off = off;
  } else if (off != body.off + body.len) {
    // A later chunk: slide it down over the consumed framing (dest < src).
    memmove(self->base_ + body.off + body.len, at, len);
  }
  body.len += len;
  if (body.len > self->body_limit_) {
    return self->Fail(413, "too_large", "request body too large");
  }
  return 0;
}

int RequestParser::OnMessageComplete(http_parser* p) {
  RequestParser* self = Self(p);
  self->message_complete_ = true;  // keep_alive_ was settled with the headers
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

std::string_view RequestParser::Path(const char* base) const {
  return root_path_ ? std::string_view("/") : View(base, path_);
}

void RequestParser::Fill(const char* base, Request* req) {
  req->method = method_;
  req->target = View(base, url_);
  req->path = Path(base);
  req->query = View(base, query_);
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
  check_.Reset();
  chunks_.Reset();
  url_ = {};
  path_ = {};
  query_ = {};
  root_path_ = false;
  body_ = {};
  piece_ = {};
  header_spans_.clear();
  last_ = Last::kNone;
  headers_complete_ = false;
  streaming_ = false;
  has_body_ = false;
  has_piece_ = false;
  yielded_ = false;
  body_limit_ = 0;
  body_bytes_ = 0;
  consumed_ = 0;
  checked_ = 0;
  message_complete_ = false;
  keep_alive_ = false;
  expect_continue_ = false;
}

}  // namespace folio::http
