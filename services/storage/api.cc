#include "api.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "auth.h"
#include "damaged.h"
#include "folio/core/disk_space.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/log.h"
#include "folio/core/text.h"
#include "folio/http/attachment.h"
#include "folio/http/conditional.h"

namespace folio::storage {
namespace {

constexpr std::string_view kBlobPrefix = "/blobs/sha256/";
constexpr std::string_view kObjectPrefix = "/objects/";
constexpr std::string_view kBlobKeyPrefix = "sha256/";
constexpr std::string_view kObjectKeyPrefix = "objects/";
constexpr size_t kMaxContentType = 255;
constexpr size_t kMaxObjectName = 512;
constexpr size_t kMaxListLimit = 10000;
constexpr const char* kImmutable = "public, max-age=31536000, immutable";

constexpr size_t kMinBlobPrefix = 16;  // hex digits: an asset URL's; shorter would be a listing
bool IsHex64(std::string_view s) { return s.size() == 64 && IsLowerHex(s); }
bool IsHexPrefix(std::string_view s) { return s.size() <= 64 && IsLowerHex(s); }

// The object name of /objects/<name>: a vault-style relative path.
Status ObjectName(std::string_view encoded, std::string* name) {
  if (!PercentDecode(encoded, name)) return Status::Invalid("object name is not valid percent-encoding");
  if (name->empty() || name->size() > kMaxObjectName) {
    return Status::Invalid("object name must be 1.." + std::to_string(kMaxObjectName) + " bytes");
  }
  if (Status s = CheckVaultPath(*name); !s.ok()) return Status::Invalid("object name: " + s.message());
  return Status::Ok();
}

struct Metrics {
  explicit Metrics(metrics::Registry* r)
      : puts(r->NewCounter("folio_storage_requests_total", "Requests by operation", {{"op", "put"}})),
        gets(r->NewCounter("folio_storage_requests_total", "Requests by operation", {{"op", "get"}})),
        deletes(r->NewCounter("folio_storage_requests_total", "Requests by operation", {{"op", "delete"}})),
        lists(r->NewCounter("folio_storage_requests_total", "Requests by operation", {{"op", "list"}})),
        rejected(r->NewCounter("folio_storage_rejected_uploads_total", "Uploads refused (hash mismatch, limits, errors)")),
        bytes_in(r->NewCounter("folio_storage_bytes_received_total", "Blob bytes committed")),
        bytes_out(r->NewCounter("folio_storage_bytes_sent_total", "Blob bytes read for responses")),
        corrupt_reads(r->NewCounter("folio_storage_corrupt_reads_total",
                                    "Blob reads that failed their checksum (damaged data on disk)")),
        refused_full(r->NewCounter("folio_storage_disk_full_refusals_total",
                                   "Writes refused with 507 because the disk is full")),
        put_seconds(r->NewHistogram("folio_storage_put_seconds", "Time from the end of an upload to its durable commit",
                                    {0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 1})) {}
  metrics::Counter &puts, &gets, &deletes, &lists, &rejected, &bytes_in, &bytes_out, &corrupt_reads, &refused_full;
  metrics::Histogram& put_seconds;
};

Metrics* M(ApiContext* ctx) {
  static Metrics* m = new Metrics(ctx->registry);  // one registry per process
  return m;
}

// Loop thread only, like every handler.
DamagedBlobs& Damaged() {
  static DamagedBlobs* d = new DamagedBlobs();  // one journal per process
  return *d;
}

Status DamagedStatus(const std::string& key) {
  return Status::DataLoss("blob " + key + " is damaged on disk (checksum mismatch)");
}

// Loop thread. A read of version `seq` of `key` failed with `s` (`what`
// happens to the request: for the log). Damage is counted, remembered and
// logged once per version. Returns what to answer.
Status ReadFailed(ApiContext* ctx, const std::string& key, uint64_t seq, const Status& s, std::string_view what) {
  if (s.code() != Code::kDataLoss) {
    log::Error("blob read failed", {{"key", key}, {"error", s.message()}, {"request", what}});
    return s;
  }
  M(ctx)->corrupt_reads.Increment();
  if (Damaged().Add(key, seq)) {
    log::Error("blob is damaged on disk; its reads now fail", {{"key", key}, {"error", s.message()}});
  }
  return DamagedStatus(key);
}

// After a journal write: a full disk marks ctx->disk, a success clears it.
void ObserveWrite(ApiContext* ctx, const Status& s) {
  if (ctx->disk != nullptr) ctx->disk->Observe(s);
}

Status DiskFullStatus(const std::string& what) {
  return Status::NoSpace("the disk is full: " + what +
                         " was not stored (nothing was kept); writes resume by themselves once space returns");
}

// What the client learns of a failed write of `what`: a full disk as
// DiskFullStatus; the journal's sticky error without its detail (it names
// the data directory; the journal logged it when the write failed);
// anything else as it is.
Status WriteFailedStatus(ApiContext* ctx, const Status& s, const std::string& what) {
  if (s.code() == Code::kNoSpace) return DiskFullStatus(what);
  if (ctx->journal->WriteError().ok()) return s;
  return Status::Unavailable(
      "storage cannot write (a previous write or fsync failed); it must be restarted; nothing was kept");
}

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

void Delete(ApiContext* ctx, http::Responder resp, std::string key) {
  M(ctx)->deletes.Increment();
  auto shared = std::make_shared<http::Responder>(std::move(resp));
  // Replicated: known in the cluster is enough (this journal may not have
  // copied it yet); the delete is recorded in JetStream before the 204.
  const bool known = ctx->replica != nullptr && ctx->replica->Find(key) != nullptr;
  ctx->io->Submit([ctx, shared, key, known] {
    const Status local = ctx->journal->Delete(key);
    Status s = local;
    if (known && (s.ok() || s.code() == Code::kNotFound)) {
      Status pub = ctx->replica->PublishDelete(key);
      s = pub.ok() ? Status::Ok() : Status::Unavailable("could not record the delete in JetStream (" + pub.message() + "); retry");
    }
    ctx->loop->Post([ctx, shared, s, local, key, known] {
      if (known && s.ok()) ctx->replica->Forgotten(key);
      ObserveWrite(ctx, local);  // the disk's state: what the journal's own write said
      if (s.ok()) {
        shared->Send(http::Response{204, {}, ""});
      } else {
        shared->SendError(s.code() == Code::kNotFound ? Status::NotFound("no object " + key)
                                                      : WriteFailedStatus(ctx, s, key));
      }
    });
  });
}

void List(ApiContext* ctx, const http::Request& req, http::Responder resp, bool blobs) {
  M(ctx)->lists.Increment();
  std::string prefix = req.QueryParam("prefix"), after = req.QueryParam("after"), limit_s = req.QueryParam("limit");
  size_t limit = 1000;
  if (!limit_s.empty()) {
    auto [p, ec] = std::from_chars(limit_s.data(), limit_s.data() + limit_s.size(), limit);
    if (ec != std::errc() || p != limit_s.data() + limit_s.size() || limit < 1 || limit > kMaxListLimit) {
      resp.SendError(Status::Invalid("limit must be an integer in 1.." + std::to_string(kMaxListLimit)));
      return;
    }
  }
  if (blobs && (!IsHexPrefix(prefix) || !IsHexPrefix(after))) {
    resp.SendError(Status::Invalid("prefix and after must be lower-case hex (at most 64 digits)"));
    return;
  }
  if (!IsValidUtf8(prefix) || !IsValidUtf8(after) || prefix.size() > kMaxObjectName || after.size() > kMaxObjectName) {
    resp.SendError(Status::Invalid("prefix and after must be UTF-8 of at most 512 bytes"));
    return;
  }
  std::string kp(blobs ? kBlobKeyPrefix : kObjectKeyPrefix);
  if (ctx->replica != nullptr) {  // the cluster-wide view: every replica answers the same
    std::vector<const BlobMeta*> known = ctx->replica->List(kp + prefix, after.empty() ? "" : kp + after, limit);
    JsonWriter w;
    w.BeginObject().Key(blobs ? "blobs" : "objects").BeginArray();
    for (const BlobMeta* b : known) {
      w.BeginObject().Key(blobs ? "sha256" : "name").String(std::string_view(b->key).substr(kp.size()));
      w.Key("size").Int(static_cast<int64_t>(b->size)).Key("content_type").String(b->content_type);
      // The KV revision: one order on every replica (-1 until this replica's watcher saw its own write).
      w.Key("seq").Int(b->revision == kPendingRevision ? -1 : static_cast<int64_t>(b->revision)).EndObject();
    }
    w.EndArray().Key("truncated").Bool(known.size() == limit).EndObject();
    resp.Send(http::Response::Json(200, w.Take()));
    return;
  }
  auto items = ctx->journal->List(kp + prefix, limit, after.empty() ? "" : kp + after);
  if (!items.ok()) {
    resp.SendError(items.status());
    return;
  }
  JsonWriter w;
  w.BeginObject().Key(blobs ? "blobs" : "objects").BeginArray();
  for (const journal::BlobInfo& b : *items) {
    w.BeginObject().Key(blobs ? "sha256" : "name").String(std::string_view(b.key).substr(kp.size()));
    w.Key("size").Int(static_cast<int64_t>(b.size)).Key("content_type").String(b.meta);
    w.Key("seq").Int(static_cast<int64_t>(b.seq)).EndObject();
  }
  w.EndArray().Key("truncated").Bool(items->size() == limit).EndObject();
  resp.Send(http::Response::Json(200, w.Take()));
}

// Starts an upload of `key`; nullptr (after answering) when refused.
std::shared_ptr<http::BodyReader> StartUpload(ApiContext* ctx, const http::Request& req, http::Responder resp,
                                              std::string key, std::string expect_hex, int keep) {
  M(ctx)->puts.Increment();
  std::string content_type(req.GetHeader("content-type"));
  if (content_type.size() > kMaxContentType || !IsValidUtf8(content_type)) {
    resp.SendError(Status::Invalid("Content-Type must be UTF-8 of at most 255 bytes"));
    return nullptr;
  }
  if (!expect_hex.empty() && ctx->replica != nullptr) {
    // Replicated: present when the cluster has it (this replica may not
    // have copied it yet; a local copy the cluster lacks is published).
    if (const BlobMeta* m = ctx->replica->Find(key); m != nullptr) {
      JsonWriter w;
      w.BeginObject().Key("key").String(key).Key("size").Int(static_cast<int64_t>(m->size));
      w.Key("existing").Bool(true).EndObject();
      resp.Send(http::Response::Json(200, w.Take()));
      return nullptr;
    }
  } else if (!expect_hex.empty()) {
    // Content-addressed: an existing blob is the same bytes. Not read again,
    // unless it is known to be damaged: then the upload replaces it.
    if (auto have = ctx->journal->Get(key); have.ok() && !Damaged().Contains(key, have->seq())) {
      JsonWriter w;
      w.BeginObject().Key("key").String(key).Key("size").Int(static_cast<int64_t>(have->size()));
      w.Key("existing").Bool(true).EndObject();
      resp.Send(http::Response::Json(200, w.Take()));
      return nullptr;
    }
  }
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
  int64_t length = -1;
  if (std::string_view cl = req.GetHeader("content-length"); !cl.empty()) {
    auto [p, ec] = std::from_chars(cl.data(), cl.data() + cl.size(), length);
    if (ec != std::errc() || p != cl.data() + cl.size() || length < 0) length = -1;  // the parser checked it
  }
  return std::make_shared<Upload>(ctx, std::move(resp), std::move(*writer), std::move(expect_hex), key, keep, length,
                                  std::move(pub), std::move(meta), std::move(prev));
}

// `h` behind the token check (auth.h): refused requests never reach it.
http::Handler Guard(ApiContext* ctx, Access need, http::Handler h) {
  return [ctx, need, h = std::move(h)](const http::Request& req, http::Responder resp) {
    if (Status s = Authorize(ctx->tokens, req, need); !s.ok()) {
      SendDenied(resp, s);
      return;
    }
    h(req, std::move(resp));
  };
}

// The check of an upload (http/admission.h): the write token, from the
// headers, before a byte of the body is read or counted against the body
// budget; a refusal closes the connection without reading the body.
http::AdmissionCheck UploadCheck(ApiContext* ctx) {
  return [ctx](const http::Request& req, http::AdmissionGate gate) {
    if (Status s = Authorize(ctx->tokens, req, Access::kWrite); !s.ok()) return gate.Refuse(Denied(s));
    gate.Admit();
  };
}

// GET/HEAD /blobs/sha256/<hex or a prefix of at least kMinBlobPrefix>.
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

}  // namespace


std::string NotReadyReason(const ApiContext& ctx) {
  // The journal's error names the data directory: it is in the log, not here.
  if (!ctx.journal->WriteError().ok()) return "a write or fsync failed: restart needed (the error is in the log)";
  if (ctx.disk != nullptr && ctx.disk->full()) return "disk full: writes refused until space returns; reads work";
  if (ctx.replica != nullptr) return ctx.replica->NotReadyReason();
  return "";
}

void MountApi(http::Router* router, ApiContext* ctx) {
  M(ctx);
  router->HandleStreamingPrefix(
      "PUT", std::string(kBlobPrefix), UploadCheck(ctx),
      [ctx](const http::Request& req, http::Responder resp) -> std::shared_ptr<http::BodyReader> {
        std::string_view hex = req.path.substr(kBlobPrefix.size());
        if (!IsHex64(hex)) {
          resp.SendError(Status::Invalid("expected /blobs/sha256/<64 lower-case hex digits>"));
          return nullptr;
        }
        return StartUpload(ctx, req, std::move(resp), std::string(kBlobKeyPrefix) + std::string(hex),
                           std::string(hex), 0);
      },
      ctx->options.max_blob_bytes, "blob");
  router->HandleStreamingPrefix(
      "PUT", std::string(kObjectPrefix), UploadCheck(ctx),
      [ctx](const http::Request& req, http::Responder resp) -> std::shared_ptr<http::BodyReader> {
        std::string name;
        if (Status s = ObjectName(req.path.substr(kObjectPrefix.size()), &name); !s.ok()) {
          resp.SendError(s);
          return nullptr;
        }
        int keep = 0;
        if (std::string k = req.QueryParam("keep"); !k.empty()) {
          auto [p, ec] = std::from_chars(k.data(), k.data() + k.size(), keep);
          if (ec != std::errc() || p != k.data() + k.size() || keep < 1 || keep > 10000) {
            resp.SendError(Status::Invalid("keep must be an integer in 1..10000"));
            return nullptr;
          }
        }
        return StartUpload(ctx, req, std::move(resp), std::string(kObjectKeyPrefix) + name, "", keep);
      },
      ctx->options.max_blob_bytes, "object");
  // Buffered routes, each behind the token check for what it needs.
  // Route classes for request metrics: "blob" and "object" (one named
  // thing), "list" (GET /blobs, /objects), the rest "other".
  auto route = [router, ctx](std::string_view method, std::string_view path, Access need, http::Handler h) {
    std::string_view cls = path == kBlobPrefix ? "blob" : path == kObjectPrefix ? "object" : "list";
    if (path.back() == '/') router->HandlePrefix(method, std::string(path), Guard(ctx, need, std::move(h)), cls);
    else router->Handle(method, std::string(path), Guard(ctx, need, std::move(h)), cls);
  };
  route("GET", kBlobPrefix, Access::kRead, [ctx](const http::Request& req, http::Responder resp) {
    ServeBlob(ctx, req, std::move(resp));
  });
  route("DELETE", kBlobPrefix, Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    std::string_view hex = req.path.substr(kBlobPrefix.size());
    if (!IsHex64(hex)) {
      resp.SendError(Status::Invalid("expected /blobs/sha256/<64 lower-case hex digits>"));
      return;
    }
    Delete(ctx, std::move(resp), std::string(kBlobKeyPrefix) + std::string(hex));
  });
  route("GET", "/blobs", Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    List(ctx, req, std::move(resp), true);
  });
  route("GET", kObjectPrefix, Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    std::string name;
    if (Status s = ObjectName(req.path.substr(kObjectPrefix.size()), &name); !s.ok()) {
      resp.SendError(s);
      return;
    }
    Serve(ctx, req, std::move(resp), std::string(kObjectKeyPrefix) + name, false);
  });
  route("DELETE", kObjectPrefix, Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    std::string name;
    if (Status s = ObjectName(req.path.substr(kObjectPrefix.size()), &name); !s.ok()) {
      resp.SendError(s);
      return;
    }
    Delete(ctx, std::move(resp), std::string(kObjectKeyPrefix) + name);
  });
  route("GET", "/objects", Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    List(ctx, req, std::move(resp), false);
  });
  // Unknown paths: a caller without a token learns nothing, not even that.
  router->Fallback(Guard(ctx, Access::kRead, [](const http::Request&, http::Responder resp) {
    resp.SendError(Status::NotFound("no route for this path"));
  }));
}

}  // namespace folio::storage
