// KvWatcher: an ordered push consumer on the bucket's stream, read by one
// thread, with a watchdog that replaces the consumer when it stalls.
//
// Why not kvStore_WatchAll: NATS.c 3.4.1 fixes its ordered consumer's
// heartbeat at 5 s (a lost consumer is noticed after 10-20 s) and cannot
// resume a watch from a revision. When the server holding the consumer dies,
// its re-creation is retried only on the next missed heartbeat, and each try
// can time out while the cluster moves the stream: readers then waited tens
// of seconds for pages the bucket already held. Subscribing ourselves gives
// a 1 s heartbeat and a restart right after the last applied revision.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "bus_internal.h"
#include "folio/core/log.h"

namespace folio::bus {

namespace {
// natsSubscription_NextMsg blocks at most this long so the thread notices
// Stop and checks for a stall. Stop is noticed only this way: the other
// wake-up, natsSubscription_Unsubscribe from another thread, deletes the
// consumer, and NATS.c 3.4.1 reads the consumer's name for that after
// releasing the subscription's lock, while an ordered-consumer reset on its
// own thread may free it (a use-after-free ASan caught after a server
// restart). The server removes an ephemeral consumer itself once its
// subscription is gone.
constexpr int64_t kNextTimeoutMs = 100;
// After a failed subscribe, try again this soon.
constexpr int64_t kRetryMs = 500;

using Clock = std::chrono::steady_clock;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}
}  // namespace

struct KvWatcher::Impl {
  ~Impl() {
    if (sub != nullptr) natsSubscription_Destroy(sub);
    if (js != nullptr) jsCtx_Destroy(js);
  }
  void Run();
  Status Subscribe();
  void DropSubscription();
  bool Stalled();
  void Deliver(natsMsg* msg);
  void PollLag();
  void Applied(uint64_t revision);
  void SetLag();

  Bus* bus = nullptr;
  std::string bucket;
  std::string stream;  // "KV_<bucket>"
  std::string prefix;  // "$KV.<bucket>.", stripped from subjects to get keys
  jsCtx* js = nullptr;  // own context: its Wait bounds consumer create/delete
  OnEntry on_entry;
  OnReplayed on_replayed;
  KvWatcherMetrics metrics;
  KvWatchOptions options;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> resubscribes{0};
  std::thread thread;

  // The current subscription: used and replaced only by the watcher thread
  // (and destroyed with Impl, after that thread has ended).
  natsSubscription* sub = nullptr;

  // Watcher-thread state.
  bool replayed = false;
  bool announce_replayed = false;  // replayed, on_replayed not yet called
  int64_t initial_left = -1;  // entries of the initial values still to come; -1 = unknown
  Clock::time_point last_progress = Clock::now();

  // Lag bookkeeping: written by the watcher thread (applied) and the
  // poller (stream_last, stream_empty); plain atomics, no lock.
  std::atomic<uint64_t> applied{0};
  std::atomic<uint64_t> stream_last{0};
  std::atomic<bool> stream_empty{true};
  std::thread poller;
  std::mutex poll_mu;
  std::condition_variable poll_cv;  // wakes the poller to stop
};

void KvWatcher::Impl::SetLag() {
  if (metrics.lag == nullptr) return;
  uint64_t last = stream_last.load(std::memory_order_relaxed);
  uint64_t done = applied.load(std::memory_order_relaxed);
  bool empty = stream_empty.load(std::memory_order_relaxed);
  metrics.lag->Set(empty || done >= last ? 0.0 : static_cast<double>(last - done));
}

void KvWatcher::Impl::Applied(uint64_t revision) {
  // Entries arrive in stream order; a bucket made anew after NATS lost its
  // data starts again at 1, so no max() here.
  applied.store(revision, std::memory_order_relaxed);
  if (metrics.applied_revision != nullptr) metrics.applied_revision->Set(static_cast<double>(revision));
  SetLag();
}

// One stream-info request per poll_ms. A failed one (the cluster electing
// a leader, NATS down) keeps the last known sequence: the lag then shows
// what was missed until it is known again.
void KvWatcher::Impl::PollLag() {
  while (!stop.load(std::memory_order_acquire)) {
    Result<Bus::StreamState> st = bus->GetStreamState(stream, metrics.poll_ms);
    if (st.ok()) {
      stream_last.store(st->last_seq, std::memory_order_relaxed);
      stream_empty.store(st->messages == 0, std::memory_order_relaxed);
      SetLag();
    }
    std::unique_lock<std::mutex> lock(poll_mu);
    poll_cv.wait_for(lock, std::chrono::milliseconds(metrics.poll_ms),
                     [this] { return stop.load(std::memory_order_acquire); });
  }
}

// A new ordered consumer: the current value of every key (first time, no
// start_after), or everything after the last applied revision. Knows at
// once that the initial values are done when the stream holds nothing new.
Status KvWatcher::Impl::Subscribe() {
  uint64_t after = applied.load(std::memory_order_relaxed);
  if (after == 0) after = options.start_after;
  Result<Bus::StreamState> st = bus->GetStreamState(stream, options.request_timeout_ms);
  if (!st.ok()) return st.status();

  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Ordered = true;
  so.Config.Heartbeat = options.heartbeat_ms * 1'000'000;
  if (after == 0) {
    so.Config.DeliverPolicy = js_DeliverLastPerSubject;
  } else {
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = after + 1;
  }
  const std::string subject = prefix + ">";
  natsSubscription* s = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus ns = js_SubscribeSync(&s, js, subject.c_str(), nullptr, &so, &jerr);
  if (ns == NATS_OK) ns = natsSubscription_SetPendingLimits(s, -1, -1);
  if (ns != NATS_OK) {
    if (s != nullptr) natsSubscription_Destroy(s);
    return NatsError(ns, "watch KV bucket '" + bucket + "'");
  }
  sub = s;
  initial_left = -1;
  last_progress = Clock::now();
  // Announced by Run, so callbacks stay on the watcher thread.
  if (!replayed && (st->messages == 0 || st->last_seq <= after)) replayed = announce_replayed = true;
  return Status::Ok();
}

void KvWatcher::Impl::DropSubscription() {
  natsSubscription* old = sub;
  sub = nullptr;
  // Leaves the ephemeral consumer to the server, which deletes it once
  // nothing listens on its deliver subject (see kNextTimeoutMs).
  if (old != nullptr) natsSubscription_Destroy(old);
}

// Nothing has arrived for stall_ms: is the stream ahead of us? (A quiet
// bucket is not a stall.) Costs one stream-info request per stall_ms while
// idle, and only while connected.
bool KvWatcher::Impl::Stalled() {
  if (MsSince(last_progress) < options.stall_ms) return false;
  last_progress = Clock::now();
  if (!bus->connected()) return false;  // NATS.c resubscribes after a reconnect
  Result<Bus::StreamState> st = bus->GetStreamState(stream, options.request_timeout_ms);
  if (!st.ok()) return false;
  return st->messages > 0 && st->last_seq > applied.load(std::memory_order_relaxed);
}

void KvWatcher::Impl::Deliver(natsMsg* msg) {
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg) != NATS_OK) {
    log::Warn("kv watcher: message without metadata", {{"bucket", bucket}, {"subject", natsMsg_GetSubject(msg)}});
    return;
  }
  KvEntry entry;
  const char* subj = natsMsg_GetSubject(msg);
  if (std::strncmp(subj, prefix.data(), prefix.size()) == 0) entry.key = subj + prefix.size();
  entry.revision = meta->Sequence.Stream;
  const char* op = nullptr;
  if (natsMsgHeader_Get(msg, "KV-Operation", &op) == NATS_OK && op != nullptr) {
    entry.deleted = std::strcmp(op, "DEL") == 0 || std::strcmp(op, "PURGE") == 0;
  }
  if (!entry.deleted && natsMsg_GetDataLength(msg) > 0) {
    entry.value.assign(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  }
  uint64_t pending = meta->NumPending;
  jsMsgMetaData_Destroy(meta);

  uint64_t revision = entry.revision;
  if (on_entry) on_entry(std::move(entry));
  Applied(revision);
  if (replayed) return;
  // The first message says how many initial values follow it; later
  // changes do not extend the replay.
  initial_left = initial_left < 0 ? static_cast<int64_t>(pending) : initial_left - 1;
  if (pending == 0 || initial_left <= 0) {
    replayed = true;
    if (on_replayed) on_replayed();
  }
}

void KvWatcher::Impl::Run() {
  bool failing = false;  // log a failure streak once, not every retry
  while (!stop.load(std::memory_order_acquire)) {
    if (announce_replayed) {
      announce_replayed = false;
      if (on_replayed) on_replayed();
    }
    if (sub == nullptr) {
      Status st = Subscribe();
      if (!st.ok()) {
        if (!failing) log::Warn("kv watcher cannot subscribe; retrying", {{"bucket", bucket}, {"error", st.message()}});
        failing = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(kRetryMs));
        continue;
      }
      if (failing) log::Info("kv watcher subscribed again", {{"bucket", bucket}});
      failing = false;
    }
    natsMsg* msg = nullptr;
    natsStatus s = natsSubscription_NextMsg(&msg, sub, kNextTimeoutMs);
    if (stop.load(std::memory_order_acquire)) {
      natsMsg_Destroy(msg);
      break;
    }
    if (s == NATS_OK) {
      last_progress = Clock::now();
      Deliver(msg);
      natsMsg_Destroy(msg);
      continue;
    }
    if (s != NATS_TIMEOUT) {
      // The subscription is gone (closed connection, slow consumer):
      // a new one resumes after the last applied revision.
      log::Warn("kv watcher subscription failed; resubscribing", {{"bucket", bucket}, {"error", natsStatus_GetText(s)}});
      DropSubscription();
      continue;
    }
    if (Stalled()) {
      log::Warn("kv watcher stalled with revisions pending; resubscribing",
                {{"bucket", bucket}, {"applied_revision", std::to_string(applied.load())}});
      resubscribes.fetch_add(1, std::memory_order_relaxed);
      DropSubscription();
    }
  }
}

KvWatcher::KvWatcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KvWatcher::~KvWatcher() {
  {
    std::lock_guard<std::mutex> lock(impl_->poll_mu);
    impl_->stop.store(true, std::memory_order_release);
  }
  impl_->poll_cv.notify_all();
  // The watcher thread sees stop within kNextTimeoutMs; the subscription is
  // destroyed with Impl.
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->poller.joinable()) impl_->poller.join();
}

uint64_t KvWatcher::resubscribes() const { return impl_->resubscribes.load(std::memory_order_relaxed); }

Result<std::unique_ptr<KvWatcher>> KvWatcher::Start(Bus* bus, std::string_view bucket,
                                                    OnEntry on_entry, OnReplayed on_replayed,
                                                    KvWatcherMetrics metrics, KvWatchOptions options) {
  Result<kvStore*> kv = bus->impl()->Kv(bucket);  // kNotFound for a missing bucket
  if (!kv.ok()) return kv.status();
  auto impl = std::make_unique<Impl>();
  impl->bus = bus;
  impl->bucket = std::string(bucket);
  impl->stream = "KV_" + impl->bucket;
  impl->prefix = "$KV." + impl->bucket + ".";
  impl->metrics = metrics;
  if (impl->metrics.poll_ms < 1) impl->metrics.poll_ms = 1;
  impl->options = options;
  if (impl->options.heartbeat_ms < 100) impl->options.heartbeat_ms = 100;
  if (impl->options.request_timeout_ms < 1) impl->options.request_timeout_ms = 1;
  impl->on_entry = std::move(on_entry);
  impl->on_replayed = std::move(on_replayed);
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = impl->options.request_timeout_ms;
  natsStatus s = natsConnection_JetStream(&impl->js, bus->impl()->nc, &jo);
  if (s != NATS_OK) return NatsError(s, "JetStream context");
  // The first consumer is made here, so a caller learns at once that NATS
  // cannot serve the watch; later ones by the watcher thread.
  if (Status st = impl->Subscribe(); !st.ok()) return st;
  Impl* p = impl.get();
  impl->thread = std::thread([p] { p->Run(); });
  if (p->metrics.lag != nullptr) p->poller = std::thread([p] { p->PollLag(); });
  return std::unique_ptr<KvWatcher>(new KvWatcher(std::move(impl)));
}

}  // namespace folio::bus
