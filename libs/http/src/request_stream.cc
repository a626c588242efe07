// Streaming request bodies: the route's handler gets the request as soon as
// its headers are in and returns a BodyReader; each body piece goes to the
// reader as the parser decodes it. Flow control is reading or not reading the
// socket, so a paused reader costs at most one read of buffered input.
#include <cstring>
#include <utility>

#include "connection.h"

namespace folio::http {

namespace {

// Free buffer space kept for socket reads while a body streams. The buffer
// is sized once to head + this; consumed body bytes are dropped before every
// read, so it never grows while the body streams.
constexpr size_t kStreamWindow = 64 * 1024;

}  // namespace

void Connection::StartStreaming() {
  phase_ = Phase::kStreamBody;
  BeginRequest();
  // Compact once, leaving room for reads: from here on the head stays where
  // it is (the handler's Request views point into it).
  buf_.Reserve(kStreamWindow);
  stream_keep_ = buf_.parsed - buf_.start;
  Request req;
  parser_.Fill(buf_.data + buf_.start, &req);
  req.peer = peer_;
  ArmTimer(server_->options.body_timeout_ms);
  std::shared_ptr<BodyReader> reader = route_->streaming(req, Responder(this));
  if (phase_ != Phase::kStreamBody || closed_) {  // answered (or gone) already
    if (reader != nullptr) reader->OnAbort(Status::Unavailable("the request was answered before its body was read"));
    return;
  }
  if (reader == nullptr) {  // refused; the answer is still to come
    AnswerBeforeBody();
    return;
  }
  reader_ = std::move(reader);
  reader_->conn_ = this;
  body_paused_ = false;
  if (reader_->paused_) PauseBody();  // paused by the handler before it returned
  if (parser_.TakeExpectContinue()) WriteContinue();
}

// An answer (or a refusal) before the body was read whole: the rest of the
// body is never parsed, so the connection cannot carry another request.
void Connection::AnswerBeforeBody() {
  keep_alive_ = false;
  phase_ = Phase::kInFlight;
  uv_timer_stop(&timer_);
  StopReading();
  AbortReader(Status::Unavailable("the request was answered before its body ended"));
}

void Connection::DeliverPiece(std::string_view piece) {
  ArmTimer(server_->options.body_timeout_ms);  // progress restarts the body timer
  std::shared_ptr<BodyReader> reader = reader_;
  in_reader_call_ = true;
  Status s = reader->OnData(piece);
  in_reader_call_ = false;
  if (reader_abort_.has_value()) {  // answered or closed inside OnData
    Status why = std::move(*reader_abort_);
    reader_abort_.reset();
    AbortReader(s.ok() ? std::move(why) : std::move(s));
    return;
  }
  if (!s.ok() && phase_ == Phase::kStreamBody) RespondError(HttpStatusFor(s.code()), s);
}

void Connection::EndStream() {
  phase_ = Phase::kInFlight;
  uv_timer_stop(&timer_);
  StopReading();
  std::shared_ptr<BodyReader> reader = std::exchange(reader_, nullptr);
  reader->conn_ = nullptr;
  reader->OnEnd();
}

void Connection::AbortReader(Status why) {
  if (reader_ == nullptr) return;
  if (in_reader_call_) {  // never nest callbacks: DeliverPiece ends it after OnData
    if (!reader_abort_.has_value()) reader_abort_ = std::move(why);
    return;
  }
  std::shared_ptr<BodyReader> reader = std::exchange(reader_, nullptr);
  reader->conn_ = nullptr;
  body_paused_ = false;
  reader->OnAbort(why);
}

void Connection::DropStreamedBytes() {
  size_t keep = buf_.start + stream_keep_;
  if (buf_.parsed <= keep) return;
  memmove(buf_.data + keep, buf_.data + buf_.parsed, buf_.end - buf_.parsed);
  buf_.end -= buf_.parsed - keep;
  buf_.parsed = keep;
}

void Connection::PauseBody() {
  if (phase_ != Phase::kStreamBody || body_paused_) return;
  body_paused_ = true;
  StopReading();
  uv_timer_stop(&timer_);  // waiting on the reader is not the client's fault
}

void Connection::ResumeBody() {
  if (phase_ != Phase::kStreamBody || !body_paused_) return;
  body_paused_ = false;
  ArmTimer(server_->options.body_timeout_ms);
  StartReading();
  if (!in_reader_call_) ProcessInput();  // pieces already buffered; inside OnData the loop goes on
}

void BodyReader::Pause() {
  paused_ = true;
  if (conn_ != nullptr) conn_->PauseBody();
}

void BodyReader::Resume() {
  paused_ = false;
  if (conn_ != nullptr) conn_->ResumeBody();
}

}  // namespace folio::http
