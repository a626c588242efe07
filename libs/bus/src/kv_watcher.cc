#include <chrono>

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
  KvEntry ToEntry(kvEntry* e);

  std::string bucket;
  kvWatcher* w = nullptr;
  OnEntry on_entry;
  OnReplayed on_replayed;
  std::atomic<bool> stop{false};
  std::thread thread;
};

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
    if (on_entry) on_entry(std::move(entry));
  }
}

KvWatcher::KvWatcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KvWatcher::~KvWatcher() {
  impl_->stop.store(true, std::memory_order_release);
  kvWatcher_Stop(impl_->w);
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<KvWatcher>> KvWatcher::Start(Bus* bus, std::string_view bucket,
                                                    OnEntry on_entry, OnReplayed on_replayed) {
  Result<kvStore*> kv = bus->impl()->Kv(bucket);
  if (!kv.ok()) return kv.status();
  auto impl = std::make_unique<Impl>();
  impl->bucket = std::string(bucket);
  impl->on_entry = std::move(on_entry);
  impl->on_replayed = std::move(on_replayed);
  natsStatus s = kvStore_WatchAll(&impl->w, *kv, nullptr);
  if (s != NATS_OK) return NatsError(s, "watch KV bucket '" + impl->bucket + "'");
  Impl* p = impl.get();
  impl->thread = std::thread([p] { p->Run(); });
  return std::unique_ptr<KvWatcher>(new KvWatcher(std::move(impl)));
}

}  // namespace folio::bus
