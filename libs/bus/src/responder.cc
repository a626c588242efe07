#include <condition_variable>
#include <mutex>

#include "bus_internal.h"
#include "folio/core/log.h"

namespace folio::bus {

namespace {
// Requests already received when a Responder is destroyed are still
// answered for at most this long; then NATS.c closes the subscription.
constexpr int64_t kDrainTimeoutMs = 5'000;
}  // namespace

struct Responder::Impl {
  std::string subject;
  Handler handler;
  natsSubscription* sub = nullptr;

  // Set by NATS.c's completion callback, on the delivery thread, once the
  // subscription is closed and the last handler call has returned.
  std::mutex mu;
  std::condition_variable cv;
  bool complete = false;  // GUARDED_BY(mu)
};

namespace {

void OnRequest(natsConnection* nc, natsSubscription*, natsMsg* msg, void* closure) {
  auto* impl = static_cast<Responder::Impl*>(closure);
  std::string_view data;
  if (natsMsg_GetDataLength(msg) > 0) {
    data = std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  }
  std::string reply = impl->handler(natsMsg_GetSubject(msg), data);
  const char* to = natsMsg_GetReply(msg);
  if (to != nullptr && *to != '\0') {
    natsStatus s = natsConnection_Publish(nc, to, reply.data(), static_cast<int>(reply.size()));
    // Rare (a reply over max payload, a closed connection); the requester
    // then times out.
    if (s != NATS_OK) {
      log::Warn("responder: reply not sent", {{"subject", impl->subject}, {"error", natsStatus_GetText(s)}});
    }
  }
  natsMsg_Destroy(msg);
}

void OnComplete(void* closure) {
  auto* impl = static_cast<Responder::Impl*>(closure);
  // Notify under the lock: ~Responder frees impl as soon as it sees
  // `complete`, so nothing here may touch impl after the unlock.
  std::lock_guard<std::mutex> lock(impl->mu);
  impl->complete = true;
  impl->cv.notify_all();
}

}  // namespace

Responder::Responder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Responder::~Responder() {
  Impl* impl = impl_.get();
  // Drain answers what was already received; without a connection it fails
  // and a plain unsubscribe drops the queue. Either way NATS.c closes the
  // subscription and then runs OnComplete.
  if (natsSubscription_DrainTimeout(impl->sub, kDrainTimeoutMs) != NATS_OK) {
    natsSubscription_Unsubscribe(impl->sub);
  }
  {
    std::unique_lock<std::mutex> lock(impl->mu);
    impl->cv.wait(lock, [impl] { return impl->complete; });
  }
  natsSubscription_Destroy(impl->sub);
}

Result<std::unique_ptr<Responder>> Responder::Start(Bus* bus, std::string_view subject,
                                                    std::string_view queue_group, Handler handler) {
  if (!IsValidSubject(subject, true)) {
    return Status::Invalid("invalid NATS subject '" + std::string(subject) + "'");
  }
  if (!queue_group.empty() && !IsValidSubject(queue_group, false)) {
    return Status::Invalid("invalid NATS queue group '" + std::string(queue_group) + "'");
  }
  if (!handler) return Status::Invalid("responder for '" + std::string(subject) + "': no handler");
  auto impl = std::make_unique<Impl>();
  impl->subject = std::string(subject);
  impl->handler = std::move(handler);
  natsConnection* nc = bus->impl()->nc;
  std::string queue(queue_group);
  natsStatus s = queue.empty()
      ? natsConnection_Subscribe(&impl->sub, nc, impl->subject.c_str(), OnRequest, impl.get())
      : natsConnection_QueueSubscribe(&impl->sub, nc, impl->subject.c_str(), queue.c_str(), OnRequest,
                                      impl.get());
  if (s != NATS_OK) return NatsError(s, "subscribe to '" + impl->subject + "'");
  s = natsSubscription_SetOnCompleteCB(impl->sub, OnComplete, impl.get());
  if (s != NATS_OK) {
    // Only if the connection closed under us (a Bus destroyed while starting
    // a Responder). A handler may be running and nothing would tell us when
    // it ends, so the Impl is leaked rather than freed under it.
    Status st = NatsError(s, "subscribe to '" + impl->subject + "'");
    natsSubscription_Unsubscribe(impl->sub);
    natsSubscription_Destroy(impl->sub);
    static_cast<void>(impl.release());
    return st;
  }
  // A round trip to the server: the subscription is registered there when
  // Start returns, so a request sent next (from any connection) finds it.
  // Not fatal if it times out (the subscription goes through anyway).
  if (natsConnection_FlushTimeout(nc, 2000) != NATS_OK) {
    log::Warn("responder subscription not confirmed by the server yet", {{"subject", impl->subject}});
  }
  return std::unique_ptr<Responder>(new Responder(std::move(impl)));
}

}  // namespace folio::bus
