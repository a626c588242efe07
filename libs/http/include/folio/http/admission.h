// Admission before the body: an AdmissionCheck decides from a request's headers
// alone whether it goes on, before a byte of its body is read (e.g.
// authentication: an unknown caller's upload is never buffered), through
// an AdmissionGate it may keep and decide later. Routes get one with the
// Router::Handle* overloads that take it (server.h).
//
// Ownership: an AdmissionGate is move-only and holds its connection (not the
// socket) until it decides or is dropped. Threading: the check runs on the
// Server's loop thread and the gate is used there only; work on other
// threads comes back with Loop::Post.
#pragma once

#include <functional>

namespace folio::http {

class Connection;
struct Request;
struct Response;

// The verdict on one request's headers (see AdmissionCheck). Move-only; loop
// thread only. Exactly one Admit() or Refuse() per request; a gate dropped
// undecided refuses with 500. Once the client has gone (or the server closed
// the connection) both do nothing; connection_open() tells.
class AdmissionGate {
 public:
  AdmissionGate() = default;
  explicit AdmissionGate(Connection* c);
  AdmissionGate(AdmissionGate&& o) noexcept;
  AdmissionGate& operator=(AdmissionGate&& o) noexcept;
  AdmissionGate(const AdmissionGate&) = delete;
  ~AdmissionGate();

  // The request goes on as if its route had no check: its body is reserved
  // against the BodyBudget and read, then the handler runs.
  void Admit();
  // `answer` is the request's answer (e.g. 401 with WWW-Authenticate); the
  // handler never runs, no byte of the body is read, and the connection
  // closes after the answer (its write side shut, then input discarded
  // briefly, so that unread body bytes do not turn into a RST that destroys
  // the answer in flight).
  void Refuse(Response answer);
  bool connection_open() const;

 private:
  Connection* conn_ = nullptr;
};

// Vets a request from its headers alone (authentication, who may send a body
// here), before any byte of its body is read. The Server runs a route's
// check once the request's headers are complete: after the route's body
// limit (a larger Content-Length is 413 without a check) and before the
// BodyBudget, Expect: 100-continue and the handler; for requests with and
// without a body alike. The check decides through the gate at once, or later
// on the loop thread (e.g. once a lookup on another thread is posted back):
// until then the connection reads nothing (TCP pushes back on the client),
// no request timer runs, and the request holds no body memory. `req`'s views
// (body empty) are valid until the gate decides; the handler then gets the
// request again, with its body.
using AdmissionCheck = std::function<void(const Request&, AdmissionGate)>;

}  // namespace folio::http
