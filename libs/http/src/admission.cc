// Admission checks (admission.h): a route's AdmissionCheck runs once the
// request's headers are complete; so does the answer to a request with a
// body that no route takes (AnswerUnrouted). The parser holds there (PlanBody's
// `hold`), so no body byte has been parsed; while the check waits the
// connection is in kAdmission: reading stopped, no timer. Admitted, the
// request goes on where OnHeadersDone left it; refused, it is answered like
// a request answered before its body (no keep-alive: the body is never
// read), which ends in Linger.
#include <utility>

#include "connection.h"
#include "folio/core/json.h"

namespace folio::http {

void Connection::RunAdmission() {
  admission_pending_ = false;
  phase_ = Phase::kAdmission;
  uv_timer_stop(&timer_);
  Request req;
  parser_.Fill(buf_.data + buf_.start, &req);
  req.peer = peer_;
  in_admission_ = true;
  Ref();  // the gate may drop the last other reference
  route_->admission(req, AdmissionGate(this));
  in_admission_ = false;
  // Undecided: nothing is read until it is (TCP pushes back on the client).
  if (phase_ == Phase::kAdmission) StopReading();
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

void Connection::OnAdmitted() {
  if (closed_ || phase_ != Phase::kAdmission) return;
  phase_ = Phase::kHeaders;
  if (in_admission_) return;  // decided inside the check: OnHeadersDone goes on
  StartReading();
  OnHeadersDone();
  ProcessInput();  // the body already buffered, or the rest of a body-less request
}

void Connection::OnRefused(Response&& answer) {
  if (closed_ || phase_ != Phase::kAdmission) return;
  BeginRequest();
  keep_alive_ = false;  // the body, if any, stays unread: the stream is out of step
  phase_ = Phase::kInFlight;
  StopReading();
  Send(std::move(answer));
}

AdmissionGate::AdmissionGate(Connection* c) : conn_(c) {
  if (conn_ != nullptr) conn_->Ref();
}

AdmissionGate::AdmissionGate(AdmissionGate&& o) noexcept : conn_(std::exchange(o.conn_, nullptr)) {}

AdmissionGate& AdmissionGate::operator=(AdmissionGate&& o) noexcept {
  if (this != &o) {
    AdmissionGate dropped(std::move(*this));  // refuses, if it was undecided
    conn_ = std::exchange(o.conn_, nullptr);
  }
  return *this;
}

AdmissionGate::~AdmissionGate() {
  if (conn_ == nullptr) return;
  Refuse(Response::Json(500, JsonError("internal", "the request's admission check did not decide")));
}

void AdmissionGate::Admit() {
  Connection* c = std::exchange(conn_, nullptr);
  if (c == nullptr) return;
  c->OnAdmitted();
  c->Unref();
}

void AdmissionGate::Refuse(Response answer) {
  Connection* c = std::exchange(conn_, nullptr);
  if (c == nullptr) return;
  c->OnRefused(std::move(answer));
  c->Unref();
}

bool AdmissionGate::connection_open() const { return conn_ != nullptr && conn_->open(); }

}  // namespace folio::http
