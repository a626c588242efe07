// Replica: folio-storage replicated on NATS JetStream (issue 23): --replicated
// with --nats and --nats-replicas (config.h).
// JetStream is the only replication (libs/bus blob_store.h): no peer copying.
//
// Write: a PUT publishes its bytes as chunks of one subject per upload
// ("folio.blob.<b|o>.<id>.<upload>", async on a publisher context of its
// own, with send-ASAP) and its metadata to the KV bucket, while the local
// journal appends and fdatasyncs on the same I/O task; the PUT answers 201
// only once both the fdatasync and every JetStream ack (with
// --nats-replicas replicas) are in. Why in parallel, not chunks -> acks ->
// metadata -> ack: the acks then arrive during the fdatasync. Measured
// (loadtest/storage-bench.sh, 2 shared CPUs, one writer, 4 KiB): single box
// 384 µs p50; --nats-replicas 1 on one nats-server 514 µs; a 3-node
// loopback cluster 860 µs (NATS stores in /dev/shm) or 1180 µs (on the
// journal's disk: ext4's ordered journal makes our fdatasync also write
// NATS' dirty pages). The metadata is in the bucket before the journal
// commits: if the journal then fails, Revert takes it back. One subject
// per upload (not one stream message per blob) because NATS' max payload
// is 1 MB; a stream + KV instead of NATS' object store because NATS.c
// 3.4.1 has no object store API.
// Delete (and keep=N pruning): a KV delete, then a purge of the chunks.
//
// Every replica watches the bucket (a KvWatcher whose thread posts entries
// to the loop) and keeps the cluster-wide view in memory: listings and
// 16..63-digit prefix lookups answer from it, so all replicas answer alike.
// A GET of a blob the local journal lacks is fetched through from
// JetStream (size and SHA-256 checked), kept in the journal, then served.
// A fill copies every blob the journal lacks in the background (at most
// fill_concurrency at once, failed copies again every second);
// folio_storage_replica_missing_blobs counts what is still missing,
// folio_storage_replica_fetch_failures_total the copies that failed,
// folio_storage_replica_watch_lag the metadata changes not yet applied
// (and folio_bus_connected, folio_bus_reconnects_total the connection). A delete seen by the watcher removes the local
// copy; a fill that finishes after its blob was deleted removes what it
// wrote, so nothing deleted comes back.
//
// Objects have versions: the journal's meta of a replicated object is
// "<content type>\n<upload id>" (ContentTypeOf strips it), so a replica
// knows whether its copy is the version the cluster holds.
//
// Ready (/readyz) once connected to NATS and the watcher delivered the
// bucket's initial state; missing blobs do not make a replica unready
// (fetch-through serves them).
//
// Ownership: main owns the Replica (it owns the Bus, the watcher and the
// publishers); destroy it after the I/O pool has drained. Threading: the
// methods marked "loop" run on the loop thread only; those marked "I/O"
// block on NATS and run on the I/O pool only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folio/bus/blob_store.h"
#include "folio/bus/bus.h"
#include "folio/core/status.h"
#include "folio/core/thread_pool.h"
#include "folio/http/loop.h"
#include "folio/journal/journal.h"
#include "folio/metrics/metrics.h"

namespace folio::storage {

struct ReplicaOptions {
  std::string nats_url;              // --nats
  int replicas = 1;                  // --nats-replicas (1..5)
  std::string nats_user;             // --nats-user ("" = none)
  std::string nats_password;         // --nats-password[-file]
  std::string nats_ca;               // --nats-ca ("" = plain)
  size_t fill_concurrency = 4;       // blobs fetched at once by fill and fetch-through
  int64_t ack_timeout_ms = 10'000;   // a PUT waits this long for its JetStream acks
  int64_t fetch_timeout_ms = 10'000; // one fetch of a blob's chunks
  int64_t setup_timeout_ms = 30'000; // Start retries the stream/bucket setup this long
};

// One blob or object as the cluster knows it (the KV value).
struct BlobMeta {
  std::string key;           // the journal key: "sha256/<hex>" or "objects/<name>"
  uint64_t size = 0;
  uint64_t chunks = 0;       // messages on its subject
  std::string sha256;        // of its bytes
  std::string upload;        // 16 hex digits naming this version
  std::string content_type;
  uint64_t revision = 0;     // KV revision; kPendingRevision until the watcher saw it
};
inline constexpr uint64_t kPendingRevision = ~uint64_t{0};

// The KV value: "v1\t<size>\t<chunks>\t<sha256>\t<upload>\t<content type>\t<key>"
// (the key last: it is the only field that may hold a tab). kInvalidArgument
// when malformed.
std::string EncodeMeta(const BlobMeta& m);
Result<BlobMeta> DecodeMeta(std::string_view value);
// The KV key of a journal key: "b.<hex>" for a blob, "o.<sha256 of name>".
std::string MetaKeyOf(std::string_view key);
// The chunk subject of one upload of key; ChunkSubjects: of every upload.
std::string ChunkSubject(std::string_view key, std::string_view upload);
std::string ChunkSubjects(std::string_view key);
// The journal meta of a replicated blob, and its parts.
std::string JournalMeta(std::string_view content_type, std::string_view upload);
std::string_view ContentTypeOf(std::string_view journal_meta);
std::string_view UploadOf(std::string_view journal_meta);  // "" if none
// A new upload id (16 hex digits).
std::string NewUploadId();

class Replica {
 public:
  // Connects, creates the stream and bucket (retrying while the cluster
  // cannot place them yet), starts the watcher. kUnavailable if NATS
  // cannot be reached or set up within setup_timeout_ms. Call on the loop
  // thread before serving.
  static Result<std::unique_ptr<Replica>> Start(const ReplicaOptions& options, http::Loop* loop, ThreadPool* io,
                                                journal::Journal* journal, metrics::Registry* registry);
  ~Replica();

  // Loop. "" when ready; else why not.
  std::string NotReadyReason() const;
  // Loop. The cluster's current version of key, or nullptr.
  const BlobMeta* Find(const std::string& key) const;
  // Loop. Known keys starting with prefix, after `after` ("" = from the
  // start), in key order, at most limit.
  std::vector<const BlobMeta*> List(std::string_view prefix, std::string_view after, size_t limit) const;
  // Loop. The local journal holds the version the cluster knows.
  bool HasCurrent(const std::string& key) const;
  // Loop. Copies key's current version from JetStream into the journal,
  // then calls done on the loop (kNotFound if the cluster does not know
  // it, or it was deleted meanwhile). Joins a fetch already running.
  void Fetch(const std::string& key, std::function<void(const Status&)> done);
  // Loop. This replica is writing `upload` of key: the watcher bringing
  // it back before the journal's commit is not a missing blob to fetch.
  void UploadStarted(const std::string& upload);
  // Loop. The upload ended (answered, failed or abandoned).
  void UploadEnded(const std::string& key, const std::string& upload);
  // Loop. This replica wrote m (its acks are in): known at once, before
  // the watcher brings it back; an older upload's chunks are purged.
  void Recorded(BlobMeta m);
  // Loop. This replica deleted key in JetStream.
  void Forgotten(const std::string& key);

  // Any thread (no I/O: a new one is a JetStream context). A publisher for
  // one upload or delete; back to a pool when the shared_ptr goes.
  // kUnavailable if none can be made.
  Result<std::shared_ptr<bus::Publisher>> TakePublisher();
  // I/O. Queues data as chunks of `subject` (no wait); *chunks counts them.
  Status PublishChunks(bus::Publisher* p, const std::string& subject, std::string_view data, uint64_t* chunks);
  // I/O. Queues the metadata (no wait).
  Status PublishMeta(bus::Publisher* p, const BlobMeta& m);
  // I/O. Waits for every ack of p (ack_timeout_ms).
  Status WaitAcks(bus::Publisher* p);
  // I/O. The journal failed after p was given upload m: takes it back in
  // JetStream (prev, the version before it, is put back; none: the key is
  // deleted) and purges m's chunks, so that "nothing was kept" holds in
  // the cluster too. Best effort, logged.
  void Revert(bus::Publisher* p, const BlobMeta& m, const BlobMeta* prev);
  // I/O. Records the delete of key in JetStream (KV delete, waited for,
  // then a purge of its chunks).
  Status PublishDelete(const std::string& key);
  // I/O. Best effort: removes the chunks of an upload that will not be
  // recorded (a refused or failed PUT).
  void DropChunks(const std::string& subject);

 private:
  Replica(const ReplicaOptions& options, http::Loop* loop, ThreadPool* io, journal::Journal* journal);
  void OnEntry(bus::KvEntry&& e);                  // loop
  void FetchDone(const std::string& key, const std::string& upload, const Status& s);  // loop
  Status FetchInto(const BlobMeta& m);             // I/O
  void Pump();                                     // loop: starts fills
  void SetMissing(const std::string& key, bool missing);  // loop

  ReplicaOptions options_;
  http::Loop* loop_;
  ThreadPool* io_;
  journal::Journal* journal_;
  std::unique_ptr<bus::BusMetrics> bus_metrics_;  // outlives bus_ (destroyed after it)
  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<bus::KvWatcher> watcher_;

  // Loop-thread state.
  bool replayed_ = false;
  std::map<std::string, BlobMeta, std::less<>> known_;          // journal key -> cluster version
  std::unordered_map<std::string, std::string> names_;          // KV key -> journal key
  std::set<std::string> missing_;                               // known, not current in the journal
  std::set<std::string> own_uploads_;                           // upload ids being written here
  std::set<std::string> failing_;                               // keys whose last copy failed (logged once)
  metrics::Counter* fetch_failures_ = nullptr;                  // folio_storage_replica_fetch_failures_total
  std::map<std::string, std::vector<std::function<void(const Status&)>>> inflight_;  // fetches running
  std::atomic<double> missing_count_{0};                        // read by /metrics

  std::mutex pool_mu_;
  std::vector<std::unique_ptr<bus::Publisher>> pool_;  // GUARDED_BY(pool_mu_)
};

}  // namespace folio::storage
