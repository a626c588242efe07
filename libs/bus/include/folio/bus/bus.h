// The NATS.c adapter: connection with reconnect (to one server or across
// the servers of a cluster), JetStream setup with a replica count, async
// publishing with acks, and KV watching. The only place nats.h is included.
//
// Ownership: Bus owns the natsConnection and jsCtx; KvWatcher owns its
// watcher thread (and its lag poller). Destroy watchers before their Bus.
// BusMetrics and KvWatcherMetrics are owned by the service (they outlive
// every Bus and KvWatcher that reports to them).
// Threading: Bus methods are thread-safe (NATS.c connections are); publish
// calls from several threads interleave. KvWatcher callbacks run on the
// watcher's own thread: hand entries to your loop (http::Loop::Post).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "folio/core/status.h"
#include "folio/metrics/metrics.h"

namespace folio::bus {

// The bus's health on a service's /metrics: folio_bus_connected (gauge, 1
// while connected to a NATS server) and folio_bus_reconnects_total
// (counter: reconnections after a lost connection, to the same server or
// another of the cluster). Updated from NATS.c's connection callbacks
// (atomics only). Create once per process, before the first Bus.
struct BusMetrics {
  explicit BusMetrics(metrics::Registry* registry);
  metrics::Gauge& connected;
  metrics::Counter& reconnects;
};

struct BusOptions {
  // One server URL or a comma-separated list of a cluster's servers
  // ("nats://a:4222,nats://b:4222", core's SplitNatsUrls); the client
  // connects to any of them (in random order, spreading clients), learns
  // the cluster's other servers from the one it reaches, and on losing its
  // server reconnects to another.
  std::string url = "nats://127.0.0.1:4222";
  std::string name = "folio";               // client name shown by the server
  int replicas = 1;                         // of what EnsureSchema creates; 1..5
  std::string user = "";                    // NATS user ("" = none); with password; its
                                            // replies come to _INBOX.<user>.* (one token)
  std::string password = "";                // of user ("" = none)
  std::string ca_file = "";                 // PEM CA of the servers: TLS, verified ("" = plain)
  // false: EnsureSchema only checks that the assets exist (kUnavailable if
  // not yet) and never creates or scales one: for a user that may not
  // (folio-edge, deploy/nats/permissions.conf). Default true.
  bool create_schema = true;
  BusMetrics* metrics = nullptr;            // optional; not owned
  int64_t connect_timeout_ms = 2'000;
  int64_t reconnect_wait_ms = 250;          // between reconnect attempts; retries forever
  int64_t publish_timeout_ms = 10'000;      // wait for JetStream acks
  int max_pending_publishes = 4'000;        // async publishes in flight before Publish* blocks
};

class Bus {
 public:
  // Connects (with send-ASAP, so replies and publishes are not delayed by
  // NATS.c's flusher) and gets a JetStream context. kUnavailable if no
  // server of the list can be reached within connect_timeout_ms (each);
  // kInvalidArgument for a malformed url list or replicas outside 1..5.
  static Result<std::unique_ptr<Bus>> Connect(const BusOptions& options);
  ~Bus();

  // Creates (or accepts existing) KV bucket "pages" (history 1), stream
  // "notes" (subjects "notes.>", file storage, 2-minute duplicate window,
  // at most kNotesMaxBytes, discard new) and stream "related" (subjects
  // "related.>", file storage, limits retention, 2-minute duplicate window:
  // search replicas' copies of a list collapse; at most kRelatedMaxBytes and
  // kRelatedMaxAgeSeconds), each with options.replicas replicas. An
  // existing stream without a size or age limit gets folio's (an update),
  // except a size limit it already holds more than half of (JetStream would
  // delete old messages to fit; a warning says so); limits already set are
  // kept. One that exists with fewer
  // replicas is scaled up to options.replicas (a stream update: NATS copies
  // the data to the new replicas); one with more is left as it is, with a
  // warning (lowering redundancy is an operator's decision). kUnavailable
  // naming the asset and "insufficient resources" when the cluster has fewer
  // JetStream servers up than replicas (a standalone server: more than 1);
  // callers retry, as servers may still be joining.
  Status EnsureSchema();

  // Blocking request/reply (core NATS, not JetStream). Returns the reply's
  // data. kUnavailable if nobody answers (no responders) or not connected;
  // kDeadlineExceeded after timeout_ms. Thread-safe; may be called from any
  // thread except a NATS callback thread.
  Result<std::string> Request(std::string_view subject, std::string_view data, int64_t timeout_ms);

  // Async publishes: return once queued; failures surface in WaitForAcks.
  // msg_id (optional) sets Nats-Msg-Id so a republish is deduplicated.
  Status PublishAsync(std::string_view subject, std::string_view data, std::string_view msg_id = {});
  Status KvPutAsync(std::string_view bucket, std::string_view key, std::string_view value);
  Status KvDeleteAsync(std::string_view bucket, std::string_view key);
  // A synchronous KV put: returns the revision (the stream sequence) the
  // server stored it at, once acknowledged. Fenced like the async puts;
  // kTooLarge over the server's max payload; kUnavailable on no ack.
  Result<uint64_t> KvPut(std::string_view bucket, std::string_view key, std::string_view value);
  // Removes from `stream` the messages on subjects matching `subject` (may
  // hold wildcards) with a sequence below `before_seq` (0: every one). A
  // purge leaves no delete markers: watchers see nothing of it. Fenced like
  // a publish. kNotFound if the stream does not exist; kUnavailable if the
  // server does not answer.
  Status PurgeStream(std::string_view stream, std::string_view subject, uint64_t before_seq);
  // Fencing (issue 23): while `may_write` returns false, PublishAsync,
  // KvPutAsync, KvDeleteAsync, KvPut and PurgeStream send nothing and fail with kUnavailable
  // ("fenced"), so a process that lost its lease (folio-ingest's KvLease)
  // cannot overwrite its successor's pages. null (the default) = never
  // fenced. REQUIRES: called before any publish; `may_write` is thread-safe
  // and cheap (it runs on every publish).
  void SetWriteFence(std::function<bool()> may_write);
  // Waits until every async publish so far is acknowledged. kUnavailable
  // (naming how many failed) if any was not, or on timeout.
  Status WaitForAcks(int64_t timeout_ms);

  // Synchronous KV read, for tests and tools. kNotFound if absent or deleted.
  Result<std::string> KvGet(std::string_view bucket, std::string_view key);
  // Messages currently stored in a stream, for tests and tools. kNotFound if
  // the stream does not exist.
  Result<uint64_t> StreamMessageCount(std::string_view stream);
  struct StreamState {
    uint64_t messages = 0;
    uint64_t last_seq = 0;
    int replicas = 1;     // configured
    std::string leader;   // server name of the stream's leader; "" standalone
    uint64_t bytes = 0;           // stored
    int64_t max_bytes = -1;       // configured limit; -1 none
    int64_t max_age_seconds = 0;  // configured limit; 0 none
    bool discard_new = false;     // a full stream refuses new messages (else drops old ones)
  };
  // One JetStream API request (stream info). kNotFound if the stream does
  // not exist; kUnavailable or kDeadlineExceeded (after timeout_ms) if the
  // cluster does not answer.
  Result<StreamState> GetStreamState(std::string_view stream, int64_t timeout_ms = 5'000);

  // JetStream usage, for folio-ingest's folio_jetstream_* metrics: every
  // stream of the account (js_Streams) and the account's storage against
  // its limit (js_GetAccountInfo). Each is one or a few JetStream API
  // requests; kUnavailable or kDeadlineExceeded (after timeout_ms) if the
  // servers do not answer. Blocks: call off event loops.
  struct StreamUsage {
    std::string name;
    uint64_t messages = 0, bytes = 0;
    int64_t max_bytes = -1;       // -1: none
    int64_t max_age_seconds = 0;  // 0: none
    int64_t consumers = 0;
  };
  Result<std::vector<StreamUsage>> ListStreamUsage(int64_t timeout_ms = 5'000);
  struct AccountUsage {
    uint64_t storage_bytes = 0, memory_bytes = 0;  // used
    int64_t max_storage_bytes = -1;                // the account's limit; -1 none
    int64_t streams = 0, consumers = 0;
  };
  Result<AccountUsage> GetAccountUsage(int64_t timeout_ms = 5'000);

  bool connected() const;
  // The largest message the connected server takes (its max_payload; 1 MiB
  // by default), or 0 when not connected.
  int64_t max_payload() const;
  // The URL of the server this client is connected to; "" if none.
  std::string connected_url() const;

  struct Impl;
  Impl* impl() { return impl_.get(); }

 private:
  explicit Bus(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Answers requests on a subject. The handler runs on the subscription's own
// NATS thread (one request at a time per Responder, in arrival order) and
// returns the reply data. Several processes may serve one subject with the
// same queue group: NATS gives each request to one of them.
class Responder {
 public:
  using Handler = std::function<std::string(std::string_view subject, std::string_view data)>;
  // queue_group may be empty (every responder gets every request). On
  // return the server knows the subscription (one flush round trip).
  static Result<std::unique_ptr<Responder>> Start(Bus* bus, std::string_view subject,
                                                  std::string_view queue_group, Handler handler);
  ~Responder();  // unsubscribes and waits for a running handler to return

  struct Impl;

 private:
  explicit Responder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One message from a durable consumer. Ack once it is fully processed
// (committed); a message not acked within ack_wait is delivered again.
struct StreamMessage {
  std::string subject;
  std::string data;
  uint64_t stream_seq = 0;
  uint64_t delivered = 1;  // delivery count, 1 on the first delivery
  struct Handle;           // the NATS message, kept for Ack/Nak
  std::shared_ptr<Handle> handle;
};

struct ConsumerOptions {
  std::string stream;            // e.g. kNotesStream
  std::string durable;           // durable consumer name, e.g. "search"
  std::string filter_subject;    // "" = every subject of the stream
  int64_t ack_wait_ms = 60'000;  // redelivery after this long without an ack
  int max_ack_pending = 10'000;  // unacked messages the server hands out at most
  // Deletes the durable consumer first, so that the stream is delivered
  // again from its start (a consumer whose local state was rebuilt empty).
  bool restart = false;
};

// A durable pull consumer of a stream: survives restarts of both the client
// and the server (file storage), so a consumer catches up on what it missed
// and, acking after it commits, processes each message once.
// Thread-safety: Fetch from one thread at a time; Ack/Nak from any thread.
class PullConsumer {
 public:
  // Creates the durable consumer if missing (deliver all, explicit ack) or
  // binds to the existing one. kNotFound if the stream does not exist;
  // kUnavailable if NATS cannot be reached.
  static Result<std::unique_ptr<PullConsumer>> Start(Bus* bus, const ConsumerOptions& options);
  ~PullConsumer();

  // Up to max messages, waiting at most timeout_ms for the first. An empty
  // vector (OK) on timeout; kUnavailable while disconnected.
  Result<std::vector<StreamMessage>> Fetch(int max, int64_t timeout_ms);
  Status Ack(const StreamMessage& m);
  // Asks for redelivery after delay_ms (0 = now).
  Status Nak(const StreamMessage& m, int64_t delay_ms = 0);
  // Messages of the stream not yet delivered to this consumer (the backlog),
  // as the server reports it. For metrics and tests.
  Result<uint64_t> Pending();
  // Pending() and, in the same consumer-info request, the messages delivered
  // but not yet acked (in a fetched batch, nak'ed for later, or left by a
  // process that died: redelivered after ack_wait). Both 0: every message so
  // far was acked. kNotFound / kUnavailable as Pending().
  struct Backlog {
    uint64_t pending = 0;      // not yet delivered
    uint64_t ack_pending = 0;  // delivered, not acked
  };
  Result<Backlog> GetBacklog();

  struct Impl;

 private:
  explicit PullConsumer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct KvEntry {
  std::string key;
  std::string value;     // empty when deleted
  bool deleted = false;  // a delete or purge marker
  uint64_t revision = 0;
};

// How far a KvWatcher is behind its bucket, for /metrics. applied_revision:
// the revision (stream sequence) of the last entry whose on_entry returned.
// lag: the bucket stream's last sequence minus applied_revision (0 when the
// bucket is empty), i.e. messages the bucket has that on_entry has not seen.
// The stream's last sequence comes from a stream-info request every
// poll_ms on a thread of its own (never the watcher's, never a serving
// loop), so a watcher that is stuck (disconnected, or its consumer lost)
// shows a growing lag; each applied entry lowers it at once.
struct KvWatcherMetrics {
  metrics::Gauge* lag = nullptr;               // required for the poller
  metrics::Gauge* applied_revision = nullptr;  // optional
  int64_t poll_ms = 2'000;                     // stream-info requests every this long
};

// How a KvWatcher keeps going when its consumer is lost. The watch is an
// ordered push consumer (an ephemeral consumer on one server of the bucket
// stream's group). When that server dies, NATS.c notices only after two
// missed heartbeats and its own re-creation can keep failing while the
// cluster moves the stream; so the watcher also checks, whenever nothing
// has arrived for stall_ms, whether the stream holds revisions it has not
// applied, and if so replaces the consumer with one that starts right after
// the last applied revision (no replay, nothing lost, nothing twice).
struct KvWatchOptions {
  int64_t heartbeat_ms = 1'000;  // server idle heartbeat; NATS.c resets after 2 missed
  int64_t stall_ms = 3'000;      // idle this long with revisions pending -> new consumer
  int64_t request_timeout_ms = 2'000;  // consumer create and stream-info requests
  // Start after this revision instead of replaying the bucket's current
  // values (0 = replay). on_replayed is called once caught up either way.
  uint64_t start_after = 0;
};

// Watches every key of a bucket: first the current value of each key, then
// live changes. Survives NATS reconnects and the loss of the server that
// held its consumer (see KvWatchOptions).
class KvWatcher {
 public:
  using OnEntry = std::function<void(KvEntry&&)>;
  using OnReplayed = std::function<void()>;  // once, after the initial values

  // Starts the watcher thread (and, with lag metrics, the lag poller).
  // Callbacks run on the watcher thread, in order.
  static Result<std::unique_ptr<KvWatcher>> Start(Bus* bus, std::string_view bucket,
                                                  OnEntry on_entry, OnReplayed on_replayed,
                                                  KvWatcherMetrics metrics = {},
                                                  KvWatchOptions options = {});
  // Consumers this watcher replaced after a stall (for tests and logs).
  uint64_t resubscribes() const;
  ~KvWatcher();  // stops and joins the thread (within ~100 ms); the server
                 // then removes the ephemeral consumer itself

  struct Impl;

 private:
  explicit KvWatcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace folio::bus
