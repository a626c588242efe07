// Header checks (header_check.h): a route's HeaderCheck runs once the
// request's headers are complete; so does the answer to a request with a
// body that no route takes (AnswerUnrouted). The parser holds there (PlanBody's
// `hold`), so no body byte has been parsed; while the check waits the
// connection is in kChecking: reading stopped, no timer. Admitted, the
// request goes on where OnHeadersDone left it; refused, it is answered like
// a request answered before its body (no keep-alive: the body is never
// read), which ends in Linger.
#include <utility>

#include "connection.h"
#include "folio/core/json.h"

namespace folio::http {

void Connection::RunCheck() {
  check_pending_ = false;
  phase_ = Phase::kChecking;
  uv_timer_stop(&timer_);
  Request req;
  parser_.Fill(buf_.data + buf_.start, &req);
  req.peer = peer_;
  in_check_ = true;
  Ref();  // the gate may drop the last other reference
  route_->check(req, HeaderGate(this));
  in_check_ = false;
  // Undecided: nothing is read until it is (TCP pushes back on the client).
  if (phase_ == Phase::kChecking) StopReading();
  Unref();
}

// A body no route takes (and no Fallback) would only be read to be thrown
// away: the 404 or 405 goes out before it is, and the connection closes.
void Connection::AnswerUnrouted() {
  BeginRequest();
  keep_alive_ = false;
  phase_ = Phase::kInFlight;
  uv_timer_stop(&timer_);
  StopReading();
  Request req;
  parser_.Fill(buf_.data + buf_.start, &req);
  req.peer = peer_;
  Ref();  // the Responder may drop the last other reference
  server_->router->Dispatch(req, Responder(this));
  Unref();
}

void Connection::AdmitChecked() {
  if (closed_ || phase_ != Phase::kChecking) return;
  phase_ = Phase::kHeaders;
  if (in_check_) return;  // decided inside the check: OnHeadersDone goes on
  StartReading();
  OnHeadersDone();
  ProcessInput();  // the body already buffered, or the rest of a body-less request
}

void Connection::RefuseChecked(Response&& answer) {
  if (closed_ || phase_ != Phase::kChecking) return;
  BeginRequest();
  keep_alive_ = false;  // the body, if any, stays unread: the stream is out of step
  phase_ = Phase::kInFlight;
  StopReading();
  Send(std::move(answer));
}

HeaderGate::HeaderGate(Connection* c) : conn_(c) {
  if (conn_ != nullptr) conn_->Ref();
}

HeaderGate::HeaderGate(HeaderGate&& o) noexcept : conn_(std::exchange(o.conn_, nullptr)) {}

HeaderGate& HeaderGate::operator=(HeaderGate&& o) noexcept {
  if (this != &o) {
    HeaderGate dropped(std::move(*this));  // refuses, if it was undecided
    conn_ = std::exchange(o.conn_, nullptr);
  }
  return *this;
}

HeaderGate::~HeaderGate() {
  if (conn_ == nullptr) return;
  Refuse(Response::Json(500, JsonError("internal", "the request's header check did not decide")));
}

void HeaderGate::Admit() {
  Connection* c = std::exchange(conn_, nullptr);
  if (c == nullptr) return;
  c->AdmitChecked();
  c->Unref();
}

void HeaderGate::Refuse(Response answer) {
  Connection* c = std::exchange(conn_, nullptr);
  if (c == nullptr) return;
  c->RefuseChecked(std::move(answer));
  c->Unref();
}

bool HeaderGate::connection_open() const { return conn_ != nullptr && conn_->open(); }

void RefuseBodies(const Request& req, HeaderGate gate) {
  if (!req.has_body) return gate.Admit();
  gate.Refuse(Response::Error(Status::TooLarge("this endpoint takes no request body")));
}

}  // namespace folio::http
