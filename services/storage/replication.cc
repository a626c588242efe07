#include "replication.h"

#include <charconv>
#include <chrono>
#include <thread>

#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/core/secret.h"

namespace folio::storage {
namespace {

constexpr std::string_view kBlobKey = "sha256/";
constexpr std::string_view kObjectKey = "objects/";

bool ParseU64(std::string_view s, uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// The id token of a key in subjects and KV keys: a blob's hex, or the
// SHA-256 of an object's name (names hold characters subjects cannot).
std::string IdOf(std::string_view key) {
  if (key.starts_with(kBlobKey)) return "b." + std::string(key.substr(kBlobKey.size()));
  return "o." + Sha256Hex(key.substr(key.starts_with(kObjectKey) ? kObjectKey.size() : 0));
}

}  // namespace

std::string EncodeMeta(const BlobMeta& m) {
  return "v1\t" + std::to_string(m.size) + "\t" + std::to_string(m.chunks) + "\t" + m.sha256 + "\t" + m.upload +
         "\t" + m.content_type + "\t" + m.key;
}

Result<BlobMeta> DecodeMeta(std::string_view v) {
  std::string_view f[7];
  for (int i = 0; i < 6; ++i) {
    size_t tab = v.find('\t');
    if (tab == v.npos) return Status::Invalid("blob metadata: too few fields");
    f[i] = v.substr(0, tab);
    v.remove_prefix(tab + 1);
  }
  f[6] = v;
  BlobMeta m;
  if (f[0] != "v1") return Status::Invalid("blob metadata: unknown version");
  if (!ParseU64(f[1], &m.size) || !ParseU64(f[2], &m.chunks)) return Status::Invalid("blob metadata: bad number");
  if (f[3].size() != 64 || !IsLowerHex(f[3]) || f[4].empty() || !IsLowerHex(f[4]) || f[6].empty()) {
    return Status::Invalid("blob metadata: bad hash, upload or key");
  }
  m.sha256 = f[3];
  m.upload = f[4];
  m.content_type = f[5];
  m.key = f[6];
  return m;
}

std::string MetaKeyOf(std::string_view key) { return IdOf(key); }
std::string ChunkSubject(std::string_view key, std::string_view upload) {
  return std::string(bus::kBlobSubjectPrefix) + IdOf(key) + "." + std::string(upload);
}
std::string ChunkSubjects(std::string_view key) { return std::string(bus::kBlobSubjectPrefix) + IdOf(key) + ".*"; }
std::string JournalMeta(std::string_view content_type, std::string_view upload) {
  return std::string(content_type) + "\n" + std::string(upload);
}
std::string_view ContentTypeOf(std::string_view meta) { return meta.substr(0, meta.find('\n')); }
std::string_view UploadOf(std::string_view meta) {
  size_t nl = meta.find('\n');
  return nl == meta.npos ? std::string_view() : meta.substr(nl + 1);
}
std::string NewUploadId() {
  auto r = RandomHex(8);
  if (r.ok()) return *r;
  // getrandom failing is not expected; a clock-based id still differs per upload.
  return Sha256Hex(std::to_string(std::chrono::steady_clock::now().time_since_epoch().count())).substr(0, 16);
}

Replica::Replica(const ReplicaOptions& options, http::Loop* loop, ThreadPool* io, journal::Journal* journal)
    : options_(options), loop_(loop), io_(io), journal_(journal) {}

Replica::~Replica() {
  watcher_.reset();  // its thread posts to the loop: stop it first
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    pool_.clear();
  }
  bus_.reset();
  bus_metrics_.reset();  // after the Bus that reports to it
}

Result<std::unique_ptr<Replica>> Replica::Start(const ReplicaOptions& options, http::Loop* loop, ThreadPool* io,
                                                journal::Journal* journal, metrics::Registry* registry) {
  std::unique_ptr<Replica> r(new Replica(options, loop, io, journal));
  bus::BusOptions bo;
  bo.url = options.nats_url;
  bo.name = "folio-storage";
  bo.replicas = options.replicas;
  bo.user = options.nats_user;
  bo.password = options.nats_password;
  bo.ca_file = options.nats_ca;
  bo.publish_timeout_ms = options.ack_timeout_ms;
  r->bus_metrics_ = std::make_unique<bus::BusMetrics>(registry);  // folio_bus_connected, folio_bus_reconnects_total
  bo.metrics = r->bus_metrics_.get();
  auto bus = bus::Bus::Connect(bo);
  if (!bus.ok()) return bus.status();
  r->bus_ = std::move(*bus);
  // Local objects by KV key: a delete marker names only that.
  if (auto objs = journal->List(kObjectKey, 100000); objs.ok()) {
    for (const auto& b : *objs) r->names_[IdOf(b.key)] = b.key;
  }
  registry->AddScrapedGauge("folio_storage_replica_missing_blobs",
                            "Blobs and objects known in JetStream that are not yet in the local journal",
                            [p = r.get()] { return p->missing_count_.load(std::memory_order_relaxed); });
  r->fetch_failures_ = &registry->NewCounter("folio_storage_replica_fetch_failures_total",
                                             "Copies from JetStream into the journal that failed (fill or fetch-through)");
  bus::KvWatcherMetrics wm;
  wm.lag = &registry->NewGauge("folio_storage_replica_watch_lag",
                               "Metadata changes in JetStream this replica's watcher has not applied yet");
  Replica* p = r.get();
  auto setup = [&]() -> Status {
    if (Status st = bus::EnsureBlobStore(p->bus_.get()); !st.ok()) return st;
    auto watcher = bus::KvWatcher::Start(
        p->bus_.get(), bus::kBlobMetaBucket,
        [p](bus::KvEntry&& e) { p->loop_->Post([p, e = std::move(e)]() mutable { p->OnEntry(std::move(e)); }); },
        [p] {
          p->loop_->Post([p] {
            p->replayed_ = true;
            log::Info("replica has the cluster's blob list", {{"known", std::to_string(p->known_.size())},
                                                               {"missing", std::to_string(p->missing_.size())}});
          });
        },
        wm);
    if (!watcher.ok()) return watcher.status();
    p->watcher_ = std::move(*watcher);
    return Status::Ok();
  };
  // While a cluster forms, and while replicas started together race to create
  // the stream and bucket, a stream just created can answer "not found" for a
  // moment (seen in CI): both steps are retried until setup_timeout_ms.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.setup_timeout_ms);
  Status st = setup();
  while (!st.ok() && std::chrono::steady_clock::now() < deadline) {
    log::Info("JetStream not ready for replication yet; retrying", {{"error", st.message()}});
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    st = setup();
  }
  if (!st.ok()) return st;
  loop->Every(1000, [p] { p->Pump(); });  // retries failed fills
  return r;
}

std::string Replica::NotReadyReason() const {
  if (!bus_->connected()) return "not connected to NATS";
  if (!replayed_) return "reading the cluster's blob list from JetStream";
  return "";
}

const BlobMeta* Replica::Find(const std::string& key) const {
  auto it = known_.find(key);
  return it == known_.end() ? nullptr : &it->second;
}

std::vector<const BlobMeta*> Replica::List(std::string_view prefix, std::string_view after, size_t limit) const {
  std::vector<const BlobMeta*> out;
  auto it = after.empty() ? known_.lower_bound(prefix) : known_.upper_bound(after);
  if (!after.empty() && after < prefix) it = known_.lower_bound(prefix);
  for (; it != known_.end() && out.size() < limit && it->first.starts_with(prefix); ++it) out.push_back(&it->second);
  return out;
}

bool Replica::HasCurrent(const std::string& key) const {
  auto have = journal_->Get(key);
  if (!have.ok()) return false;
  if (key.starts_with(kBlobKey)) return true;  // content-addressed: any version is the same bytes
  const BlobMeta* m = Find(key);
  return m == nullptr || UploadOf(have->meta()) == m->upload;
}

void Replica::SetMissing(const std::string& key, bool missing) {
  if (missing) missing_.insert(key);
  else missing_.erase(key);
  missing_count_.store(static_cast<double>(missing_.size()), std::memory_order_relaxed);
}

void Replica::OnEntry(bus::KvEntry&& e) {
  if (e.deleted) {
    std::string key;
    if (auto it = names_.find(e.key); it != names_.end()) key = it->second;
    else if (e.key.starts_with("b.")) key = std::string(kBlobKey) + e.key.substr(2);
    if (key.empty()) return;  // an object this replica never had
    known_.erase(key);
    failing_.erase(key);
    SetMissing(key, false);
    journal::Journal* j = journal_;
    io_->Submit([j, key] { (void)j->Delete(key); });  // kNotFound when it was never copied here
    return;
  }
  auto m = DecodeMeta(e.value);
  if (!m.ok()) {
    log::Warn("ignoring malformed blob metadata", {{"kv_key", e.key}, {"error", m.status().message()}});
    return;
  }
  m->revision = e.revision;
  names_[e.key] = m->key;
  std::string key = m->key;
  const bool own = own_uploads_.contains(m->upload);
  known_[key] = std::move(*m);
  SetMissing(key, !own && !HasCurrent(key));
  Pump();
}

void Replica::UploadStarted(const std::string& upload) { own_uploads_.insert(upload); }

void Replica::UploadEnded(const std::string& key, const std::string& upload) {
  own_uploads_.erase(upload);
  // A write that failed here after JetStream took it: fill it like any other.
  if (Find(key) != nullptr) SetMissing(key, !HasCurrent(key));
  Pump();
}

void Replica::Recorded(BlobMeta m) {
  std::string key = m.key;
  auto it = known_.find(key);
  if (it != known_.end() && it->second.upload != m.upload && !key.starts_with(kBlobKey)) {
    std::string old = ChunkSubject(key, it->second.upload);
    io_->Submit([this, old] { DropChunks(old); });
  }
  names_[MetaKeyOf(key)] = key;
  // The watcher may have brought this upload back before its acks did.
  m.revision = it != known_.end() && it->second.upload == m.upload ? it->second.revision : kPendingRevision;
  known_[key] = std::move(m);
  SetMissing(key, false);
}

void Replica::Forgotten(const std::string& key) {
  known_.erase(key);
  SetMissing(key, false);
}

void Replica::Pump() {
  for (auto it = missing_.begin(); it != missing_.end() && inflight_.size() < options_.fill_concurrency; ++it) {
    if (!inflight_.contains(*it)) Fetch(*it, [](const Status&) {});
  }
}

void Replica::Fetch(const std::string& key, std::function<void(const Status&)> done) {
  if (auto it = inflight_.find(key); it != inflight_.end()) {
    it->second.push_back(std::move(done));
    return;
  }
  const BlobMeta* m = Find(key);
  if (m == nullptr) {
    done(Status::NotFound("no object " + key));
    return;
  }
  inflight_[key].push_back(std::move(done));
  io_->Submit([this, meta = *m] {
    Status s = FetchInto(meta);
    loop_->Post([this, key = meta.key, upload = meta.upload, s] { FetchDone(key, upload, s); });
  });
}

void Replica::FetchDone(const std::string& key, const std::string& upload, const Status& s) {
  auto waiters = std::move(inflight_[key]);
  inflight_.erase(key);
  const BlobMeta* now = Find(key);
  Status result = s;
  if (s.ok() && now == nullptr) {
    // Deleted while it was being copied: remove the copy, never resurrect it.
    journal::Journal* j = journal_;
    io_->Submit([j, key] { (void)j->Delete(key); });
    result = Status::NotFound("no object " + key);
  } else if (s.ok()) {
    SetMissing(key, !HasCurrent(key));
    if (failing_.erase(key) > 0) log::Info("copied a blob from JetStream after failures", {{"key", key}});
  } else {
    fetch_failures_->Increment();
    // Retried every second: logged once per key until it works.
    if (failing_.insert(key).second) {
      log::Warn("could not copy a blob from JetStream; retrying", {{"key", key}, {"upload", upload},
                                                                    {"error", s.message()}});
    }
  }
  for (auto& w : waiters) w(result);
  Pump();
}

Status Replica::FetchInto(const BlobMeta& m) {
  auto writer = journal_->BeginBlob(m.key, JournalMeta(m.content_type, m.upload));
  if (!writer.ok()) return writer.status();
  Sha256Stream hash;
  Status s = bus::ReadSubject(bus_.get(), bus::kBlobStream, ChunkSubject(m.key, m.upload), m.chunks,
                              options_.fetch_timeout_ms, [&](std::string_view data) {
                                hash.Update(data);
                                return writer->Append(data);
                              });
  if (s.ok() && (writer->size() != m.size || hash.FinishHex() != m.sha256)) {
    s = Status::DataLoss("the copy of " + m.key + " in JetStream does not match its size or SHA-256");
  }
  if (s.ok()) s = writer->Commit();
  if (!s.ok()) writer->Abort();
  return s;
}

Result<std::shared_ptr<bus::Publisher>> Replica::TakePublisher() {
  std::unique_ptr<bus::Publisher> p;
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      p = std::move(pool_.back());
      pool_.pop_back();
    }
  }
  if (!p) {
    auto made = bus::Publisher::Create(bus_.get());
    if (!made.ok()) return made.status();
    p = std::move(*made);
  }
  return std::shared_ptr<bus::Publisher>(p.release(), [this](bus::Publisher* q) {
    std::lock_guard<std::mutex> lock(pool_mu_);
    pool_.emplace_back(q);
  });
}

Status Replica::PublishChunks(bus::Publisher* p, const std::string& subject, std::string_view data, uint64_t* chunks) {
  while (!data.empty()) {
    std::string_view piece = data.substr(0, bus::kBlobChunkBytes);
    if (Status s = p->Publish(subject, piece); !s.ok()) return s;
    data.remove_prefix(piece.size());
    ++*chunks;
  }
  return Status::Ok();
}

Status Replica::PublishMeta(bus::Publisher* p, const BlobMeta& m) {
  return p->KvPut(bus::kBlobMetaBucket, MetaKeyOf(m.key), EncodeMeta(m));
}

Status Replica::WaitAcks(bus::Publisher* p) { return p->Wait(options_.ack_timeout_ms); }

Status Replica::PublishDelete(const std::string& key) {
  auto p = TakePublisher();
  if (!p.ok()) return p.status();
  Status s = (*p)->KvDelete(bus::kBlobMetaBucket, MetaKeyOf(key));
  if (s.ok()) s = WaitAcks(p->get());
  if (s.ok()) s = bus::PurgeSubject(bus_.get(), bus::kBlobStream, ChunkSubjects(key));
  return s;
}

void Replica::Revert(bus::Publisher* p, const BlobMeta& m, const BlobMeta* prev) {
  (void)p->Wait(options_.ack_timeout_ms);  // whatever was queued settles first
  Status s = prev != nullptr ? p->KvPut(bus::kBlobMetaBucket, MetaKeyOf(m.key), EncodeMeta(*prev))
                             : p->KvDelete(bus::kBlobMetaBucket, MetaKeyOf(m.key));
  if (s.ok()) s = p->Wait(options_.ack_timeout_ms);
  if (!s.ok()) log::Warn("could not take back a failed upload in JetStream", {{"key", m.key}, {"error", s.message()}});
  DropChunks(ChunkSubject(m.key, m.upload));
}

void Replica::DropChunks(const std::string& subject) {
  if (Status s = bus::PurgeSubject(bus_.get(), bus::kBlobStream, subject); !s.ok()) {
    log::Warn("could not purge the chunks of an unrecorded upload", {{"subject", subject}, {"error", s.message()}});
  }
}

}  // namespace folio::storage
