// Internals shared by bus.cc, kv_watcher.cc, responder.cc and
// pull_consumer.cc: the Bus's NATS.c handles, the natsStatus -> Status
// mapping and name checks. Private to libs/bus.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "folio/bus/bus.h"

namespace folio::bus {

struct Bus::Impl {
  Impl();   // registers with the callback registry in bus.cc
  ~Impl();  // destroys KV handles, the JetStream context, then the connection
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Cached handle of an existing bucket, bound on first use. kNotFound if
  // the bucket does not exist. The handle lives as long as this Impl.
  Result<kvStore*> Kv(std::string_view bucket);

  // One async JetStream publish. kv_delete adds "KV-Operation: DEL".
  Status Publish(std::string_view subject, std::string_view data, std::string_view msg_id,
                 bool kv_delete);

  BusOptions options;
  std::function<bool()> write_fence;  // SetWriteFence; set before publishing starts
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;

  std::mutex mu;
  std::map<std::string, kvStore*, std::less<>> kv_stores;  // GUARDED_BY(mu)

  // Written by NATS.c callbacks (see CallbackMutex in bus.cc).
  uint64_t ack_failures = 0;     // GUARDED_BY(CallbackMutex())
  std::string first_ack_error;   // GUARDED_BY(CallbackMutex())
  bool disconnected = false;     // GUARDED_BY(CallbackMutex())
};

// A Status for a failed NATS.c call: "<what>: <status text> (<last error>)".
// The code follows from `s` (timeouts and I/O -> kUnavailable, ...).
Status NatsError(natsStatus s, std::string_view what);

// NATS KV key alphabet: [-/_=.a-zA-Z0-9], no empty tokens.
bool IsValidKvKey(std::string_view key);
// Bucket names: [-_a-zA-Z0-9]+. Also the check for stream and consumer names.
bool IsValidBucketName(std::string_view bucket);
// NATS subjects: '.'-separated non-empty tokens without spaces or control
// characters. With `wildcards` (subscriptions), a token may be "*", and the
// last one ">"; without (publishes, requests), neither.
bool IsValidSubject(std::string_view subject, bool wildcards);

// Waits up to timeout_ms for every async publish of js to be acknowledged
// (js_PublishAsyncComplete); on a timeout the unacknowledged ones are
// forgotten (the caller republishes or fails the write). take_failures is
// called once, under the caller's lock, to read and reset the failed acks
// its ack handler counted (and the first one's error). kUnavailable "N
// <what> failed (first: ...), M not acknowledged in T ms" unless all were
// acknowledged; a NATS error naming `what` otherwise.
Status WaitForPublishAcks(jsCtx* js, int64_t timeout_ms, std::string_view what,
                          const std::function<void(uint64_t* failed, std::string* first_error)>& take_failures);

}  // namespace folio::bus
