// KvLease: the lease thread's acquire / renew / release steps (kv_lease.h).
#include "folio/bus/kv_lease.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string_view>
#include <thread>

#include "bus_internal.h"
#include "folio/core/log.h"

namespace folio::bus {

namespace {

using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

// NATS.c's KV create/update report a lost compare-and-set only in the text.
bool WrongRevision() {
  natsStatus last = NATS_OK;
  const char* text = nats_GetLastError(&last);
  std::string_view t = text != nullptr ? text : "";
  return t.find("wrong last sequence") != t.npos;
}

}  // namespace

struct KvLease::Impl {
  ~Impl() {
    if (kv != nullptr) kvStore_Destroy(kv);
    if (js != nullptr) jsCtx_Destroy(js);
  }
  void Run();
  void Step();
  Status Connect();
  void Renew();
  void TryAcquire();
  void Release();
  void Became(bool now_leading, const std::string& who);
  void SetHolder(const std::string& who);

  BusOptions bus_options;
  LeaseOptions options;
  OnChange on_change;
  int64_t step_down_ms = 0;

  // Lease-thread state.
  std::unique_ptr<Bus> bus;
  jsCtx* js = nullptr;   // own context: Wait bounded by renew_ms
  kvStore* kv = nullptr;
  uint64_t revision = 0;      // ours while leading; the last seen otherwise
  uint64_t own_revision = 0;  // the last revision this process wrote (0: none, or taken over since)
  int64_t seen_since_ms = 0;  // when `revision` was first seen (follower)
  bool was_leading = false;
  bool warned = false;        // a failure streak is logged once

  std::atomic<int64_t> leading_until_ms{0};  // 0 = not leading
  mutable std::mutex mu;
  std::string holder;  // GUARDED_BY(mu)
  std::condition_variable cv;
  bool stop = false;   // GUARDED_BY(mu)
  std::thread thread;
};

void KvLease::Impl::SetHolder(const std::string& who) {
  std::lock_guard<std::mutex> lock(mu);
  holder = who;
}

void KvLease::Impl::Became(bool now_leading, const std::string& who) {
  SetHolder(who);
  if (now_leading == was_leading) return;
  was_leading = now_leading;
  log::Info(now_leading ? "lease acquired: leading" : "lease lost: not leading",
            {{"bucket", options.bucket}, {"holder", who}, {"instance", options.holder}});
  if (on_change) on_change(now_leading, who);
}

Status KvLease::Impl::Connect() {
  if (kv != nullptr) return Status::Ok();
  if (bus == nullptr) {
    auto b = Bus::Connect(bus_options);
    if (!b.ok()) return b.status();
    bus = std::move(*b);
  }
  if (js == nullptr) {
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = options.renew_ms;
    if (natsStatus s = natsConnection_JetStream(&js, bus->impl()->nc, &jo); s != NATS_OK) {
      return NatsError(s, "JetStream context");
    }
  }
  natsStatus s = js_KeyValue(&kv, js, options.bucket.c_str());
  if (s == NATS_NOT_FOUND) {
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = options.bucket.c_str();
    kc.History = 1;
    kc.StorageType = js_FileStorage;
    kc.Replicas = options.replicas;
    s = js_CreateKeyValue(&kv, js, &kc);
    if (s != NATS_OK) s = js_KeyValue(&kv, js, options.bucket.c_str());  // another process won the race
  }
  if (s != NATS_OK) {
    kv = nullptr;
    return NatsError(s, "lease bucket '" + options.bucket + "'");
  }
  return Status::Ok();
}

void KvLease::Impl::Renew() {
  const int64_t started = NowMs();
  uint64_t rev = 0;
  natsStatus s = kvStore_UpdateString(&rev, kv, options.key.c_str(), options.holder.c_str(), revision);
  if (s == NATS_OK) {
    revision = own_revision = rev;
    leading_until_ms.store(started + step_down_ms, std::memory_order_release);
    warned = false;
    return;
  }
  if (WrongRevision()) {
    leading_until_ms.store(0, std::memory_order_release);
    revision = own_revision = 0;
    seen_since_ms = 0;
    // Who took it, for the 503s and the log ("" if the read fails too).
    std::string who;
    kvEntry* e = nullptr;
    if (kvStore_Get(&e, kv, options.key.c_str()) == NATS_OK) {
      who = kvEntry_ValueString(e) != nullptr ? kvEntry_ValueString(e) : "";
      revision = kvEntry_Revision(e);
      seen_since_ms = NowMs();
      kvEntry_Destroy(e);
    }
    Became(false, who == options.holder ? "" : who);
    return;
  }
  if (!warned) log::Warn("lease renew failed", {{"bucket", options.bucket}, {"error", natsStatus_GetText(s)}});
  warned = true;
  // Past the safe window: say so now, and go on trying at the same
  // revision (if nobody took it over, the lease is still ours).
  if (NowMs() >= leading_until_ms.load(std::memory_order_acquire)) Became(false, options.holder);
}

void KvLease::Impl::TryAcquire() {
  kvEntry* e = nullptr;
  natsStatus s = kvStore_Get(&e, kv, options.key.c_str());
  const int64_t started = NowMs();
  uint64_t rev = 0;
  if (s == NATS_NOT_FOUND) {
    s = kvStore_CreateString(&rev, kv, options.key.c_str(), options.holder.c_str());
  } else if (s == NATS_OK) {
    std::string who = kvEntry_ValueString(e) != nullptr ? kvEntry_ValueString(e) : "";
    uint64_t seen = kvEntry_Revision(e);
    kvEntry_Destroy(e);
    e = nullptr;
    if (seen != revision) {
      revision = seen;
      seen_since_ms = started;
    }
    SetHolder(who);
    // A holder that renews within ttl_ms keeps it; a released one ("") or
    // one silent for ttl_ms does not. The revision this process wrote last
    // (its renews failed for a while) is still ours: a takeover would
    // have changed it, and the update below is a compare-and-set.
    // The same holder id is a previous process of this instance (ids name
    // one live process at a time, kv_lease.h): taken over at once.
    bool ours = (own_revision != 0 && seen == own_revision) || who == options.holder;
    if (!ours && !who.empty() && started - seen_since_ms < options.ttl_ms) return;
    s = kvStore_UpdateString(&rev, kv, options.key.c_str(), options.holder.c_str(), seen);
  }
  if (e != nullptr) kvEntry_Destroy(e);
  if (s != NATS_OK) {
    if (!WrongRevision() && !warned) {
      log::Warn("lease check failed", {{"bucket", options.bucket}, {"error", natsStatus_GetText(s)}});
      warned = true;
    }
    return;
  }
  warned = false;
  revision = own_revision = rev;
  leading_until_ms.store(started + step_down_ms, std::memory_order_release);
  Became(true, options.holder);
}

void KvLease::Impl::Step() {
  if (Status st = Connect(); !st.ok()) {
    if (!warned) log::Warn("lease: cannot reach NATS; retrying", {{"error", st.message()}});
    warned = true;
    if (was_leading && NowMs() >= leading_until_ms.load(std::memory_order_acquire)) Became(false, options.holder);
    return;
  }
  if (leading_until_ms.load(std::memory_order_acquire) != 0 && was_leading) {
    Renew();
  } else {
    TryAcquire();
  }
}

void KvLease::Impl::Release() {
  if (kv == nullptr || leading_until_ms.load(std::memory_order_acquire) == 0) return;
  leading_until_ms.store(0, std::memory_order_release);
  uint64_t rev = 0;
  if (kvStore_UpdateString(&rev, kv, options.key.c_str(), "", revision) == NATS_OK) {
    log::Info("lease released", {{"bucket", options.bucket}, {"instance", options.holder}});
  }
}

void KvLease::Impl::Run() {
  std::unique_lock<std::mutex> lock(mu);
  while (!stop) {
    lock.unlock();
    Step();
    lock.lock();
    cv.wait_for(lock, std::chrono::milliseconds(options.renew_ms), [this] { return stop; });
  }
  lock.unlock();
  Release();
}

KvLease::KvLease(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KvLease::~KvLease() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

bool KvLease::leading() const {
  int64_t until = impl_->leading_until_ms.load(std::memory_order_acquire);
  return until != 0 && NowMs() < until;
}

std::string KvLease::holder() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->holder;
}

const LeaseOptions& KvLease::options() const { return impl_->options; }

Result<std::unique_ptr<KvLease>> KvLease::Start(const BusOptions& bus_options, LeaseOptions options,
                                                OnChange on_change) {
  if (options.holder.empty()) return Status::Invalid("lease: empty holder id");
  if (!IsValidBucketName(options.bucket) || !IsValidKvKey(options.key)) {
    return Status::Invalid("lease: invalid bucket or key name");
  }
  if (options.replicas < 1 || options.replicas > 5) return Status::Invalid("lease: replicas must be in 1..5");
  if (options.renew_ms < 50 || options.ttl_ms < 3 * options.renew_ms) {
    return Status::Invalid("lease: the TTL must be at least 3 renew intervals, and the interval at least 50ms");
  }
  auto impl = std::make_unique<Impl>();
  impl->bus_options = bus_options;
  impl->bus_options.name = bus_options.name + "-lease";
  impl->bus_options.connect_timeout_ms = std::min<int64_t>(bus_options.connect_timeout_ms, options.renew_ms);
  impl->options = std::move(options);
  impl->step_down_ms = impl->options.ttl_ms - 2 * impl->options.renew_ms;
  impl->on_change = std::move(on_change);
  Impl* p = impl.get();
  impl->thread = std::thread([p] { p->Run(); });
  return std::unique_ptr<KvLease>(new KvLease(std::move(impl)));
}

}  // namespace folio::bus
