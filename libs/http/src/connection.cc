#include "connection.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "folio/core/json.h"

namespace folio::http {

namespace {

constexpr size_t kInitialBuffer = 4096;
constexpr size_t kMinRead = 1024;
constexpr size_t kKeepBuffer = 64 * 1024;
constexpr uint64_t kLingerMs = 2000;

Connection* FromHandle(void* data) { return static_cast<Connection*>(data); }

}  // namespace

InputBuffer::~InputBuffer() { free(data); }

void InputBuffer::Reserve(size_t min_free) {
  if (start > 0) {
    memmove(data, data + start, end - start);
    parsed -= start;
    end -= start;
    start = 0;
  }
  if (cap - end >= min_free) return;
  size_t want = std::max({cap * 2, end + min_free, kInitialBuffer});
  char* grown = static_cast<char*>(realloc(data, want));
  if (grown == nullptr) abort();  // OOM is fatal, never a Status
  data = grown;
  cap = want;
}

void InputBuffer::ShrinkIfEmpty() {
  if (start != end || cap <= kKeepBuffer) return;
  free(data);
  data = nullptr;
  cap = 0;
  Clear();
}

Connection::Connection(Server::Impl* server)
    : server_(server), loop_(server->loop_impl), parser_(&server->options) {}

void Connection::Accept(Server::Impl* server, uv_stream_t* listener) {
  auto* c = new Connection(server);
  uv_tcp_init(&server->loop_impl->uv, &c->tcp_);
  uv_timer_init(&server->loop_impl->uv, &c->timer_);
  c->tcp_.data = c;
  c->timer_.data = c;
  server->Link(c);
  if (uv_accept(listener, c->stream()) != 0 || server->shutting_down ||
      server->open_connections > server->options.max_connections) {
    c->Close();
    return;
  }
  uv_tcp_nodelay(&c->tcp_, 1);
  sockaddr_storage ss;
  int len = sizeof(ss);
  if (uv_tcp_getpeername(&c->tcp_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET6) {
      uv_ip6_name(reinterpret_cast<sockaddr_in6*>(&ss), c->peer_, sizeof(c->peer_));
    } else {
      uv_ip4_name(reinterpret_cast<sockaddr_in*>(&ss), c->peer_, sizeof(c->peer_));
    }
  }
  c->ArmTimer(server->options.idle_timeout_ms);
  c->StartReading();
}

void Connection::Unref() {
  if (--refs_ == 0) delete this;
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  Server::Impl* server = std::exchange(server_, nullptr);
  uv_timer_stop(&timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), OnHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), OnHandleClosed);
  if (server != nullptr) server->OnConnectionClosed(this);
}

void Connection::OnHandleClosed(uv_handle_t* h) {
  Connection* c = FromHandle(h->data);
  if (--c->handles_open_ == 0) c->Unref();
}

void Connection::ArmTimer(uint64_t ms) {
  // A limit of 0 means "no limit".
  if (ms == 0) {
    uv_timer_stop(&timer_);
  } else {
    uv_timer_start(&timer_, OnTimeout, ms, 0);
  }
}

void Connection::StartReading() {
  if (reading_ || closed_) return;
  reading_ = uv_read_start(stream(), OnAlloc, OnRead) == 0;
}

void Connection::OnAlloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  Connection* c = FromHandle(h->data);
  if (c->phase_ == Phase::kLinger) c->buf_.Clear();
  c->buf_.Reserve(kMinRead);
  *buf = uv_buf_init(c->buf_.data + c->buf_.end, static_cast<unsigned>(c->buf_.cap - c->buf_.end));
}

void Connection::OnRead(uv_stream_t* s, ssize_t nread, const uv_buf_t*) {
  Connection* c = FromHandle(s->data);
  if (nread < 0) {
    c->Close();  // EOF or error: nothing left to answer on this stream
    return;
  }
  if (nread == 0 || c->phase_ == Phase::kLinger) return;
  c->buf_.end += static_cast<size_t>(nread);
  if (c->phase_ == Phase::kIdle) {
    c->phase_ = Phase::kHeaders;
    c->ArmTimer(c->server_->options.header_timeout_ms);
  }
  c->ProcessInput();
}

void Connection::ProcessInput() {
  while ((phase_ == Phase::kHeaders || phase_ == Phase::kBody) && buf_.parsed < buf_.end) {
    size_t n = parser_.Execute(buf_.data + buf_.start, buf_.parsed - buf_.start,
                               buf_.end - buf_.start);
    buf_.parsed += n;
    if (parser_.error_status() != 0) {
      RespondError(parser_.error_status(), parser_.error_code(), parser_.error_message());
      return;
    }
    if (parser_.message_complete()) {
      Dispatch();
      return;
    }
    if (phase_ == Phase::kHeaders && parser_.headers_complete()) {
      phase_ = Phase::kBody;
      ArmTimer(server_->options.body_timeout_ms);
      // Size the buffer for the announced body once (offsets survive the move).
      buf_.Reserve(static_cast<size_t>(parser_.body_remaining()));
      if (parser_.TakeExpectContinue()) WriteContinue();
    }
    if (n == 0) {
      RespondError(400, "invalid_argument", "malformed request");
      return;
    }
  }
}

void Connection::Dispatch() {
  phase_ = Phase::kInFlight;
  uv_timer_stop(&timer_);
  uv_read_stop(stream());
  reading_ = false;
  ++requests_;
  const ServerOptions& o = server_->options;
  bool limit_hit = o.max_requests_per_connection != 0 && requests_ >= o.max_requests_per_connection;
  keep_alive_ = parser_.keep_alive() && !limit_hit && !server_->shutting_down;
  is_head_ = parser_.is_head();
  http10_ = parser_.is_http10();
  Request req;
  parser_.Fill(buf_.data + buf_.start, &req);
  req.peer = peer_;
  server_->router->Dispatch(req, Responder(this));
}

void Connection::RespondError(int status, const char* code, const std::string& message) {
  phase_ = Phase::kInFlight;
  uv_timer_stop(&timer_);
  uv_read_stop(stream());
  reading_ = false;
  keep_alive_ = false;  // the stream is out of step: answer, then close
  is_head_ = false;
  Send(Response::Json(status, JsonError(code, message)));
}

void Connection::WriteContinue() {
  static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
  uv_buf_t b = uv_buf_init(const_cast<char*>(kContinue), sizeof(kContinue) - 1);
  continue_req_.data = this;
  if (uv_write(&continue_req_, stream(), &b, 1, OnContinueWritten) != 0) Close();
}

void Connection::OnContinueWritten(uv_write_t* req, int status) {
  Connection* c = FromHandle(req->data);
  if (status < 0) c->Close();
}

void Connection::OnTimeout(uv_timer_t* t) {
  Connection* c = FromHandle(t->data);
  switch (c->phase_) {
    case Phase::kHeaders:
      c->RespondError(408, "deadline_exceeded", "request headers not received in time");
      break;
    case Phase::kBody:
      c->RespondError(408, "deadline_exceeded", "request body not received in time");
      break;
    case Phase::kInFlight:
      break;
    case Phase::kIdle:
    case Phase::kWriting:
    case Phase::kLinger:
      c->Close();
      break;
  }
}

void Connection::FinishRequest() {
  ++server_->requests_served;
  keep_.reset();
  resp_body_ = std::string();
  if (!keep_alive_ || server_->shutting_down) {
    Linger();
    return;
  }
  buf_.start = buf_.parsed;
  if (buf_.start == buf_.end) {
    buf_.Clear();
    buf_.ShrinkIfEmpty();
  }
  parser_.Reset();
  StartReading();
  if (buf_.parsed < buf_.end) {  // a pipelined request is already here
    phase_ = Phase::kHeaders;
    ArmTimer(server_->options.header_timeout_ms);
    ProcessInput();
  } else {
    phase_ = Phase::kIdle;
    ArmTimer(server_->options.idle_timeout_ms);
  }
}

// Closing right after the answer would turn unread input into a RST that can
// destroy the answer in flight; so shut our side and drain briefly first.
void Connection::Linger() {
  phase_ = Phase::kLinger;
  buf_.Clear();
  shutdown_req_.data = this;
  if (uv_shutdown(&shutdown_req_, stream(), OnShutdown) != 0) {
    Close();
    return;
  }
  uint64_t idle = server_->options.idle_timeout_ms;
  ArmTimer(idle == 0 ? kLingerMs : std::min(idle, kLingerMs));
  StartReading();
}

void Connection::OnShutdown(uv_shutdown_t* req, int status) {
  Connection* c = FromHandle(req->data);
  if (status < 0) c->Close();
}

}  // namespace folio::http
