// folio-storage's API (api.h): streamed uploads (PUT /blobs/sha256/<hex>,
// PUT /objects/<name>) into the journal and, replicated, JetStream.
#include <algorithm>
#include <charconv>
#include <chrono>

#include "api_internal.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/log.h"

namespace folio::storage::api_internal {
namespace {

// A streamed upload into a BlobWriter: buffers up to write_chunk_bytes,
// then pauses the body while the I/O pool appends it.
class Upload final : public http::BodyReader, public std::enable_shared_from_this<Upload> {
 public:
  // `length`: the body's Content-Length, or -1 if unknown (chunked).
  // Replicated: `pub` publishes this upload's chunks and metadata (meta
  // says its key, upload id and content type), else null.
  // prev: the cluster's version before this upload (null: none).
  Upload(ApiContext* ctx, http::Responder resp, journal::BlobWriter writer, std::string expect_hex,
         std::string label, int keep, int64_t length, std::shared_ptr<bus::Publisher> pub, BlobMeta meta,
         std::shared_ptr<const BlobMeta> prev)
      : ctx_(ctx), resp_(std::move(resp)), writer_(std::make_shared<journal::BlobWriter>(std::move(writer))),
        expect_hex_(std::move(expect_hex)), label_(std::move(label)), keep_(keep), left_(length),
        pub_(std::move(pub)), meta_(std::make_shared<BlobMeta>(std::move(meta))), prev_(std::move(prev)) {
    ReserveChunk();
  }

  Status OnData(std::string_view piece) override {
    if (!expect_hex_.empty() || pub_) hash_.Update(piece);
    buf_.append(piece);
    if (left_ > 0) left_ -= std::min<int64_t>(left_, static_cast<int64_t>(piece.size()));
    // The body's last bytes wait for OnEnd, which follows at once: the
    // append and the commit then take one trip to the I/O pool, not two.
    if (buf_.size() >= ctx_->options.write_chunk_bytes && left_ != 0) Write(false);
    return Status::Ok();
  }

  void OnEnd() override {
    if (!expect_hex_.empty() || pub_) {
      std::string got = hash_.FinishHex();
      meta_->sha256 = got;
      if (!expect_hex_.empty() && got != expect_hex_) {
        M(ctx_)->rejected.Increment();
        AbortWriter();
        resp_.SendError(Status::Invalid(
                        "body has SHA-256 " + got + ", not the " + expect_hex_ + " named in the URL; nothing was kept"));
        return;
      }
    }
    Write(true);
  }

  void OnAbort(const Status& why) override {
    M(ctx_)->rejected.Increment();
    log::Info("upload abandoned", {{"object", label_}, {"why", why.message()}});
    AbortWriter();
  }

 private:
  // Loop thread: this replica's upload is over (Replica::UploadEnded) and
  // its publisher goes back to the pool.
  void EndReplicated() {
    if (!pub_) return;
    ctx_->replica->UploadEnded(meta_->key, meta_->upload);
    pub_.reset();
  }

  // Also ends a replicated upload (the purge task holds what it needs).
  void AbortWriter() {
    auto w = writer_;
    auto m = meta_;
    Replica* r = pub_ ? ctx_->replica : nullptr;
    ctx_->io->Submit([w, r, m] {
      w->Abort();
      if (r != nullptr && m->chunks > 0) r->DropChunks(ChunkSubject(m->key, m->upload));
    });
    EndReplicated();
  }

  // Appends the buffer on the I/O pool (and commits if `last`).
  void Write(bool last) {
    Pause();
    auto self = shared_from_this();
    auto data = std::make_shared<std::string>(std::move(buf_));
    buf_ = std::string();
    if (!last) ReserveChunk();
    auto end_time = std::chrono::steady_clock::now();
    // Its own reference: an abandoned upload drops pub_ on the loop meanwhile.
    ctx_->io->Submit([self, data, last, end_time, publisher = pub_] {
      // Replicated: the chunks (and, last, the metadata) are queued first,
      // so their acks come in while the journal appends and fdatasyncs.
      Status pub = self->Publish(publisher.get(), *data, last);
      Status s = data->empty() ? Status::Ok() : self->writer_->Append(*data);
      if (s.ok() && last) s = self->writer_->Commit();
      if (s.ok() && last && publisher) {
        if (pub.ok()) pub = self->ctx_->replica->WaitAcks(publisher.get());
        if (!pub.ok()) s = Status::Unavailable("could not record it in JetStream (" + pub.message() + ")");
      } else if (!s.ok() && last && publisher && pub.ok()) {
        self->ctx_->replica->Revert(publisher.get(), *self->meta_, self->prev_.get());
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - end_time).count();
      self->ctx_->loop->Post([self, s, last, secs] { self->Written(s, last, secs); });
    });
  }

  // I/O pool. Queues data's chunks (and, if last, the metadata); no wait.
  Status Publish(bus::Publisher* p, std::string_view data, bool last) {
    if (p == nullptr) return Status::Ok();
    Replica* r = ctx_->replica;
    Status s = r->PublishChunks(p, ChunkSubject(meta_->key, meta_->upload), data, &meta_->chunks);
    if (s.ok() && last) {
      meta_->size = writer_->size() + data.size();
      s = r->PublishMeta(p, *meta_);
    }
    return s;
  }

  void Written(const Status& s, bool last, double secs) {
    if (!s.ok() || last) ObserveWrite(ctx_, s);
    if (!s.ok()) {
      M(ctx_)->rejected.Increment();
      log::Warn("upload failed", {{"object", label_}, {"error", s.message()}});
      AbortWriter();
      // The body (if any is left) is discarded by the server.
      resp_.SendError(WriteFailedStatus(ctx_, s, label_));
      Resume();
      return;
    }
    if (!last) {
      Resume();
      return;
    }
    M(ctx_)->put_seconds.Observe(secs);
    M(ctx_)->bytes_in.Increment(static_cast<double>(writer_->size()));
    JsonWriter w;
    w.BeginObject().Key("key").String(writer_->key()).Key("size").Int(static_cast<int64_t>(writer_->size()));
    w.EndObject();
    resp_.Send(http::Response::Json(201, w.Take()));
    if (pub_) {
      ctx_->replica->Recorded(*meta_);
      EndReplicated();
    }
    if (keep_ > 0) Retain(writer_->key(), keep_);
  }

  // Keeps the newest `keep` objects of key's folder (backups retention).
  void Retain(const std::string& key, int keep) {
    size_t slash = key.rfind('/');
    std::string folder = key.substr(0, slash + 1);
    if (ctx_->replica != nullptr) {
      RetainReplicated(folder, keep);
      return;
    }
    journal::Journal* j = ctx_->journal;
    ctx_->io->Submit([j, folder, keep] {
      auto all = j->List(folder, 100000);
      if (!all.ok()) return;
      std::vector<journal::BlobInfo> direct;
      for (auto& b : *all) {
        if (b.key.find('/', folder.size()) == std::string::npos) direct.push_back(std::move(b));
      }
      std::sort(direct.begin(), direct.end(), [](const auto& a, const auto& b) { return a.seq > b.seq; });
      for (size_t i = static_cast<size_t>(keep); i < direct.size(); ++i) {
        if (Status s = j->Delete(direct[i].key); s.ok()) {
          log::Info("retention removed an old object", {{"key", direct[i].key}});
        }
      }
    });
  }

  // Replicated: the newest (by KV revision; this upload's is pending, so
  // newest) `keep` of the cluster's objects in folder stay; the others are
  // deleted in JetStream, and so on every replica.
  void RetainReplicated(const std::string& folder, int keep) {
    std::vector<const BlobMeta*> direct;
    for (const BlobMeta* m : ctx_->replica->List(folder, "", 100000)) {
      if (m->key.find('/', folder.size()) == std::string::npos) direct.push_back(m);
    }
    std::sort(direct.begin(), direct.end(), [](const auto* a, const auto* b) { return a->revision > b->revision; });
    for (size_t i = static_cast<size_t>(keep); i < direct.size(); ++i) {
      std::string old = direct[i]->key;
      ApiContext* ctx = ctx_;
      ctx->io->Submit([ctx, old] {
        (void)ctx->journal->Delete(old);
        Status s = ctx->replica->PublishDelete(old);
        ctx->loop->Post([ctx, old, s] {
          if (!s.ok()) {
            log::Warn("retention could not delete an old object in JetStream", {{"key", old}, {"error", s.message()}});
            return;
          }
          ctx->replica->Forgotten(old);
          log::Info("retention removed an old object", {{"key", old}});
        });
      });
    }
  }

  // One allocation for the next chunk when the length is known: growing
  // the string by doubling copied each 1 MiB chunk twice more and faulted in
  // fresh pages each time.
  void ReserveChunk() {
    if (left_ > 0) buf_.reserve(static_cast<size_t>(std::min<int64_t>(left_, ctx_->options.write_chunk_bytes)));
  }

  ApiContext* ctx_;
  http::Responder resp_;
  std::shared_ptr<journal::BlobWriter> writer_;  // used on the I/O pool, one task at a time
  std::string expect_hex_;                       // "" for named objects (no hash check)
  std::string label_;
  int keep_;
  Sha256Stream hash_;
  std::string buf_;
  int64_t left_;  // body bytes still to come; -1: unknown
  std::shared_ptr<bus::Publisher> pub_;  // replicated only; used on the I/O pool, one task at a time
  std::shared_ptr<BlobMeta> meta_;      // what is recorded in JetStream; chunks/size filled on the I/O pool
  std::shared_ptr<const BlobMeta> prev_;  // the cluster's version before (Replica::Revert); may be null
};

// A blob upload of `key` whose content is already stored: answers 200
// "existing" (the body is not read) and returns true. Replicated: present
// when the cluster has it (this replica may not have copied it yet; a local
// copy the cluster lacks is published). Else content-addressed: an existing
// blob is the same bytes, not read again unless it is known to be damaged:
// then the upload replaces it.
bool AnsweredPresent(ApiContext* ctx, http::Responder* resp, const std::string& key) {
  int64_t size = -1;
  if (ctx->replica != nullptr) {
    if (const BlobMeta* m = ctx->replica->Find(key); m != nullptr) size = static_cast<int64_t>(m->size);
  } else if (auto have = ctx->journal->Get(key); have.ok() && !Damaged().Contains(key, have->seq())) {
    size = static_cast<int64_t>(have->size());
  }
  if (size < 0) return false;
  JsonWriter w;
  w.BeginObject().Key("key").String(key).Key("size").Int(size);
  w.Key("existing").Bool(true).EndObject();
  resp->Send(http::Response::Json(200, w.Take()));
  return true;
}

// The body's Content-Length, or -1 if unknown (chunked).
int64_t ContentLength(const http::Request& req) {
  int64_t length = -1;
  if (std::string_view cl = req.GetHeader("content-length"); !cl.empty()) {
    auto [p, ec] = std::from_chars(cl.data(), cl.data() + cl.size(), length);
    if (ec != std::errc() || p != cl.data() + cl.size() || length < 0) length = -1;  // the parser checked it
  }
  return length;
}

}  // namespace

std::shared_ptr<http::BodyReader> StartUpload(ApiContext* ctx, const http::Request& req, http::Responder resp,
                                              std::string key, std::string expect_hex, int keep) {
  M(ctx)->puts.Increment();
  std::string content_type(req.GetHeader("content-type"));
  if (content_type.size() > kMaxContentType || !IsValidUtf8(content_type)) {
    resp.SendError(Status::Invalid("Content-Type must be UTF-8 of at most 255 bytes"));
    return nullptr;
  }
  if (!expect_hex.empty() && AnsweredPresent(ctx, &resp, key)) return nullptr;
  if (ctx->disk != nullptr && ctx->disk->full()) {  // refused before the body is read
    M(ctx)->refused_full.Increment();
    M(ctx)->rejected.Increment();
    resp.SendError(DiskFullStatus(key));
    return nullptr;
  }
  std::shared_ptr<bus::Publisher> pub;
  BlobMeta meta;
  std::shared_ptr<const BlobMeta> prev;
  if (ctx->replica != nullptr) {
    if (const BlobMeta* m = ctx->replica->Find(key); m != nullptr) prev = std::make_shared<const BlobMeta>(*m);
    auto p = ctx->replica->TakePublisher();
    if (!p.ok()) {
      resp.SendError(Status::Unavailable("cannot publish to JetStream: " + p.status().message()));
      return nullptr;
    }
    pub = std::move(*p);
    meta.key = key;
    meta.upload = NewUploadId();
    meta.content_type = content_type;
    ctx->replica->UploadStarted(meta.upload);
  }
  auto writer = ctx->journal->BeginBlob(key, pub ? JournalMeta(content_type, meta.upload) : content_type);
  if (!writer.ok()) {
    resp.SendError(WriteFailedStatus(ctx, writer.status(), key));
    return nullptr;
  }
  return std::make_shared<Upload>(ctx, std::move(resp), std::move(*writer), std::move(expect_hex), key, keep,
                                  ContentLength(req), std::move(pub), std::move(meta), std::move(prev));
}

}  // namespace folio::storage::api_internal
