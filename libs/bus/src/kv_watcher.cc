#include <chrono>
#include <condition_variable>
#include <mutex>

#include "bus_internal.h"
#include "folio/core/log.h"

namespace folio::bus {

namespace {
// kvWatcher_Next blocks at most this long so the thread notices Stop.
constexpr int64_t kNextTimeoutMs = 250;
}  // namespace

struct KvWatcher::Impl {
  ~Impl() {
    if (w != nullptr) kvWatcher_Destroy(w);
  }
  void Run();
  void PollLag();
  void Applied(uint64_t revision);
  void SetLag();
  KvEntry ToEntry(kvEntry* e);

  Bus* bus = nullptr;
  std::string bucket;
  kvWatcher* w = nullptr;
  OnEntry on_entry;
  OnReplayed on_replayed;
  KvWatcherMetrics metrics;
  std::atomic<bool> stop{false};
  std::thread thread;

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
  // Entries arrive in stream order (after a consumer reset NATS.c resumes
  // after the last one delivered); a bucket made anew after NATS lost its
  // data starts again at 1, so no max() here.
  applied.store(revision, std::memory_order_relaxed);
  if (metrics.applied_revision != nullptr) metrics.applied_revision->Set(static_cast<double>(revision));
  SetLag();
}

// One stream-info request per poll_ms. A failed one (the cluster electing
// a leader, NATS down) keeps the last known sequence: the lag then shows
// what was missed until it is known again.
void KvWatcher::Impl::PollLag() {
  const std::string stream = "KV_" + bucket;
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

KvEntry KvWatcher::Impl::ToEntry(kvEntry* e) {
  KvEntry out;
  out.key = kvEntry_Key(e);
  out.revision = kvEntry_Revision(e);
  kvOperation op = kvEntry_Operation(e);
  out.deleted = op == kvOp_Delete || op == kvOp_Purge;
  if (!out.deleted && kvEntry_ValueLen(e) > 0) {
    out.value.assign(static_cast<const char*>(kvEntry_Value(e)), static_cast<size_t>(kvEntry_ValueLen(e)));
  }
  return out;
}

void KvWatcher::Impl::Run() {
  bool replayed = false;
  bool failing = false;  // log a failure streak once, not every retry
  while (!stop.load(std::memory_order_acquire)) {
    kvEntry* e = nullptr;
    natsStatus s = kvWatcher_Next(&e, w, kNextTimeoutMs);
    if (s == NATS_TIMEOUT) continue;
    if (s == NATS_ILLEGAL_STATE) break;  // kvWatcher_Stop was called
    if (s != NATS_OK) {
      if (!failing) log::Warn("kv watcher error", {{"bucket", bucket}, {"error", natsStatus_GetText(s)}});
      failing = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    failing = false;
    // NATS.c (3.4.1) marks the end of the initial values with one NULL
    // entry, also for an empty bucket.
    if (e == nullptr) {
      if (!replayed && on_replayed) on_replayed();
      replayed = true;
      continue;
    }
    KvEntry entry = ToEntry(e);
    kvEntry_Destroy(e);
    uint64_t revision = entry.revision;
    if (on_entry) on_entry(std::move(entry));
    Applied(revision);
  }
}

KvWatcher::KvWatcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KvWatcher::~KvWatcher() {
  {
    std::lock_guard<std::mutex> lock(impl_->poll_mu);
    impl_->stop.store(true, std::memory_order_release);
  }
  impl_->poll_cv.notify_all();
  kvWatcher_Stop(impl_->w);
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->poller.joinable()) impl_->poller.join();
}

Result<std::unique_ptr<KvWatcher>> KvWatcher::Start(Bus* bus, std::string_view bucket,
                                                    OnEntry on_entry, OnReplayed on_replayed,
                                                    KvWatcherMetrics metrics) {
  Result<kvStore*> kv = bus->impl()->Kv(bucket);
  if (!kv.ok()) return kv.status();
  auto impl = std::make_unique<Impl>();
  impl->bus = bus;
  impl->bucket = std::string(bucket);
  impl->metrics = metrics;
  if (impl->metrics.poll_ms < 1) impl->metrics.poll_ms = 1;
  impl->on_entry = std::move(on_entry);
  impl->on_replayed = std::move(on_replayed);
  natsStatus s = kvStore_WatchAll(&impl->w, *kv, nullptr);
  if (s != NATS_OK) return NatsError(s, "watch KV bucket '" + impl->bucket + "'");
  Impl* p = impl.get();
  impl->thread = std::thread([p] { p->Run(); });
  if (p->metrics.lag != nullptr) p->poller = std::thread([p] { p->PollLag(); });
  return std::unique_ptr<KvWatcher>(new KvWatcher(std::move(impl)));
}

}  // namespace folio::bus
