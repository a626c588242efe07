// folio-storage's API (api.h): GET and HEAD of blobs and objects, each
// piece verified before it is sent.
#include <algorithm>

#include "api_internal.h"
#include "folio/core/log.h"
#include "folio/http/attachment.h"
#include "folio/http/conditional.h"

namespace folio::storage::api_internal {
namespace {

// A streamed download: the first piece was read (and checked) before the
// status line; each pull reads the next piece on the I/O pool.
class Download final : public http::BodySource, public std::enable_shared_from_this<Download> {
 public:
  // Sends `first` (bytes [next - first.size(), next)), then [next, end).
  Download(ApiContext* ctx, std::shared_ptr<journal::BlobReader> reader, std::string first, uint64_t next,
           uint64_t end)
      : ctx_(ctx), reader_(std::move(reader)), first_(std::move(first)), next_(next), end_(end) {}

  void OnPull(size_t max_bytes) override {
    if (!first_.empty()) {
      M(ctx_)->bytes_out.Increment(static_cast<double>(first_.size()));
      Write(std::exchange(first_, std::string()));
      return;
    }
    size_t n = static_cast<size_t>(std::min<uint64_t>(max_bytes, end_ - next_));
    auto self = shared_from_this();
    uint64_t offset = next_;
    ctx_->io->Submit([self, offset, n] {
      auto out = std::make_shared<std::string>();
      Status s = self->reader_->ReadAt(offset, n, out.get());
      self->ctx_->loop->Post([self, s, out] {
        if (!s.ok() || out->empty()) {
          // The status line went out already: all that is left is to cut the
          // response. Damage is remembered, so later requests get an error
          // status up front.
          (void)ReadFailed(self->ctx_, self->reader_->key(), self->reader_->seq(),
                           s.ok() ? Status::Unavailable("short read") : s, "response cut short");
          self->Abort();
          return;
        }
        self->next_ += out->size();
        M(self->ctx_)->bytes_out.Increment(static_cast<double>(out->size()));
        self->Write(std::move(*out));
      });
    });
  }

  void OnCancel(const Status&) override {}

 private:
  ApiContext* ctx_;
  std::shared_ptr<journal::BlobReader> reader_;
  std::string first_;
  uint64_t next_, end_;
};

std::string ETagOf(const journal::BlobReader& r) {
  std::string_view key = r.key();
  if (key.substr(0, kBlobKeyPrefix.size()) == kBlobKeyPrefix) return "\"" + std::string(key.substr(kBlobKeyPrefix.size())) + "\"";
  // Replicated objects: their upload id, the same on every replica.
  if (std::string_view up = UploadOf(r.meta()); !up.empty()) return "\"" + std::string(up) + "\"";
  return "\"" + std::to_string(r.seq()) + "-" + std::to_string(r.size()) + "\"";
}

using Headers = std::vector<std::pair<std::string, std::string>>;

// What Serve reads of a GET/HEAD: copied, so a fetch-through can finish
// after the request's own views are gone.
struct Ask {
  explicit Ask(const http::Request& req)
      : head(req.is_head), if_none_match(req.GetHeader("if-none-match")), range(req.GetHeader("range")),
        if_range(req.GetHeader("if-range")) {}
  bool head;
  std::string if_none_match, range, if_range;
};

// Sends the status and headers of a GET/HEAD only after the first piece of
// what they announce was read and its checksum verified on the I/O pool, so
// a damaged blob gets an error status, never a 200/206 cut short (issue 9).
// For HEAD one byte is read: that verifies the block holding it.
void SendVerified(ApiContext* ctx, const Ask& req, http::Responder resp, journal::BlobReader reader,
                  int status, Headers headers, uint64_t first, uint64_t length) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(req.head ? 1 : ctx->options.read_chunk_bytes, length));
  auto shared = std::make_shared<journal::BlobReader>(std::move(reader));
  auto responder = std::make_shared<http::Responder>(std::move(resp));
  const bool head = req.head;
  ctx->io->Submit([ctx, shared, responder, status, headers = std::move(headers), first, length, n, head]() mutable {
    auto piece = std::make_shared<std::string>();
    Status s = n == 0 ? Status::Ok() : shared->ReadAt(first, n, piece.get());
    if (s.ok() && piece->size() != n) s = Status::Unavailable("short read");
    ctx->loop->Post([ctx, shared, responder, status, headers = std::move(headers), first, length, piece, s,
                     head]() mutable {
      if (!s.ok()) {
        responder->SendError(ReadFailed(ctx, shared->key(), shared->seq(), s, "answered an error status"));
        return;
      }
      if (head) piece->clear();
      const uint64_t next = first + piece->size();
      auto source = std::make_shared<Download>(ctx, shared, std::move(*piece), next, first + length);
      responder->SendStream(status, std::move(headers), length, source);
    });
  });
}

void ServeLocal(ApiContext* ctx, const Ask& req, http::Responder resp, const std::string& key, bool immutable) {
  auto reader = ctx->journal->Get(key);
  if (!reader.ok()) {
    resp.SendError(reader.status().code() == Code::kNotFound ? Status::NotFound("no object " + key) : reader.status());
    return;
  }
  if (Damaged().Contains(key, reader->seq())) {
    resp.SendError(DamagedStatus(key));
    return;
  }
  const uint64_t size = reader->size();
  std::string etag = ETagOf(*reader);
  const char* cache = immutable ? kImmutable : "no-cache";
  // Nothing stored here is trusted: should a browser ever open a blob
  // directly, it runs no script and is not sniffed into another type.
  Headers headers{
      {"Content-Type", reader->meta().empty() ? "application/octet-stream" : std::string(ContentTypeOf(reader->meta()))},
      {"ETag", etag},
      {"Accept-Ranges", "bytes"},
      {"Cache-Control", cache},
      {"Content-Security-Policy", std::string(http::kUntrustedCsp)},
      {"X-Content-Type-Options", std::string(http::kNoSniff)},
  };
  std::string_view inm = req.if_none_match;
  if (!inm.empty() && http::EtagMatches(inm, etag)) {
    resp.Send(http::Response{304,
                             {{"ETag", etag},
                              {"Cache-Control", cache},
                              {"Content-Security-Policy", std::string(http::kUntrustedCsp)},
                              {"X-Content-Type-Options", std::string(http::kNoSniff)}},
                             ""});
    return;
  }
  uint64_t first = 0, last = size == 0 ? 0 : size - 1;
  int status = 200;
  std::string_view range = req.range;
  std::string_view if_range = req.if_range;
  if (!range.empty() && (if_range.empty() || if_range == etag)) {
    const http::ByteRange asked = http::ParseRange(range, size);
    if (asked.kind == http::ByteRange::Kind::kPart) {
      status = 206;
      first = asked.first;
      last = asked.last;
      headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                                                std::to_string(size));
    } else if (asked.kind == http::ByteRange::Kind::kUnsatisfiable) {
      http::Response r = http::Response::Error(416, Status::Invalid("range not satisfiable"));
      r.headers.emplace_back("Content-Range", "bytes */" + std::to_string(size));
      resp.Send(std::move(r));
      return;
    }
  }
  uint64_t length = size == 0 ? 0 : last - first + 1;
  SendVerified(ctx, req, std::move(resp), std::move(*reader), status, std::move(headers), first, length);
}

}  // namespace

// Replicated: what the cluster holds but this journal does not (yet) is
// fetched through from JetStream into the journal first (replication.h).
void Serve(ApiContext* ctx, const http::Request& req, http::Responder resp, const std::string& key, bool immutable) {
  M(ctx)->gets.Increment();
  Replica* r = ctx->replica;
  if (r == nullptr || r->Find(key) == nullptr || r->HasCurrent(key)) {
    ServeLocal(ctx, Ask(req), std::move(resp), key, immutable);
    return;
  }
  auto shared = std::make_shared<http::Responder>(std::move(resp));
  r->Fetch(key, [ctx, ask = Ask(req), shared, key, immutable](const Status& s) {
    if (!s.ok() && s.code() != Code::kNotFound) {
      log::Warn("fetch-through from JetStream failed", {{"key", key}, {"error", s.message()}});
      shared->SendError(Status::Unavailable("blob " + key + " is not on this replica yet and could not be fetched"
                                            " from JetStream; retry"));
      return;
    }
    ServeLocal(ctx, ask, std::move(*shared), key, immutable);
  });
}

void ServeBlob(ApiContext* ctx, const http::Request& req, http::Responder resp) {
  std::string_view hex = req.path.substr(kBlobPrefix.size());
  if (IsHex64(hex)) {
    Serve(ctx, req, std::move(resp), std::string(kBlobKeyPrefix) + std::string(hex), true);
    return;
  }
  if (hex.size() < kMinBlobPrefix || hex.size() > 64 || !IsLowerHex(hex)) {
    resp.SendError(Status::Invalid(
                   "expected /blobs/sha256/<64 lower-case hex digits, or a prefix of at least 16 of them>"));
    return;
  }
  if (ctx->replica != nullptr) {
    std::vector<const BlobMeta*> known = ctx->replica->List(std::string(kBlobKeyPrefix) + std::string(hex), "", 1);
    if (!known.empty()) {
      Serve(ctx, req, std::move(resp), known.front()->key, true);
      return;
    }
  }
  auto first = ctx->journal->List(std::string(kBlobKeyPrefix) + std::string(hex), 1);
  if (!first.ok()) {
    resp.SendError(first.status());
    return;
  }
  if (first->empty()) {
    resp.SendError(Status::NotFound("no blob whose SHA-256 starts with " + std::string(hex)));
    return;
  }
  Serve(ctx, req, std::move(resp), first->front().key, true);
}

}  // namespace folio::storage::api_internal
