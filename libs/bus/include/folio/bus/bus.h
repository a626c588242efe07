// The NATS.c adapter: connection with reconnect, JetStream setup, async
// publishing with acks, and KV watching. The only place nats.h is included.
//
// Ownership: Bus owns the natsConnection and jsCtx; KvWatcher owns its
// watcher thread. Destroy watchers before their Bus.
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

#include "folio/core/status.h"

namespace folio::bus {

struct BusOptions {
  std::string url = "nats://127.0.0.1:4222";
  std::string name = "folio";               // client name shown by the server
  int64_t connect_timeout_ms = 2'000;
  int64_t reconnect_wait_ms = 250;          // between reconnect attempts; retries forever
  int64_t publish_timeout_ms = 10'000;      // wait for JetStream acks
  int max_pending_publishes = 4'000;        // async publishes in flight before Publish* blocks
};

class Bus {
 public:
  // Connects (with send-ASAP, so replies and publishes are not delayed by
  // NATS.c's flusher) and gets a JetStream context. kUnavailable if the
  // server cannot be reached within connect_timeout_ms.
  static Result<std::unique_ptr<Bus>> Connect(const BusOptions& options);
  ~Bus();

  // Creates (or accepts existing) KV bucket "pages" (history 1) and stream
  // "notes" (subjects "notes.>", file storage, 2-minute duplicate window).
  Status EnsureSchema();

  // Async publishes: return once queued; failures surface in WaitForAcks.
  // msg_id (optional) sets Nats-Msg-Id so a republish is deduplicated.
  Status PublishAsync(std::string_view subject, std::string_view data, std::string_view msg_id = {});
  Status KvPutAsync(std::string_view bucket, std::string_view key, std::string_view value);
  Status KvDeleteAsync(std::string_view bucket, std::string_view key);
  // Waits until every async publish so far is acknowledged. kUnavailable
  // (naming how many failed) if any was not, or on timeout.
  Status WaitForAcks(int64_t timeout_ms);

  // Synchronous KV read, for tests and tools. kNotFound if absent or deleted.
  Result<std::string> KvGet(std::string_view bucket, std::string_view key);
  // Messages currently stored in a stream, for tests and tools. kNotFound if
  // the stream does not exist.
  Result<uint64_t> StreamMessageCount(std::string_view stream);

  bool connected() const;

  struct Impl;
  Impl* impl() { return impl_.get(); }

 private:
  explicit Bus(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct KvEntry {
  std::string key;
  std::string value;     // empty when deleted
  bool deleted = false;  // a delete or purge marker
  uint64_t revision = 0;
};

// Watches every key of a bucket: first the current value of each key, then
// live changes. Survives NATS reconnects.
class KvWatcher {
 public:
  using OnEntry = std::function<void(KvEntry&&)>;
  using OnReplayed = std::function<void()>;  // once, after the initial values

  // Starts the watcher thread. Callbacks run on that thread, in order.
  static Result<std::unique_ptr<KvWatcher>> Start(Bus* bus, std::string_view bucket,
                                                  OnEntry on_entry, OnReplayed on_replayed);
  ~KvWatcher();  // stops and joins the thread

  struct Impl;

 private:
  explicit KvWatcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace folio::bus
