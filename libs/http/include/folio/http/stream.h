// Streaming bodies: a request body read piece by piece (BodyReader) and a
// response body produced on demand (BodySource), so that neither side of a
// large transfer is ever held in memory whole.
//
// Ownership: both are held by std::shared_ptr. The server keeps a reference
// while the object is "attached" (a reader from the moment its handler
// returns it until OnEnd/OnAbort; a source from SendStream until it wrote its
// last byte or got OnCancel); the handler may keep others, e.g. in tasks that
// finish disk work on another thread. Once detached, the control calls below
// (Pause, Resume, Write, Abort) do nothing, so a late call is always safe.
//
// Threading: every callback runs on the server's loop thread, and every
// control call must be made there. Work done on other threads comes back
// with Loop::Post, e.g. [reader] { reader->Resume(); }.
//
// Callbacks never nest: an OnAbort/OnCancel caused inside OnData/OnPull (an
// answer, a failed write) runs after that callback returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "folio/core/status.h"

namespace folio::http {

class BodyReader;
class Connection;
class Responder;
struct Request;

// Called once the headers are complete (req.body is empty). To take the body,
// return a reader (attached at once; Expect: 100-continue is answered then)
// and keep the Responder, usually inside the reader. To refuse it, answer
// through the Responder and return nullptr: the body is not read and the
// connection closes after the answer (unless the request had no body).
using StreamingHandler = std::function<std::shared_ptr<BodyReader>(const Request&, Responder)>;

// Body limit of a streaming route unless it names its own (4 GiB).
inline constexpr uint64_t kDefaultMaxStreamBodyBytes = uint64_t{4} << 30;

// The sink of a streaming request body (see Router::HandleStreaming).
// Every reader a handler returns gets exactly one OnEnd() or OnAbort().
class BodyReader {
 public:
  virtual ~BodyReader() = default;

  // The next piece of the body, in order (Content-Length or de-chunked).
  // `piece` points into the connection's buffer and is valid only during the
  // call; a piece is at most what one socket read brought in (the buffer is
  // sized head + 64 KiB for a streamed body). Return non-OK to refuse the
  // body: OnAbort(that status) follows, then, unless the request was
  // answered by then, the server answers with the HTTP status of the code
  // (400, 401, 403, 404, 409, 413, 408, 503, 500; kInternal's message is not
  // sent) as a JSON error; the rest of the body is discarded, the connection
  // closed.
  virtual Status OnData(std::string_view piece) = 0;
  // The whole body arrived (OnData may not have run: empty body). Answer
  // through the Responder, now or later.
  virtual void OnEnd() = 0;
  // The body will not complete. `why`: kUnavailable (client gone, server
  // stopping, or the request was answered before its body ended: then this
  // runs inside that Send*, or after OnData if it answered there), kTooLarge
  // (past the route's limit; 413), kInvalidArgument (malformed chunked
  // framing; 400), kDeadlineExceeded (body timeout; 408), or the status
  // OnData returned. The reader may still answer here; else the server sends
  // the status said (a Responder dropped here does not turn it into 500).
  // The connection is closed after the answer.
  virtual void OnAbort(const Status& why) = 0;

  // Flow control. While paused the server neither calls OnData/OnEnd nor
  // reads the socket (so at most one read's worth stays buffered and TCP
  // pushes back on the client), and the body timer is stopped. A paused
  // reader still gets OnAbort. Pausing forever holds the connection forever:
  // a client that leaves meanwhile is noticed only after Resume().
  // The handler may Pause() before returning the reader. Resume() delivers
  // pieces already buffered (OnData, maybe OnEnd) before it returns, unless
  // called inside OnData: make it the last step of a task.
  void Pause();
  void Resume();
  bool paused() const { return paused_; }
  // True between the handler's return and OnEnd/OnAbort (never for a
  // body-less request: its reader gets OnEnd at once).
  bool attached() const { return conn_ != nullptr; }

 private:
  friend class Connection;
  Connection* conn_ = nullptr;  // set while attached
  bool paused_ = false;
};

// The producer of a streaming response body (see Responder::SendStream).
// The server pulls: it calls OnPull when fewer than
// ServerOptions::stream_watermark_bytes of the body wait to be written, and
// not again until the source answered that pull with Write(). So a source
// that writes about `max_bytes` per pull keeps the response's memory near
// the watermark, however long the body.
class BodySource {
 public:
  virtual ~BodySource() = default;

  // Produce the next bytes and hand them over with one Write(), now or later
  // (e.g. after a disk read on a worker, posted back to the loop).
  // `max_bytes` <= what is left of content_length; about that much is best.
  virtual void OnPull(size_t max_bytes) = 0;
  // The response was cut before the source wrote everything: the client
  // left, did not read in time, or the server is stopping (kUnavailable or
  // kDeadlineExceeded). Stop producing; later Write() calls are ignored.
  virtual void OnCancel(const Status& why) = 0;

  // Loop thread only; ignored unless attached. Queues `bytes` for the
  // socket (an empty Write is ignored and the pull stays open). Bytes past
  // content_length are a bug: they are dropped and the connection is closed
  // after the response. The source is detached once content_length bytes
  // were written (then no OnCancel).
  void Write(std::string bytes);
  // The same without a copy: `keep` owns `bytes` until they are written.
  void Write(std::string_view bytes, std::shared_ptr<const void> keep);
  // The source cannot go on (e.g. a read error): the connection is closed
  // at once, so the client sees a short body. No OnCancel follows.
  void Abort();
  // True from SendStream until the last byte was written or OnCancel ran.
  // Sources of responses without a body (HEAD, 204, 304, length 0) or of
  // SendStream on a closed connection are never attached nor called.
  bool attached() const { return conn_ != nullptr; }

 private:
  friend class Connection;
  Connection* conn_ = nullptr;  // set while attached
};

}  // namespace folio::http
