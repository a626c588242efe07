// HTTP/1.1 server on a Loop (libuv), parsing with the http-parser library.
//
// Supports keep-alive, pipelining (requests on one connection are answered
// strictly in order; the server stops parsing while a request is in flight
// and resumes once it is answered), HEAD (the server drops the body, keeps
// Content-Length), request limits and timeouts with the proper status codes:
//   400 malformed request (strict framing, below), 404 no route (JSON), 405
//   method not allowed (with Allow), 408 header or body timeout, 413 body too
//   large, 414 URL too long, 431 headers too large or too many.
// Framing is strict (RFC 9112; issue 22), so that no proxy in front reads a
// request's end elsewhere than we do: 400 and a closed connection for a line
// end other than CRLF (a bare CR or LF), NUL or another control byte in the
// request line or a field value (HTAB allowed in values), a field name that
// is empty or not a token (whitespace before the colon included), a header
// line without a colon, obs-fold (a line starting with SP or HTAB), two
// Content-Lengths (even equal) or one that is not a decimal number, two
// Transfer-Encodings, Transfer-Encoding with Content-Length or whose final
// coding is not `chunked`, two Hosts, and an HTTP/1.1 request without Host;
// in a chunked body, a chunk size that is not hexadecimal, a chunk-size line
// or chunk data not ended by CRLF, a control byte in a chunk extension, and
// trailers breaking the header rules; Transfer-Encoding in HTTP/1.0; CONNECT.
// Empty lines (CRLF) before a request line are skipped.
// Error answers are JSON: {"error":{"code":"...","message":"..."}} and close
// the connection when the request stream can no longer be trusted. A Server
// ignores SIGPIPE if at its default (else a client gone mid-write kills us).
//
// Threading: a Server belongs to one Loop; all its methods, its handlers and
// every Responder run on that loop's thread. To serve from N threads, make N
// Loops each with a Server listening on the same port with reuse_port=true.
//
// Checks before the body: a route may carry an AdmissionCheck (below), which
// decides from the headers alone, before a byte of the body is read, whether
// the request goes on; a refused request is answered and its connection
// closed without reading the body. Past a route's body limit the answer is
// 413 before the check; past the process's BodyBudget (body_budget.h) 503
// with Retry-After, after the check, also before the body. A request with a
// body that no route takes (and no Fallback) gets its 404 or 405 before the
// body is read, and its connection closes.
//
// Memory: request views (Request) point into the connection's input buffer
// and stay valid while the request's Responder is alive and unanswered, on
// any thread the handler hands them to: while a request is in flight the
// connection reads nothing into that buffer, and the buffer goes with the
// connection's last reference (a Responder holds one), not with the socket,
// so a client that leaves mid-handler does not pull the bytes away. From the
// first Send*() on they may be gone. A PreparedResponse is written straight
// from the caller's bytes; `keep` pins them until written. Large bodies
// stream (stream.h): Router::HandleStreaming, Responder::SendStream.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folio/core/status.h"
#include "folio/http/body_budget.h"
#include "folio/http/admission.h"
#include "folio/http/loop.h"
#include "folio/http/observer.h"
#include "folio/http/stream.h"

namespace folio::http {

// Readable bytes that follow a buffered request body in memory (their values
// are unspecified): a parser that reads past the end of its input (simdjson
// needs 64) may parse req.body in place instead of copying it.
inline constexpr size_t kBodyPadding = 64;

struct Header {
  std::string_view name;
  std::string_view value;
};

struct Request {
  std::string_view method;   // "GET", "POST", ...
  std::string_view target;   // as sent: "/a%20b?x=1"
  std::string_view path;     // target up to '?', still percent-encoded
  std::string_view query;    // after '?', without it; "" if none
  std::string_view body;     // complete body, then kBodyPadding readable bytes; empty for streaming routes
  std::span<const Header> headers;
  bool keep_alive = true;
  bool is_head = false;      // HEAD: handlers answer as for GET
  std::string_view peer;     // "127.0.0.1"

  // First header with this name (ASCII case-insensitive), or "" if absent.
  std::string_view GetHeader(std::string_view name) const;
  // Value of query parameter `key`, percent-decoded ('+' as space); "" if absent.
  std::string QueryParam(std::string_view key) const;
  // The token of "Authorization: Bearer TOKEN" (the scheme in any case, as
  // RFC 9110 says; spaces around the token dropped), or "" if absent or
  // another scheme.
  std::string_view BearerToken() const;
};

// The HTTP status for a Status code: the one mapping every service uses
// (400 invalid_argument, 401, 403, 404, 409, 413 too_large, 422
// unprocessable, 503 unavailable, 504 deadline_exceeded, 507 no_space, 500
// internal and data_loss; kOk, a caller bug, 500).
// kDeadlineExceeded is always 504: in folio it means a dependency (NATS,
// storage, search, the embedder) did not answer in time. A client that is too
// slow sending its own request gets 408 from the server itself (the request
// timeouts in ServerOptions), never through a Code.
// Its reverse, for clients, is StatusFromHttp in folio/http/client.h (the
// table test in src/http_test.cc pins both directions).
// REQUIRES: code != Code::kOk.
int HttpStatusFor(Code code);
// The same for a gateway answering with an upstream's failure (the edge
// relaying search or storage): HttpStatusFor, except that the upstream's own
// faults (kInternal, kDataLoss) are 502, not 500.
int UpstreamHttpStatusFor(Code code);

// A response built by value: for APIs and anything not on a hot path.
struct Response {
  int status = 200;
  // Extra headers. The server adds Content-Length, Date and Connection.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  static Response Json(int status, std::string body);
  static Response Text(int status, std::string body);
  // HttpStatusFor(s.code()) with the JSON error body (JsonError in
  // folio/core/json.h): CodeName, the message (for kInternal only "internal
  // error": detail stays in the log) and, if not empty, "path":`path` (the
  // vault file a push failed on).
  // REQUIRES: !s.ok().
  static Response Error(const Status& s, std::string_view path = {});
  // The same body with a status no Code names, for HTTP's own protocol
  // failures only: 408 (the client too slow), 416 (range not satisfiable),
  // 414/431 (request too large to parse). Everything else takes
  // Error(s), whose status is HttpStatusFor(s.code()).
  // REQUIRES: !s.ok().
  static Response Error(int status, const Status& s, std::string_view path = {});
};

// A response whose bytes the caller already holds (e.g. a cached page).
struct PreparedResponse {
  // Status line and headers, each line ending "\r\n", including
  // Content-Length, WITHOUT the final blank line. The server appends Date,
  // Connection: close (when closing) and the blank line.
  std::string_view head;
  std::string_view body;               // not sent for HEAD
  std::shared_ptr<const void> keep;    // owns head/body (and more_head) until written
  // More header lines written right after `head`, in order (each empty or
  // whole lines ending "\r\n"): lets a caller keep lines many responses
  // share (e.g. the security headers of every page) in one place.
  std::array<std::string_view, 2> more_head{};
};

class Connection;

// The right to answer one request. Move-only; loop thread only.
// Exactly one Send*() per request; dropping a Responder unanswered sends 500.
// If the client has gone, Send*() is a no-op (connection_open() is false).
class Responder {
 public:
  Responder() = default;
  explicit Responder(Connection* c);
  Responder(Responder&& o) noexcept;
  Responder& operator=(Responder&& o) noexcept;
  Responder(const Responder&) = delete;
  ~Responder();

  void Send(Response r);
  void SendPrepared(const PreparedResponse& r);
  // Status and headers now (plus Content-Length: content_length, Date,
  // Connection), then content_length bytes pulled from `source` (stream.h);
  // none for HEAD, 1xx, 204, 304. Range: pass 206 and Content-Range.
  void SendStream(int status, std::vector<std::pair<std::string, std::string>> headers,
                  uint64_t content_length, std::shared_ptr<BodySource> source);
  // JSON error body {"error":{"code":code,"message":message}}.
  void SendError(int status, std::string_view code, std::string_view message);
  // The same for a failed Status: Response::Error(s).
  // REQUIRES: !s.ok().
  void SendError(const Status& s);
  bool connection_open() const;
  // Narrows this request's route class for the RequestObserver (observer.h),
  // e.g. "asset" for a fallback route that served an attachment. Call before
  // Send*(). REQUIRES: route_class outlives the connection (a literal).
  void SetRouteClass(std::string_view route_class);

 private:
  void Drop();  // unanswered: 500, unless the server answers itself
  Connection* conn_ = nullptr;
};

using Handler = std::function<void(const Request&, Responder)>;

// The body limit of a buffered route that names none: the Server's
// ServerOptions::max_body_bytes.
inline constexpr uint64_t kServerMaxBodyBytes = UINT64_MAX;

// Maps method + path to handlers. Configure before serving; then read-only.
// route_class names the route for request metrics (observer.h): a small
// fixed set per service ("page", "push", "blob", "ops", ...).
class Router {
 public:
  // Exact path match ("/api/v1/push"). max_body_bytes: this route's body
  // limit, at most the Server's (the default); 0 = it takes no body (a
  // probe's): Content-Length > 0 gets 413 before the body is read, chunk data
  // 413 as it arrives.
  void Handle(std::string_view method, std::string path, Handler h,
              std::string_view route_class = kOtherRouteClass, uint64_t max_body_bytes = kServerMaxBodyBytes);
  // Paths that start with `prefix`; the longest prefix wins.
  void HandlePrefix(std::string_view method, std::string prefix, Handler h,
                    std::string_view route_class = kOtherRouteClass,
                    uint64_t max_body_bytes = kServerMaxBodyBytes);
  // The same behind an AdmissionCheck: `admission` vets each request's headers
  // before its body is read and `h` runs (see AdmissionCheck).
  void Handle(std::string_view method, std::string path, AdmissionCheck admission, Handler h,
              std::string_view route_class = kOtherRouteClass, uint64_t max_body_bytes = kServerMaxBodyBytes);
  void HandlePrefix(std::string_view method, std::string prefix, AdmissionCheck admission, Handler h,
                    std::string_view route_class = kOtherRouteClass,
                    uint64_t max_body_bytes = kServerMaxBodyBytes);
  // Anything unmatched (else 404 JSON). Called for every method; 405s and
  // 404s of unmatched paths count under its route class too.
  void Fallback(Handler h, std::string_view route_class = kOtherRouteClass);
  // Streaming request bodies (stream.h), matched like Handle/HandlePrefix.
  // Past this route's max_body_bytes: 413, before the handler if
  // Content-Length says so, else when crossed (the reader gets OnAbort).
  void HandleStreaming(std::string_view method, std::string path, StreamingHandler h,
                       uint64_t max_body_bytes = kDefaultMaxStreamBodyBytes,
                       std::string_view route_class = kOtherRouteClass);
  void HandleStreamingPrefix(std::string_view method, std::string prefix, StreamingHandler h,
                             uint64_t max_body_bytes = kDefaultMaxStreamBodyBytes,
                             std::string_view route_class = kOtherRouteClass);
  // Streaming routes behind an AdmissionCheck: the handler runs only once the
  // check admitted the request (and its body fitted the BodyBudget).
  void HandleStreaming(std::string_view method, std::string path, AdmissionCheck admission, StreamingHandler h,
                       uint64_t max_body_bytes = kDefaultMaxStreamBodyBytes,
                       std::string_view route_class = kOtherRouteClass);
  void HandleStreamingPrefix(std::string_view method, std::string prefix, AdmissionCheck admission,
                             StreamingHandler h, uint64_t max_body_bytes = kDefaultMaxStreamBodyBytes,
                             std::string_view route_class = kOtherRouteClass);
  // Every Server serving this Router reports each answered request to
  // `observer` (nullptr: none, the default). REQUIRES: observer outlives
  // the Servers; called before serving.
  void Observe(RequestObserver* observer) { observer_ = observer; }
  RequestObserver* observer() const { return observer_; }

  // Runs the handler for a complete request; GET routes answer HEAD too. A
  // streaming route's reader gets req.body as one OnData, then OnEnd/OnAbort.
  // Runs no AdmissionCheck: a Server runs a route's check before.
  void Dispatch(const Request& req, Responder r) const;

 private:
  friend class RouterInternal;
  struct Route {
    std::string method;
    std::string path;
    bool prefix;
    Handler handler;             // buffered route, or
    StreamingHandler streaming;  // streaming route
    uint64_t max_body_bytes;     // kServerMaxBodyBytes: the Server's
    std::string route_class;
    AdmissionCheck admission;    // null: none
  };
  std::vector<Route> routes_;
  Handler fallback_;
  std::string fallback_class_{kOtherRouteClass};
  RequestObserver* observer_ = nullptr;
};

struct ServerOptions {
  size_t max_header_bytes = 16 * 1024;     // request line + headers; past it 431
  size_t max_headers = 100;                // header count; past it 431
  size_t max_url_bytes = 8 * 1024;         // request target; past it 414
  size_t max_body_bytes = 1024 * 1024;     // past it 413 (Content-Length first); not streaming;
                                           // 0 = no body: refused before it is read
  // Bound on the body bytes this Server's requests hold at once, shared with
  // every Server given the same budget (body_budget.h); past it 503 with
  // Retry-After before the body is read. nullptr (default) = no bound: for
  // a Server that takes no bodies (max_body_bytes 0, no streaming routes).
  // REQUIRES: outlives the Server and its Responders and AdmissionGates.
  BodyBudget* body_budget = nullptr;
  // What a streamed request body holds against body_budget, however long it
  // is (its Content-Length when smaller): the server's window (64 KiB) plus
  // what the route's reader buffers at most (default 64 KiB: the window only).
  uint64_t stream_body_budget_bytes = 64 * 1024;
  uint64_t max_requests_per_connection = 0;  // 0 = unlimited; then Connection: close
  uint64_t header_timeout_ms = 10'000;     // first byte to end of headers; 408
  uint64_t body_timeout_ms = 60'000;       // end of headers to end of body; 408. Streaming:
                                           // per piece, stopped while paused; no total
  uint64_t idle_timeout_ms = 60'000;       // keep-alive wait for the next request; silent close
  size_t max_connections = 10'000;         // further accepts are closed at once
  size_t stream_watermark_bytes = 256 * 1024;  // SendStream pulls while less is queued
  size_t stream_pull_bytes = 64 * 1024;    // max_bytes passed to BodySource::OnPull
  uint64_t shutdown_idle_grace_ms = 1000;  // Shutdown: how long an idle keep-alive connection
                                           // may still send a request (answered, then closed);
                                           // 0 = close idle connections at once
  uint64_t shutdown_timeout_ms = 10'000;   // Shutdown: bound on the whole drain; then every
                                           // connection left is closed; 0 = no bound
};

class Server {
 public:
  Server(Loop* loop, const Router* router, ServerOptions options = {});
  ~Server();  // REQUIRES: called on the loop thread, or after the loop stopped
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens. port 0 picks a free port (see port()). With
  // reuse_port, several Servers (on several Loops) can share one port.
  Status Listen(const std::string& host, int port, bool reuse_port = false);
  // Listens on an already-bound socket (systemd socket activation). Takes
  // fd: it is closed with the listener, or before an error is returned.
  // REQUIRES: no other handle on this loop uses fd.
  Status ListenFd(int fd);
  // A service's public socket: the first socket systemd passed
  // (SystemdListenFds(), socket activation) when there is one, else
  // host:port bound with reuse_port, so that a new process can bind the
  // port before the old one leaves (a handover). Failures as above.
  Status ListenActivatedOrBind(const std::string& host, int port);
  int port() const;

  // Drains the server, then calls done (posted to the loop thread) once
  // every connection is gone. Drops no request a client already sent:
  //  - stops accepting: connections the kernel already queued on the
  //    listener are accepted first (closing a listener resets them), then
  //    the listener is closed, so new connections are refused (or, on a
  //    shared socket, left in the backlog for whoever accepts next);
  //  - every request answered from now on says `Connection: close`; a
  //    request in flight (or half received) is answered so, then the
  //    connection shuts its side and lingers briefly as after any close;
  //  - an idle keep-alive connection (one whose last answer promised
  //    keep-alive, even if written just before) is kept reading for
  //    shutdown_idle_grace_ms: a request that arrives is answered with
  //    `Connection: close`; a connection silent for the grace is closed;
  //  - after shutdown_timeout_ms whatever is left is closed (a handler that
  //    never answers cannot hold the process).
  // A second call (a second signal) lets the drain go on and replaces a
  // `done` not yet called. REQUIRES: loop thread.
  void Shutdown(std::function<void()> done);

  // Shutdown's first step alone: accepts what the kernel already queued on
  // the listener, then closes it; connections are untouched. A process
  // with several Servers on one port (SO_REUSEPORT) calls it on all of
  // them before draining any: a client told `Connection: close` by a
  // draining server reconnects at once, and the kernel may queue that
  // connection on a sibling listener still open, which would reset it when
  // it closes. Idempotent; Shutdown calls it. REQUIRES: loop thread.
  void StopAccepting();

  size_t open_connections() const;
  uint64_t requests_served() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Sockets passed by systemd (LISTEN_PID == getpid(), LISTEN_FDS > 0):
// fds 3 .. 3+LISTEN_FDS-1; empty otherwise.
std::vector<int> SystemdListenFds();

// "OK", "Not Found", ... for a status code.
std::string_view ReasonPhrase(int status);

}  // namespace folio::http
