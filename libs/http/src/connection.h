// Connection: one accepted TCP connection of a Server. Reads into one
// growable buffer, parses one request at a time in place, hands it to the
// Router with a Responder, writes the answer, then goes on to the next.
//
// Lifetime: refcounted on the loop thread. The two libuv handles hold one
// reference until both close callbacks ran; each Responder holds one. The
// object is deleted when the last reference goes, so a Responder may outlive
// the socket (its Send*() then does nothing).
//
// Phases: kIdle (waiting for a request's first byte; idle timer) -> kHeaders
// (header timer; the request is routed when they are complete) -> kAdmission
// (only for a route with an AdmissionCheck: reading stopped, no timer, until the
// gate decides; admission.cc) -> kBody (buffered body; body timer) or
// kStreamBody (body handed to a BodyReader; body timer per piece, stopped
// while paused) -> kInFlight (reading stopped, no timer) -> kWriting (write
// timer = idle timeout, re-armed per streamed chunk) -> kIdle again, or
// kLinger (write side shut, input discarded until EOF or a short timer) ->
// closed.
//
// Body budget (body_budget.cc): a request with a body reserves from the
// Server's BodyBudget before its body is read, grows a chunked buffered
// body's reservation as it arrives, and gives it back when the answer is
// written whole or when the Connection is deleted (its buffer goes then).
//
// Server shutdown (OnServerShutdown): every answer from then on says
// Connection: close. An idle connection gets shutdown_idle_grace_ms on its
// idle timer: a request that arrives is answered, then the connection
// lingers; so does one whose answer (written with keep-alive before the
// shutdown) completes later. Other phases go on as they are.
//
// The answer: `answer_pending_` is set when a handler gets the request and
// cleared by the first Send*. An answer before the body was read whole ends
// the reader and turns keep-alive off: the unread body is never parsed.
//
// Streamed request body (request_stream.cc): the head stays put at the front
// of the buffer (the handler's Request views hold); consumed body bytes are
// dropped before each read, so the buffer never grows. Streamed response
// (response_stream.cc): head via write_req_, each chunk its own uv_write_t.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folio/core/status.h"
#include "folio/http/server.h"
#include "request_parser.h"
#include "router_internal.h"
#include "server_internal.h"

namespace folio::http {

// Whether a response with this status carries a body (and Content-Length).
inline bool StatusHasBody(int status) { return status >= 200 && status != 204 && status != 304; }

inline uv_buf_t Buf(std::string_view s) { return uv_buf_init(const_cast<char*>(s.data()), static_cast<unsigned>(s.size())); }

// The connection's input: [0,start) answered requests, [start,parsed) the
// current request as parsed so far, [parsed,end) received but not parsed.
struct InputBuffer {
  char* data = nullptr;
  size_t cap = 0;
  size_t start = 0;
  size_t parsed = 0;
  size_t end = 0;

  InputBuffer() = default;
  InputBuffer(const InputBuffer&) = delete;
  InputBuffer& operator=(const InputBuffer&) = delete;
  ~InputBuffer();
  // Moves [start,end) to the front, then grows so that cap - end >= min_free.
  // Invalidates pointers into data (offsets from start stay valid).
  void Reserve(size_t min_free);
  // Forgets everything (kLinger discards input).
  void Clear() { start = parsed = end = 0; }
  // Frees a big buffer once empty, or shrinks it when little is left in it
  // (one large body must not pin memory for the rest of the connection).
  void Trim();
};

class Connection final : private BodyPolicy {
 public:
  // Accepts one pending connection from `listener` (may close it at once).
  static void Accept(Server::Impl* server, uv_stream_t* listener);
  // Serves an already accepted socket `fd` (owned from now on; may close it at once).
  static void Adopt(Server::Impl* server, int fd);
  // The server began Shutdown: an idle connection gets the grace, or closes.
  void OnServerShutdown();

  bool open() const { return !closed_; }
  void Ref() { ++refs_; }
  void Unref();

  // Responder's side. Each answers the request in flight; no-op otherwise.
  void Send(Response&& r);
  void SendPrepared(const PreparedResponse& r);
  void SendStream(int status, const std::vector<std::pair<std::string, std::string>>& headers,
                  uint64_t content_length, std::shared_ptr<BodySource> source);
  void AnswerDropped();  // a Responder went unanswered: 500, unless we answer
  void SetRouteClass(std::string_view c) { route_class_ = c; }

  // AdmissionGate's side (admission.cc); no-ops unless a check is waiting.
  void OnAdmitted();
  void OnRefused(Response&& answer);

  // BodyReader's and BodySource's side (no-ops unless that one is attached).
  void PauseBody();
  void ResumeBody();
  void OnSourceWrite(std::string owned, std::string_view bytes, std::shared_ptr<const void> keep);
  void OnSourceAbort();

  // The one close path: unlink from the server, stop timers, end any reader
  // or source (OnAbort/OnCancel with `why`), uv_close both handles; memory
  // goes when the last reference does.
  void Close(Code why = Code::kUnavailable, const char* message = "connection closed");

  Connection* prev = nullptr;  // Server::Impl's list of open connections
  Connection* next = nullptr;

 private:
  enum class Phase { kIdle, kHeaders, kAdmission, kBody, kStreamBody, kInFlight, kWriting, kLinger };
  struct StreamChunk;

  explicit Connection(Server::Impl* server);
  ~Connection() { ReleaseBody(); }
  // A linked Connection with both handles initialised, not yet connected.
  static Connection* Create(Server::Impl* server);
  // The socket is connected: read the first request (or close if over the limit).
  void Begin();
  uint64_t IdleTimeoutMs() const;  // idle_timeout_ms, or the grace while shutting down

  static void OnAlloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf);
  static void OnTimeout(uv_timer_t* t);
  static void OnWritten(uv_write_t* req, int status);
  static void OnContinueWritten(uv_write_t* req, int status);
  static void OnShutdown(uv_shutdown_t* req, int status);
  static void OnHandleClosed(uv_handle_t* h);
  static void OnChunkWritten(uv_write_t* req, int status);

  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp_); }
  void ArmTimer(uint64_t ms);
  void StartReading();
  void StopReading();
  bool Parsing() const;  // headers, or a body not paused
  void ProcessInput();
  BodyPlan PlanBody(const RequestParser& parser, const char* base) override;
  void OnHeadersDone();  // routed: check, reserve, read the body buffered or streaming
  void BeginRequest();   // a handler gets it: count it, settle keep-alive
  void Dispatch();
  void RespondError(int status, const Status& why);  // ends a reader first
  void RespondError(Response answer, const Status& why);
  void WriteContinue();
  bool BeginAnswer();  // claims the answer; false if answered or closed
  void AnswerBeforeBody();
  void WriteHead(int status, const std::vector<std::pair<std::string, std::string>>& headers,
                 bool has_body, uint64_t content_length);
  void StartWrite(uv_buf_t* bufs, unsigned n);
  void FinishRequest();
  void BeginTiming();    // the request's first byte is here (RequestObserver)
  void ReportRequest();  // the answer is written whole: tell the observer
  void Linger();

  // admission.cc
  void RunAdmission();
  void AnswerUnrouted();  // a request with a body no route takes
  // body_budget.cc
  bool ReserveBody();        // false: refused (503/413 answered)
  bool TakeBudget(uint64_t bytes);  // false: 503 (or 413) answered
  bool CoverGrowingBody();   // after a read of a chunked buffered body
  void ReleaseBody();
  // request_stream.cc
  void StartStreaming();
  void DeliverPiece(std::string_view piece);
  void EndStream();
  void DropStreamedBytes();
  void AbortReader(Status why);
  // response_stream.cc
  void PumpSource();
  void OnStreamProgress();  // a streamed write completed: finish, or pull more
  void CancelSource(Status why);
  std::shared_ptr<BodySource> DetachSource();

  Server::Impl* server_;  // null once closed
  Loop::Impl* loop_;
  uv_tcp_t tcp_;
  uv_timer_t timer_;
  uv_write_t write_req_;
  uv_write_t continue_req_;
  uv_shutdown_t shutdown_req_;
  RequestParser parser_;
  InputBuffer buf_;
  const RouterInternal::Route* route_ = nullptr;  // of the current request; null: unrouted
  Phase phase_ = Phase::kIdle;
  bool closed_ = false;
  bool reading_ = false;
  // Dispatch is running the handler: an answer it sends at once is written
  // with uv_try_write and finished by Dispatch, with reading left on.
  bool dispatching_ = false;
  bool written_inline_ = false;  // that answer went out whole; Dispatch finishes it
  bool keep_alive_ = true;
  bool is_head_ = false;
  bool http10_ = false;
  bool answer_pending_ = false;
  bool server_answers_ = false;  // RespondError runs OnAbort, then answers
  bool admission_pending_ = false;   // the route's AdmissionCheck has yet to run
  bool unrouted_body_ = false;   // a body no route (nor a Fallback) takes: answered unread
  bool in_admission_ = false;        // RunAdmission is running it: a verdict now is finished there

  // Body budget (null: none). Kept apart from server_, which Close clears:
  // the reservation is given back when the buffer goes.
  BodyBudget* budget_;
  uint64_t body_reserved_ = 0;
  bool body_grows_ = false;      // a chunked buffered body: reserve as it arrives

  // Streaming request body.
  std::shared_ptr<BodyReader> reader_;  // attached reader
  size_t stream_keep_ = 0;      // offset from buf_.start of the first droppable byte
  bool body_paused_ = false;
  bool in_reader_call_ = false;  // OnData is running: end the reader after it
  std::optional<Status> reader_abort_;  // why, once it is to end

  // Streaming response body.
  std::shared_ptr<BodySource> source_;  // attached source
  bool streaming_out_ = false;  // a streamed response is being written
  bool head_written_ = false;
  bool pull_pending_ = false;
  bool pumping_ = false;
  bool in_source_call_ = false;  // OnPull is running: cancel the source after it
  std::optional<Status> source_cancel_;  // why, once it is to be cancelled
  uint64_t stream_unqueued_ = 0;     // body bytes the source still owes
  uint64_t stream_outstanding_ = 0;  // body bytes queued, not yet written
  int refs_ = 1;          // the handles' reference, dropped when both closed
  int handles_open_ = 2;  // tcp_ and timer_
  uint64_t requests_ = 0;
  // For the Router's RequestObserver (observer.h): when the request began
  // (uv_hrtime, ns), its route class, the status answered (0: none yet).
  uint64_t start_ns_ = 0;
  std::string_view route_class_ = kOtherRouteClass;
  int status_ = 0;
  std::string out_;               // serialised head of a Response; capacity reused
  std::string resp_body_;         // body of a Response while it is written
  std::shared_ptr<const void> keep_;  // PreparedResponse bytes while written
  char tail_[128];                // Date + Connection + blank line of a prepared write
  char peer_[64] = {};
};

}  // namespace folio::http
