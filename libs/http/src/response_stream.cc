// Streaming responses: the head goes out at once, then the body is pulled
// from a BodySource chunk by chunk while less than stream_watermark_bytes of
// it wait in the socket's write queue, so a response of any length costs
// about the watermark in memory. Each chunk is its own uv_write, freed (with
// the bytes it pins) by its write callback.
#include <algorithm>
#include <utility>

#include "connection.h"

namespace folio::http {

struct Connection::StreamChunk {
  uv_write_t req;
  Connection* conn;
  std::string owned;                 // the bytes, when the source gave a string
  std::shared_ptr<const void> keep;  // or what pins them
  size_t size;
};

void Connection::SendStream(int status, const std::vector<std::pair<std::string, std::string>>& headers,
                            uint64_t content_length, std::shared_ptr<BodySource> source) {
  if (!BeginAnswer()) return;
  bool has_body = StatusHasBody(status);
  WriteHead(status, headers, has_body, content_length);
  status_ = status;
  bool send_body = has_body && !is_head_ && content_length > 0;
  if (send_body && source == nullptr) {  // a body promised with nothing to make it
    Close(Code::kInternal, "SendStream without a source");
    return;
  }
  if (send_body) {
    streaming_out_ = true;
    head_written_ = false;
    pull_pending_ = false;
    stream_unqueued_ = content_length;
    stream_outstanding_ = 0;
    source_ = std::move(source);
    source_->conn_ = this;
  }
  uv_buf_t head = Buf(out_);
  StartWrite(&head, 1);  // on failure Close() cancels the source
  if (send_body) PumpSource();
}

void Connection::PumpSource() {
  if (pumping_) return;  // a Write() inside OnPull: the loop below goes on
  pumping_ = true;
  while (!closed_ && source_ != nullptr && !pull_pending_ &&
         stream_outstanding_ < server_->options.stream_watermark_bytes) {
    pull_pending_ = true;
    uint64_t want = std::max<uint64_t>(1, server_->options.stream_pull_bytes);
    std::shared_ptr<BodySource> source = source_;
    in_source_call_ = true;
    source->OnPull(static_cast<size_t>(std::min(want, stream_unqueued_)));
    in_source_call_ = false;
    if (source_cancel_.has_value()) {  // closed inside OnPull
      Status why = std::move(*source_cancel_);
      source_cancel_.reset();
      CancelSource(std::move(why));
    }
  }
  pumping_ = false;
}

void Connection::OnSourceWrite(std::string owned, std::string_view borrowed,
                               std::shared_ptr<const void> keep) {
  size_t size = owned.empty() ? borrowed.size() : owned.size();
  if (closed_ || source_ == nullptr || size == 0) return;
  pull_pending_ = false;
  if (size > stream_unqueued_) {  // past Content-Length: a source bug; cut, then close
    size = static_cast<size_t>(stream_unqueued_);
    keep_alive_ = false;
  }
  auto* chunk = new StreamChunk{{}, this, std::move(owned), std::move(keep), size};
  uv_buf_t b = Buf((chunk->owned.empty() ? borrowed : std::string_view(chunk->owned)).substr(0, size));
  chunk->req.data = chunk;
  if (uv_write(&chunk->req, stream(), &b, 1, OnChunkWritten) != 0) {
    delete chunk;
    Close();
    return;
  }
  stream_unqueued_ -= size;
  stream_outstanding_ += size;
  ArmTimer(server_->options.idle_timeout_ms);  // a reader that never reads
  if (stream_unqueued_ == 0) {
    DetachSource();  // it made everything; no OnCancel
  } else {
    PumpSource();
  }
}

void Connection::OnChunkWritten(uv_write_t* req, int status) {
  auto* chunk = static_cast<StreamChunk*>(req->data);
  Connection* c = chunk->conn;
  c->stream_outstanding_ -= chunk->size;
  delete chunk;
  if (c->closed_) return;  // cancelled by Close(); the handles still hold c
  if (status < 0) {
    c->Close(Code::kUnavailable, "client closed the connection");
    return;
  }
  c->OnStreamProgress();
}

void Connection::OnStreamProgress() {
  if (head_written_ && stream_unqueued_ == 0 && stream_outstanding_ == 0) {
    streaming_out_ = false;
    FinishRequest();
    return;
  }
  // The write timer watches the client; waiting on the source is not its fault.
  if (stream_outstanding_ > 0 || !head_written_) {
    ArmTimer(server_->options.idle_timeout_ms);
  } else {
    uv_timer_stop(&timer_);
  }
  PumpSource();
}

void Connection::OnSourceAbort() {
  if (source_ == nullptr) return;
  DetachSource();  // its own call: no OnCancel
  Close(Code::kInternal, "the response body source failed");
}

void Connection::CancelSource(Status why) {
  if (source_ == nullptr) return;
  if (in_source_call_) {  // never nest callbacks: PumpSource cancels it after OnPull
    if (!source_cancel_.has_value()) source_cancel_ = std::move(why);
    return;
  }
  DetachSource()->OnCancel(why);
}

std::shared_ptr<BodySource> Connection::DetachSource() {
  std::shared_ptr<BodySource> source = std::exchange(source_, nullptr);
  source->conn_ = nullptr;
  return source;
}

void BodySource::Write(std::string bytes) {
  if (conn_ != nullptr) conn_->OnSourceWrite(std::move(bytes), {}, nullptr);
}

void BodySource::Write(std::string_view bytes, std::shared_ptr<const void> keep) {
  if (conn_ != nullptr) conn_->OnSourceWrite({}, bytes, std::move(keep));
}

void BodySource::Abort() {
  if (conn_ != nullptr) conn_->OnSourceAbort();
}

}  // namespace folio::http
