#include "connection.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>


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

void InputBuffer::Trim() {
  if (cap <= kKeepBuffer) return;
  if (start == end) {
    free(data);
    data = nullptr;
    cap = 0;
    Clear();
    return;
  }
  if (end - start > kKeepBuffer / 2) return;  // still in use: the next request's bytes
  Reserve(0);  // to the front, so that the bytes left fit the smaller buffer
  char* smaller = static_cast<char*>(realloc(data, kKeepBuffer));
  if (smaller == nullptr) abort();
  data = smaller;
  cap = kKeepBuffer;
}

Connection::Connection(Server::Impl* server)
    : server_(server), loop_(server->loop_impl), parser_(&server->options, this),
      budget_(server->options.body_budget) {}

Connection* Connection::Create(Server::Impl* server) {
  auto* c = new Connection(server);
  uv_tcp_init(&server->loop_impl->uv, &c->tcp_);
  uv_timer_init(&server->loop_impl->uv, &c->timer_);
  c->tcp_.data = c;
  c->timer_.data = c;
  server->Link(c);
  return c;
}

void Connection::Accept(Server::Impl* server, uv_stream_t* listener) {
  Connection* c = Create(server);
  if (uv_accept(listener, c->stream()) != 0 || server->shutting_down) {
    c->Close();
    return;
  }
  c->Begin();
}

void Connection::Adopt(Server::Impl* server, int fd) {
  Connection* c = Create(server);
  if (uv_tcp_open(&c->tcp_, fd) != 0) {
    close(fd);  // not the handle's yet
    c->Close();
    return;
  }
  c->Begin();
}

void Connection::Begin() {
  if (server_->open_connections > server_->options.max_connections) {
    Close();
    return;
  }
  uv_tcp_nodelay(&tcp_, 1);
  sockaddr_storage ss;
  int len = sizeof(ss);
  if (uv_tcp_getpeername(&tcp_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET6) {
      uv_ip6_name(reinterpret_cast<sockaddr_in6*>(&ss), peer_, sizeof(peer_));
    } else {
      uv_ip4_name(reinterpret_cast<sockaddr_in*>(&ss), peer_, sizeof(peer_));
    }
  }
  ArmTimer(IdleTimeoutMs());
  StartReading();
}

void Connection::OnServerShutdown() {
  if (phase_ != Phase::kIdle) return;  // answered with Connection: close when it is done
  if (server_->options.shutdown_idle_grace_ms == 0) {
    Close();
    return;
  }
  ArmTimer(server_->options.shutdown_idle_grace_ms);
}

uint64_t Connection::IdleTimeoutMs() const {
  const ServerOptions& o = server_->options;
  return server_->shutting_down ? o.shutdown_idle_grace_ms : o.idle_timeout_ms;
}

void Connection::Unref() {
  if (--refs_ == 0) delete this;
}

void Connection::Close(Code why, const char* message) {
  if (closed_) return;
  closed_ = true;
  Server::Impl* server = std::exchange(server_, nullptr);
  uv_timer_stop(&timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer_), OnHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), OnHandleClosed);
  if (server != nullptr) server->OnConnectionClosed(this);
  // Last, so that whatever these callbacks do sees a closed connection.
  if (reader_ != nullptr) AbortReader(Status(why, message));
  if (source_ != nullptr) CancelSource(Status(why, message));
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

void Connection::StopReading() {
  if (!reading_) return;
  uv_read_stop(stream());
  reading_ = false;
}

void Connection::OnAlloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  Connection* c = FromHandle(h->data);
  if (c->phase_ == Phase::kLinger) c->buf_.Clear();
  if (c->phase_ == Phase::kStreamBody) c->DropStreamedBytes();
  c->buf_.Reserve(kMinRead);
  *buf = uv_buf_init(c->buf_.data + c->buf_.end, static_cast<unsigned>(c->buf_.cap - c->buf_.end));
}

void Connection::OnRead(uv_stream_t* s, ssize_t nread, const uv_buf_t*) {
  Connection* c = FromHandle(s->data);
  if (nread < 0) {
    c->Close(Code::kUnavailable, "client closed the connection");  // nothing left to answer
    return;
  }
  if (nread == 0 || c->phase_ == Phase::kLinger) return;
  c->buf_.end += static_cast<size_t>(nread);
  if (c->phase_ == Phase::kBody && !c->CoverGrowingBody()) return;  // over the budget: answered
  if (c->phase_ == Phase::kIdle) {
    c->phase_ = Phase::kHeaders;
    c->BeginTiming();
    c->ArmTimer(c->server_->options.header_timeout_ms);
  }
  c->ProcessInput();
}

bool Connection::Parsing() const {
  return !closed_ && (phase_ == Phase::kHeaders || phase_ == Phase::kBody ||
                      (phase_ == Phase::kStreamBody && !body_paused_));
}

void Connection::ProcessInput() {
  while (Parsing() && buf_.parsed < buf_.end) {
    const char* base = buf_.data + buf_.start;
    size_t n = parser_.Execute(buf_.data + buf_.start, buf_.parsed - buf_.start,
                               buf_.end - buf_.start);
    buf_.parsed += n;
    if (parser_.error_status() != 0) {
      int status = parser_.error_status();
      RespondError(status, Status(CodeForHttpStatus(status), parser_.error_message()));
      return;
    }
    std::string_view piece;
    if (phase_ == Phase::kStreamBody && parser_.TakeBodyPiece(base, &piece)) {
      DeliverPiece(piece);  // may pause, answer, abort or close: the loop re-checks
      continue;
    }
    if (parser_.message_complete()) {
      if (phase_ == Phase::kStreamBody) {
        EndStream();
      } else {
        Dispatch();
      }
      return;
    }
    if (phase_ == Phase::kHeaders && parser_.headers_complete()) {
      OnHeadersDone();
      continue;
    }
    if (n == 0) {
      RespondError(400, Status::Invalid("malformed request"));
      return;
    }
  }
}

// Routes once, inside the parser's headers callback, so that a buffered
// request still parses in one Execute. A body-less request on a streaming
// route is read the buffered way (the parser streams only a body): its
// handler runs once the request is complete, so refusing it keeps the
// connection. The parser holds after the headers when the route has a
// AdmissionCheck, the body must fit the budget, or no route takes the body, so
// that no body byte is parsed before that is settled (OnHeadersDone); the
// edge's GETs need none of it and still parse in one Execute.
BodyPlan Connection::PlanBody(const RequestParser& parser, const char* base) {
  route_ = RouterInternal::Find(*server_->router, parser.method(), parser.Path(base));
  route_class_ = route_ != nullptr ? std::string_view(route_->route_class)
                                   : RouterInternal::UnroutedClass(*server_->router);
  admission_pending_ = route_ != nullptr && route_->admission != nullptr;
  unrouted_body_ = route_ == nullptr && parser.has_body() && !RouterInternal::HasFallback(*server_->router);
  bool hold = admission_pending_ || unrouted_body_ || (budget_ != nullptr && parser.has_body());
  if (route_ != nullptr && route_->streaming) return {true, route_->max_body_bytes, hold};
  uint64_t limit = server_->options.max_body_bytes;
  if (route_ != nullptr && route_->max_body_bytes < limit) limit = route_->max_body_bytes;  // a route's own
  return {false, limit, hold};
}

void Connection::OnHeadersDone() {
  if (unrouted_body_) {
    AnswerUnrouted();  // 404 or 405, the body unread
    return;
  }
  if (admission_pending_) {
    RunAdmission();
    if (phase_ != Phase::kHeaders) return;  // waiting for the verdict, or refused
  }
  if (!parser_.has_body()) return;  // held for its check only: parsing completes it
  if (!ReserveBody()) return;       // over the budget: answered
  if (parser_.streaming()) {
    StartStreaming();
    return;
  }
  phase_ = Phase::kBody;
  ArmTimer(server_->options.body_timeout_ms);
  // Size the buffer for the announced body once (offsets survive the move),
  // with the padding the handler may read past it (kBodyPadding).
  buf_.Reserve(static_cast<size_t>(parser_.body_remaining()) + kBodyPadding);
  if (parser_.TakeExpectContinue()) WriteContinue();
}

void Connection::BeginRequest() {
  ++requests_;
  const ServerOptions& o = server_->options;
  bool limit_hit = o.max_requests_per_connection != 0 && requests_ >= o.max_requests_per_connection;
  keep_alive_ = parser_.keep_alive() && !limit_hit && !server_->shutting_down;
  is_head_ = parser_.is_head();
  http10_ = parser_.is_http10();
  answer_pending_ = true;
}

// Reading stops while a request is in flight, but only once the handler
// has returned without its answer fully written: stopping and restarting
// costs two or three epoll_ctl calls per request (libuv re-adds the fd).
void Connection::Dispatch() {
  phase_ = Phase::kInFlight;
  uv_timer_stop(&timer_);
  BeginRequest();
  // kBodyPadding after the body (a chunked one, or one that came with the
  // headers, may end where the buffer does). Compacting moves nothing the
  // parser holds: its offsets count from buf_.start.
  if (parser_.has_body() && buf_.cap - buf_.end < kBodyPadding) buf_.Reserve(kBodyPadding);
  Request req;
  parser_.Fill(buf_.data + buf_.start, &req);
  req.peer = peer_;
  dispatching_ = true;
  Ref();  // the handler's Responder may drop the last other reference
  if (route_ == nullptr) {
    server_->router->Dispatch(req, Responder(this));  // 405, fallback or 404
  } else if (route_->handler) {
    route_->handler(req, Responder(this));
  } else {
    RouterInternal::RunWithBody(*route_, req, Responder(this));
  }
  dispatching_ = false;
  if (std::exchange(written_inline_, false) && !closed_) {
    FinishRequest();
  } else if (phase_ == Phase::kInFlight || phase_ == Phase::kWriting) {
    StopReading();
  }
  Unref();
}

void Connection::RespondError(int status, const Status& why) { RespondError(Response::Error(status, why), why); }

void Connection::RespondError(Response answer, const Status& why) {
  bool streaming = phase_ == Phase::kStreamBody;
  phase_ = Phase::kInFlight;
  uv_timer_stop(&timer_);
  StopReading();
  keep_alive_ = false;  // the stream is out of step: answer, then close
  if (streaming) {
    // The reader may answer in OnAbort; a Responder it drops unanswered
    // leaves the answer to us (not the usual 500).
    server_answers_ = true;
    AbortReader(why);
    server_answers_ = false;
    if (closed_ || !answer_pending_) return;
  }
  is_head_ = false;
  answer_pending_ = true;
  Send(std::move(answer));
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
      c->RespondError(408, Status(Code::kDeadlineExceeded, "request headers not received in time"));
      break;
    case Phase::kBody:
    case Phase::kStreamBody:
      c->RespondError(408, Status(Code::kDeadlineExceeded, "request body not received in time"));
      break;
    case Phase::kAdmission:  // no timer runs: waiting on the server is not the client's fault
    case Phase::kInFlight:
      break;
    case Phase::kWriting:
      c->Close(Code::kDeadlineExceeded, "the client did not read the response in time");
      break;
    case Phase::kIdle:
    case Phase::kLinger:
      c->Close();
      break;
  }
}

void Connection::BeginTiming() {
  if (server_->router->observer() != nullptr) start_ns_ = uv_hrtime();
}

void Connection::ReportRequest() {
  RequestObserver* o = server_->router->observer();
  if (o != nullptr && status_ != 0) {
    o->OnRequestDone(route_class_, status_, static_cast<double>(uv_hrtime() - start_ns_) * 1e-9);
  }
  status_ = 0;
  route_class_ = kOtherRouteClass;
}

void Connection::FinishRequest() {
  ++server_->requests_served;
  ReportRequest();
  keep_.reset();
  resp_body_ = std::string();
  route_ = nullptr;
  ReleaseBody();
  // While shutting down, an answer that promised keep-alive (written before
  // Shutdown) still lets the client send one more request within the grace
  // (issue 9: SIGTERM must not drop a request the client already sent).
  if (!keep_alive_ || (server_->shutting_down && server_->options.shutdown_idle_grace_ms == 0)) {
    Linger();
    return;
  }
  buf_.start = buf_.parsed;
  if (buf_.start == buf_.end) buf_.Clear();
  buf_.Trim();
  parser_.Reset();
  StartReading();
  if (buf_.parsed < buf_.end) {  // a pipelined request is already here
    phase_ = Phase::kHeaders;
    BeginTiming();
    ArmTimer(server_->options.header_timeout_ms);
    ProcessInput();
  } else {
    phase_ = Phase::kIdle;
    ArmTimer(IdleTimeoutMs());
  }
}

// Closing right after the answer would turn unread input into a RST that can
// destroy the answer in flight; so shut our side and drain briefly first.
void Connection::Linger() {
  phase_ = Phase::kLinger;
  buf_.Clear();
  buf_.Trim();  // input is discarded from here on: a large body's buffer goes now
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
