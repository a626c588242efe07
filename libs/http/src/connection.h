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
// (header timer) -> kBody (body timer) -> kInFlight (reading stopped, no
// timer) -> kWriting (write timer = idle timeout) -> kIdle again, or kLinger
// (write side shut, input discarded until EOF or a short timer) -> closed.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "folio/http/server.h"
#include "request_parser.h"
#include "server_internal.h"

namespace folio::http {

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
  // Frees a big, empty buffer (one large body must not pin memory forever).
  void ShrinkIfEmpty();
};

class Connection {
 public:
  // Accepts one pending connection from `listener` (may close it at once).
  static void Accept(Server::Impl* server, uv_stream_t* listener);

  bool open() const { return !closed_; }
  bool idle() const { return phase_ == Phase::kIdle; }
  void Ref() { ++refs_; }
  void Unref();

  // Responder's side. Each answers the request in flight; no-op otherwise.
  void Send(Response&& r);
  void SendPrepared(const PreparedResponse& r);

  // The one close path: unlink from the server, stop timers, uv_close both
  // handles; memory goes when the last reference does.
  void Close();

  Connection* prev = nullptr;  // Server::Impl's list of open connections
  Connection* next = nullptr;

 private:
  enum class Phase { kIdle, kHeaders, kBody, kInFlight, kWriting, kLinger };

  explicit Connection(Server::Impl* server);
  ~Connection() = default;

  static void OnAlloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf);
  static void OnTimeout(uv_timer_t* t);
  static void OnWritten(uv_write_t* req, int status);
  static void OnContinueWritten(uv_write_t* req, int status);
  static void OnShutdown(uv_shutdown_t* req, int status);
  static void OnHandleClosed(uv_handle_t* h);

  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp_); }
  void ArmTimer(uint64_t ms);
  void StartReading();
  void ProcessInput();
  void Dispatch();
  void RespondError(int status, const char* code, const std::string& message);
  void WriteContinue();
  // Appends Date, Connection (if needed) and the blank line to `out`.
  void AppendTrailer(std::string* out);
  size_t WriteTrailer(char* out, size_t cap);
  void StartWrite(uv_buf_t* bufs, unsigned n);
  void FinishRequest();
  void Linger();

  Server::Impl* server_;  // null once closed
  Loop::Impl* loop_;
  uv_tcp_t tcp_;
  uv_timer_t timer_;
  uv_write_t write_req_;
  uv_write_t continue_req_;
  uv_shutdown_t shutdown_req_;
  RequestParser parser_;
  InputBuffer buf_;
  Phase phase_ = Phase::kIdle;
  bool closed_ = false;
  bool reading_ = false;
  bool keep_alive_ = true;
  bool is_head_ = false;
  bool http10_ = false;
  int refs_ = 1;          // the handles' reference, dropped when both closed
  int handles_open_ = 2;  // tcp_ and timer_
  uint64_t requests_ = 0;
  std::string out_;               // serialised head of a Response; capacity reused
  std::string resp_body_;         // body of a Response while it is written
  std::shared_ptr<const void> keep_;  // PreparedResponse bytes while written
  char tail_[128];                // Date + Connection + blank line of a prepared write
  char peer_[64] = {};
};

}  // namespace folio::http
