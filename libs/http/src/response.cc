// The write side: serialising responses, the zero-copy prepared path, and
// Responder (the handle that lets a handler answer exactly once).
#include <http_parser.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "connection.h"
#include "folio/core/json.h"
#include "folio/http/client.h"

namespace folio::http {

namespace {

constexpr std::string_view kClose = "Connection: close\r\n";
constexpr std::string_view kKeepAlive = "Connection: keep-alive\r\n";

std::string_view ConnectionLine(bool keep_alive, bool http10) {
  if (!keep_alive) return kClose;
  return http10 ? kKeepAlive : std::string_view("");  // non-null data: it is memcpy'd
}

}  // namespace

std::string_view ReasonPhrase(int status) {
  std::string_view s = http_status_str(static_cast<http_status>(status));
  return s == "<unknown>" ? std::string_view("Unknown") : s;
}

Response Response::Error(const Status& s, std::string_view path) {
  return Error(HttpStatusFor(s.code()), s, path);
}

Response Response::Error(int status, const Status& s, std::string_view path) {
  // Internal detail stays in the log; the client learns only that it happened.
  std::string_view message = s.code() == Code::kInternal ? std::string_view("internal error") : std::string_view(s.message());
  ErrorBody body{std::string(CodeName(s.code())), std::string(message), std::string(path)};
  return Json(status, EncodeErrorBody(body));
}

Response Response::Json(int status, std::string body) {
  return Response{status, {{"Content-Type", "application/json"}}, std::move(body)};
}

Response Response::Text(int status, std::string body) {
  return Response{status, {{"Content-Type", "text/plain; charset=utf-8"}}, std::move(body)};
}

void Connection::AnswerDropped() {
  if (closed_ || !answer_pending_) return;
  if (server_answers_) return;  // RespondError is about to answer instead
  Send(Response::Json(500, JsonError("internal", "the handler did not answer")));
}

bool Connection::BeginAnswer() {
  if (closed_ || !answer_pending_) return false;
  answer_pending_ = false;
  status_ = 0;
  if (server_->shutting_down) keep_alive_ = false;
  if (phase_ != Phase::kInFlight) AnswerBeforeBody();  // ends the reader: it may close
  return !closed_;
}

void Connection::WriteHead(int status, const std::vector<std::pair<std::string, std::string>>& headers,
                           bool has_body, uint64_t content_length) {
  std::string_view date = loop_->DateLine();
  size_t estimate = 64 + date.size() + kKeepAlive.size();
  for (const auto& [k, v] : headers) estimate += k.size() + v.size() + 4;
  out_.clear();
  out_.reserve(estimate);
  out_ += "HTTP/1.1 ";
  out_ += std::to_string(status);
  out_ += ' ';
  out_ += ReasonPhrase(status);
  out_ += "\r\n";
  for (const auto& [k, v] : headers) {
    out_.append(k).append(": ").append(v).append("\r\n");
  }
  if (has_body) out_.append("Content-Length: ").append(std::to_string(content_length)).append("\r\n");
  out_ += date;
  out_ += ConnectionLine(keep_alive_, http10_);
  out_ += "\r\n";
}

void Connection::Send(Response&& r) {
  if (!BeginAnswer()) return;
  bool has_body = StatusHasBody(r.status);
  WriteHead(r.status, r.headers, has_body, r.body.size());
  status_ = r.status;
  resp_body_ = std::move(r.body);
  uv_buf_t bufs[2] = {Buf(out_), Buf(resp_body_)};
  bool send_body = has_body && !is_head_ && !resp_body_.empty();
  StartWrite(bufs, send_body ? 2 : 1);
}

// The hot path: no allocation. The caller's head and body go out as they are;
// only the Date/Connection tail is copied, into a per-connection array.
void Connection::SendPrepared(const PreparedResponse& r) {
  if (!BeginAnswer()) return;
  // "HTTP/1.1 200 OK": the status is the three digits at 9.
  if (r.head.size() >= 12) {
    status_ = (r.head[9] - '0') * 100 + (r.head[10] - '0') * 10 + (r.head[11] - '0');
  }
  std::string_view date = loop_->DateLine();
  std::string_view conn = ConnectionLine(keep_alive_, http10_);
  size_t n = 0;
  memcpy(tail_ + n, date.data(), date.size());
  n += date.size();
  memcpy(tail_ + n, conn.data(), conn.size());
  n += conn.size();
  memcpy(tail_ + n, "\r\n", 2);
  n += 2;
  keep_ = r.keep;
  uv_buf_t bufs[5];
  unsigned k = 0;
  bufs[k++] = Buf(r.head);
  for (std::string_view more : r.more_head) {
    if (!more.empty()) bufs[k++] = Buf(more);
  }
  bufs[k++] = Buf({tail_, n});
  if (!is_head_ && !r.body.empty()) bufs[k++] = Buf(r.body);
  StartWrite(bufs, k);
}

void Connection::StartWrite(uv_buf_t* bufs, unsigned n) {
  phase_ = Phase::kWriting;
  // Inside Dispatch, with no pipelined request behind this one (finishing
  // inline would then recurse into the next): try the socket at once.
  if (dispatching_ && !streaming_out_ && buf_.parsed == buf_.end) {
    size_t total = 0;
    for (unsigned i = 0; i < n; ++i) total += bufs[i].len;
    int w = uv_try_write(stream(), bufs, n);
    if (w >= 0 && static_cast<size_t>(w) == total) {
      written_inline_ = true;
      return;
    }
    if (w < 0 && w != UV_EAGAIN) {
      Close();
      return;
    }
    // Partly written: uv_write sends the rest.
    for (size_t done = w > 0 ? static_cast<size_t>(w) : 0; done > 0 || bufs[0].len == 0;) {
      size_t step = std::min<size_t>(done, bufs[0].len);
      bufs[0].base += step;
      bufs[0].len -= step;
      done -= step;
      if (bufs[0].len == 0) {
        ++bufs;
        --n;
      }
    }
  }
  ArmTimer(server_->options.idle_timeout_ms);  // a reader that never reads
  write_req_.data = this;
  if (uv_write(&write_req_, stream(), bufs, n, OnWritten) != 0) Close();
}

void Connection::OnWritten(uv_write_t* req, int status) {
  Connection* c = static_cast<Connection*>(req->data);
  if (c->closed_ || status < 0) {
    c->keep_.reset();
    c->resp_body_ = std::string();
    c->Close();
    return;
  }
  if (c->streaming_out_) {  // only the head: the body follows in chunks
    c->head_written_ = true;
    c->OnStreamProgress();
    return;
  }
  c->FinishRequest();
}

Responder::Responder(Connection* c) : conn_(c) {
  if (conn_ != nullptr) conn_->Ref();
}

Responder::Responder(Responder&& o) noexcept : conn_(std::exchange(o.conn_, nullptr)) {}

Responder& Responder::operator=(Responder&& o) noexcept {
  if (this != &o) {
    if (conn_ != nullptr) Drop();
    conn_ = std::exchange(o.conn_, nullptr);
  }
  return *this;
}

Responder::~Responder() {
  if (conn_ != nullptr) Drop();
}

void Responder::Drop() {
  Connection* c = std::exchange(conn_, nullptr);
  c->AnswerDropped();
  c->Unref();
}

void Responder::Send(Response r) {
  Connection* c = std::exchange(conn_, nullptr);
  if (c == nullptr) return;
  c->Send(std::move(r));
  c->Unref();
}

void Responder::SendPrepared(const PreparedResponse& r) {
  Connection* c = std::exchange(conn_, nullptr);
  if (c == nullptr) return;
  c->SendPrepared(r);
  c->Unref();
}

void Responder::SendStream(int status, std::vector<std::pair<std::string, std::string>> headers,
                           uint64_t content_length, std::shared_ptr<BodySource> source) {
  Connection* c = std::exchange(conn_, nullptr);
  if (c == nullptr) return;
  c->SendStream(status, headers, content_length, std::move(source));
  c->Unref();
}

void Responder::SendError(int status, std::string_view code, std::string_view message) {
  if (conn_ == nullptr) return;
  Send(Response::Json(status, JsonError(code, message)));
}

void Responder::SendError(const Status& s) {
  if (conn_ == nullptr) return;
  Send(Response::Error(s));
}

void Responder::SetRouteClass(std::string_view route_class) {
  if (conn_ != nullptr) conn_->SetRouteClass(route_class);
}

bool Responder::connection_open() const { return conn_ != nullptr && conn_->open(); }

}  // namespace folio::http
