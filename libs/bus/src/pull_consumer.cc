#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <string_view>

#include "bus_internal.h"
#include "folio/core/log.h"

namespace folio::bus {

namespace {

constexpr int64_t kNanosPerMs = 1'000'000;

// Identifies the PullConsumer that fetched a message: NATS.c acks through
// the message's subscription, so a message may only be acked by the
// consumer object that is still alive and owns that subscription.
std::atomic<uint64_t> next_consumer_id{1};

// NatsError, but "cannot reach NATS" is kUnavailable whatever the cause
// (a timeout included), as the header promises.
Status Unreachable(natsStatus s, const std::string& what) {
  Status st = NatsError(s, what);
  if (st.code() == Code::kDeadlineExceeded) return Status::Unavailable(st.message());
  return st;
}

std::string Describe(const ConsumerOptions& o) {
  return "consumer '" + o.durable + "' of stream '" + o.stream + "'";
}

}  // namespace

struct StreamMessage::Handle {
  Handle(natsMsg* m, uint64_t id) : msg(m), consumer_id(id) {}
  ~Handle() { natsMsg_Destroy(msg); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  natsMsg* const msg;
  const uint64_t consumer_id;
  std::mutex mu;  // NATS.c's "already acked" flag on the message is not atomic
};

struct PullConsumer::Impl {
  ~Impl() {
    // Destroy only: since NATS.c 3.4.0 that keeps the durable consumer on the
    // server (Unsubscribe would not delete it either: we bound, not created).
    natsSubscription_Destroy(sub);
  }
  ConsumerOptions options;
  std::string what;  // Describe(options), for messages
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  natsSubscription* sub = nullptr;
  uint64_t id = next_consumer_id.fetch_add(1);
};

namespace {

bool SameFilter(const char* have, const std::string& want) {
  return std::string_view(have == nullptr ? "" : have) == want;
}

// An existing consumer must be a pull consumer with explicit acks on the
// same subjects; ack wait and max ack pending follow the options.
Status Reconcile(jsCtx* js, const ConsumerOptions& o, const jsConsumerInfo& ci) {
  const jsConsumerConfig* c = ci.Config;
  std::string what = Describe(o);
  if (c == nullptr) return Status::Unavailable(what + ": no configuration in consumer info");
  if (c->DeliverSubject != nullptr && *c->DeliverSubject != '\0') {
    return Status(Code::kConflict, what + " exists as a push consumer");
  }
  if (c->AckPolicy != js_AckExplicit) return Status(Code::kConflict, what + " exists without explicit acks");
  if (!SameFilter(c->FilterSubject, o.filter_subject)) {
    return Status(Code::kConflict, what + " exists with filter subject '" +
                                       std::string(c->FilterSubject ? c->FilterSubject : "") + "'");
  }
  int64_t ack_wait_ns = o.ack_wait_ms * kNanosPerMs;
  if (c->AckWait == ack_wait_ns && c->MaxAckPending == o.max_ack_pending) return Status::Ok();
  jsConsumerConfig cc = *c;  // shallow: the strings stay owned by ci
  cc.AckWait = ack_wait_ns;
  cc.MaxAckPending = o.max_ack_pending;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_UpdateConsumer(nullptr, js, o.stream.c_str(), &cc, nullptr, &jerr);
  if (s != NATS_OK) {
    log::Warn("consumer config not updated; using it as it is",
              {{"stream", o.stream}, {"consumer", o.durable}, {"error", natsStatus_GetText(s)}});
  }
  return Status::Ok();
}

// Creates the durable consumer unless it exists. Created explicitly, not by
// js_PullSubscribe, so that no NATS.c call ever deletes it.
Status EnsureConsumer(jsCtx* js, const ConsumerOptions& o) {
  std::string what = Describe(o);
  for (int attempt = 0; attempt < 2; ++attempt) {
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = js_GetConsumerInfo(&ci, js, o.stream.c_str(), o.durable.c_str(), nullptr, &jerr);
    if (s == NATS_OK) {
      Status st = Reconcile(js, o, *ci);
      jsConsumerInfo_Destroy(ci);
      return st;
    }
    if (jerr == JSStreamNotFoundErr) return Status::NotFound("stream '" + o.stream + "' does not exist");
    if (s != NATS_NOT_FOUND) return Unreachable(s, "look up " + what);

    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = o.durable.c_str();
    cc.DeliverPolicy = js_DeliverAll;
    cc.AckPolicy = js_AckExplicit;
    cc.AckWait = o.ack_wait_ms * kNanosPerMs;
    cc.MaxAckPending = o.max_ack_pending;
    cc.FilterSubject = o.filter_subject.empty() ? nullptr : o.filter_subject.c_str();
    s = js_AddConsumer(&ci, js, o.stream.c_str(), &cc, nullptr, &jerr);
    jsConsumerInfo_Destroy(ci);
    if (s == NATS_OK) return Status::Ok();
    if (jerr == JSStreamNotFoundErr) return Status::NotFound("stream '" + o.stream + "' does not exist");
    // Another process created it first: look it up again.
    if (jerr != JSConsumerNameExistErr && jerr != JSConsumerExistingActiveErr) {
      return Unreachable(s, "create " + what);
    }
  }
  return Status::Unavailable("create " + what + ": created and deleted concurrently");
}

Status CheckOptions(const ConsumerOptions& o) {
  if (!IsValidBucketName(o.stream)) return Status::Invalid("invalid stream name '" + o.stream + "'");
  if (!IsValidBucketName(o.durable)) return Status::Invalid("invalid consumer name '" + o.durable + "'");
  if (!o.filter_subject.empty() && !IsValidSubject(o.filter_subject, true)) {
    return Status::Invalid("invalid filter subject '" + o.filter_subject + "'");
  }
  if (o.ack_wait_ms <= 0) return Status::Invalid(Describe(o) + ": ack_wait_ms must be positive");
  if (o.max_ack_pending <= 0) return Status::Invalid(Describe(o) + ": max_ack_pending must be positive");
  return Status::Ok();
}

StreamMessage ToStreamMessage(natsMsg* msg, uint64_t consumer_id) {
  StreamMessage m;
  m.subject = natsMsg_GetSubject(msg);
  if (natsMsg_GetDataLength(msg) > 0) {
    m.data.assign(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  }
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
    m.stream_seq = meta->Sequence.Stream;
    m.delivered = meta->NumDelivered;
    jsMsgMetaData_Destroy(meta);
  }
  m.handle = std::make_shared<StreamMessage::Handle>(msg, consumer_id);
  return m;
}

}  // namespace

PullConsumer::PullConsumer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PullConsumer::~PullConsumer() = default;

Result<std::unique_ptr<PullConsumer>> PullConsumer::Start(Bus* bus, const ConsumerOptions& options) {
  if (Status st = CheckOptions(options); !st.ok()) return st;
  jsCtx* js = bus->impl()->js;
  if (options.restart) {
    jsErrCode derr = static_cast<jsErrCode>(0);
    natsStatus ds = js_DeleteConsumer(js, options.stream.c_str(), options.durable.c_str(), nullptr, &derr);
    if (ds != NATS_OK && ds != NATS_NOT_FOUND && derr != JSConsumerNotFoundErr && derr != JSStreamNotFoundErr) {
      return Unreachable(ds, "restart of " + Describe(options));
    }
  }
  if (Status st = EnsureConsumer(js, options); !st.ok()) return st;
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->what = Describe(options);
  impl->nc = bus->impl()->nc;
  impl->js = js;
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = options.stream.c_str();
  so.Consumer = options.durable.c_str();  // bind to it, never create
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_PullSubscribe(&impl->sub, js, nullptr, options.durable.c_str(), nullptr, &so, &jerr);
  if (s != NATS_OK) {
    if (jerr == JSStreamNotFoundErr) return Status::NotFound("stream '" + options.stream + "' does not exist");
    return Unreachable(s, "bind to " + impl->what);
  }
  return std::unique_ptr<PullConsumer>(new PullConsumer(std::move(impl)));
}

Result<std::vector<StreamMessage>> PullConsumer::Fetch(int max, int64_t timeout_ms) {
  if (max <= 0) return Status::Invalid(impl_->what + ": fetch of " + std::to_string(max) + " messages");
  // NATS.c would queue the pull request until it reconnects; fail now instead.
  if (natsConnection_Status(impl_->nc) != NATS_CONN_STATUS_CONNECTED) {
    return Status::Unavailable(impl_->what + ": not connected to NATS");
  }
  natsMsgList list = {nullptr, 0};
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = natsSubscription_Fetch(&list, impl_->sub, max, std::max<int64_t>(timeout_ms, 1), &jerr);
  std::vector<StreamMessage> out;
  // NATS_TIMEOUT: nothing arrived in time; NATS_NOT_FOUND: the server said
  // "no messages" (404).
  if (s == NATS_TIMEOUT || s == NATS_NOT_FOUND) return out;
  if (s != NATS_OK) return Unreachable(s, "fetch from " + impl_->what);
  out.reserve(static_cast<size_t>(list.Count));
  for (int i = 0; i < list.Count; ++i) {
    out.push_back(ToStreamMessage(list.Msgs[i], impl_->id));
    list.Msgs[i] = nullptr;  // now owned by the Handle
  }
  natsMsgList_Destroy(&list);
  return out;
}

namespace {

// Runs `ack` on the message's natsMsg, if this consumer fetched it.
template <typename AckFn>
Status AckWith(const StreamMessage& m, uint64_t consumer_id, const std::string& what, const char* verb,
               AckFn ack) {
  StreamMessage::Handle* h = m.handle.get();
  if (h == nullptr || h->consumer_id != consumer_id) {
    return Status::Invalid(std::string(verb) + ": message " + std::to_string(m.stream_seq) +
                           " was not fetched by this " + what);
  }
  std::lock_guard<std::mutex> lock(h->mu);
  natsStatus s = ack(h->msg);
  if (s != NATS_OK) {
    return Unreachable(s, std::string(verb) + " message " + std::to_string(m.stream_seq) + " of " + what);
  }
  return Status::Ok();
}

}  // namespace

Status PullConsumer::Ack(const StreamMessage& m) {
  return AckWith(m, impl_->id, impl_->what, "ack", [](natsMsg* msg) { return natsMsg_Ack(msg, nullptr); });
}

Status PullConsumer::Nak(const StreamMessage& m, int64_t delay_ms) {
  if (delay_ms < 0) return Status::Invalid("nak: negative delay");
  return AckWith(m, impl_->id, impl_->what, "nak", [delay_ms](natsMsg* msg) {
    return delay_ms == 0 ? natsMsg_Nak(msg, nullptr) : natsMsg_NakWithDelay(msg, delay_ms, nullptr);
  });
}

Result<uint64_t> PullConsumer::Pending() {
  auto b = GetBacklog();
  if (!b.ok()) return b.status();
  return b->pending;
}

Result<PullConsumer::Backlog> PullConsumer::GetBacklog() {
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  // Not natsSubscription_GetConsumerInfo: NATS.c 3.4.1 knows the consumer's
  // name only for consumers it created, not for bound ones.
  natsStatus s = js_GetConsumerInfo(&ci, impl_->js, impl_->options.stream.c_str(),
                                    impl_->options.durable.c_str(), nullptr, &jerr);
  if (s == NATS_NOT_FOUND) return Status::NotFound(impl_->what + " does not exist");
  if (s != NATS_OK) return Unreachable(s, "info of " + impl_->what);
  Backlog b;
  b.pending = ci->NumPending;
  b.ack_pending = ci->NumAckPending > 0 ? static_cast<uint64_t>(ci->NumAckPending) : 0;
  jsConsumerInfo_Destroy(ci);
  return b;
}

}  // namespace folio::bus
