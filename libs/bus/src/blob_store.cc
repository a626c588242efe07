#include "folio/bus/blob_store.h"

#include <chrono>
#include <mutex>
#include <set>
#include <utility>

#include "bus_internal.h"

namespace folio::bus {

struct Publisher::Impl {
  jsCtx* js = nullptr;
  natsConnection* nc = nullptr;
  int64_t publish_timeout_ms = 10'000;
  uint64_t failures = 0;     // GUARDED_BY(PublisherMutex())
  std::string first_error;   // GUARDED_BY(PublisherMutex())
};

namespace {

// As in bus.cc: NATS.c may call the ack-error handler after its Publisher
// is gone, so the closure is only a key into this registry.
std::mutex& PublisherMutex() {
  static std::mutex mu;
  return mu;
}
std::set<Publisher::Impl*>& LivePublishers() {  // GUARDED_BY(PublisherMutex())
  static std::set<Publisher::Impl*> live;
  return live;
}

void OnAckError(jsCtx*, jsPubAckErr* pae, void* closure) {
  std::lock_guard<std::mutex> lock(PublisherMutex());
  auto it = LivePublishers().find(static_cast<Publisher::Impl*>(closure));
  if (it == LivePublishers().end()) return;
  Publisher::Impl* impl = *it;
  ++impl->failures;
  if (impl->first_error.empty()) {
    impl->first_error = natsStatus_GetText(pae->Err);
    if (pae->ErrText != nullptr && *pae->ErrText != '\0') impl->first_error += std::string(": ") + pae->ErrText;
  }
}

Status PublishMsg(Publisher::Impl* impl, const std::string& subject, std::string_view data, bool kv_delete) {
  int64_t max_payload = natsConnection_GetMaxPayload(impl->nc);
  if (max_payload > 0 && static_cast<int64_t>(data.size()) + 64 > max_payload) {
    return Status::TooLarge("publish to '" + subject + "': " + std::to_string(data.size()) +
                            " bytes exceed the NATS server's max payload");
  }
  natsMsg* msg = nullptr;
  natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, data.data(), static_cast<int>(data.size()));
  if (s == NATS_OK && kv_delete) s = natsMsgHeader_Set(msg, "KV-Operation", "DEL");
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = impl->publish_timeout_ms;  // a lost publish fails in Wait instead of pending forever
  if (s == NATS_OK) s = js_PublishMsgAsync(impl->js, &msg, &po);
  natsMsg_Destroy(msg);  // no-op if NATS.c took ownership
  if (s != NATS_OK) return NatsError(s, "publish to '" + subject + "'");
  return Status::Ok();
}

std::string KvSubjectOf(std::string_view bucket, std::string_view key) {
  std::string subject = "$KV.";
  subject.append(bucket).push_back('.');
  subject.append(key);
  return subject;
}

}  // namespace

Publisher::Publisher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Publisher::~Publisher() {
  {
    std::lock_guard<std::mutex> lock(PublisherMutex());
    LivePublishers().erase(impl_.get());
  }
  if (impl_->js != nullptr) jsCtx_Destroy(impl_->js);
}

Result<std::unique_ptr<Publisher>> Publisher::Create(Bus* bus) {
  auto impl = std::make_unique<Impl>();
  impl->nc = bus->impl()->nc;
  impl->publish_timeout_ms = bus->impl()->options.publish_timeout_ms;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = bus->impl()->options.max_pending_publishes;
  jo.PublishAsync.ErrHandler = OnAckError;
  jo.PublishAsync.ErrHandlerClosure = impl.get();
  jo.PublishAsync.StallWait = impl->publish_timeout_ms;
  {
    std::lock_guard<std::mutex> lock(PublisherMutex());
    LivePublishers().insert(impl.get());
  }
  std::unique_ptr<Publisher> p(new Publisher(std::move(impl)));
  natsStatus s = natsConnection_JetStream(&p->impl_->js, p->impl_->nc, &jo);
  if (s != NATS_OK) return NatsError(s, "JetStream context");
  return p;
}

Status Publisher::Publish(std::string_view subject, std::string_view data) {
  std::string subj(subject);
  if (!IsValidSubject(subj, false)) return Status::Invalid("invalid NATS subject '" + subj + "'");
  return PublishMsg(impl_.get(), subj, data, false);
}

Status Publisher::KvPut(std::string_view bucket, std::string_view key, std::string_view value) {
  if (!IsValidBucketName(bucket) || !IsValidKvKey(key)) return Status::Invalid("invalid KV bucket or key");
  return PublishMsg(impl_.get(), KvSubjectOf(bucket, key), value, false);
}

Status Publisher::KvDelete(std::string_view bucket, std::string_view key) {
  if (!IsValidBucketName(bucket) || !IsValidKvKey(key)) return Status::Invalid("invalid KV bucket or key");
  return PublishMsg(impl_.get(), KvSubjectOf(bucket, key), {}, true);
}

Status Publisher::Wait(int64_t timeout_ms) {
  return WaitForPublishAcks(impl_->js, timeout_ms, "JetStream publishes", [this](uint64_t* failed, std::string* first) {
    std::lock_guard<std::mutex> lock(PublisherMutex());
    *failed = std::exchange(impl_->failures, 0);
    first->swap(impl_->first_error);
  });
}

Status ReadSubject(Bus* bus, std::string_view stream, std::string_view subject, uint64_t count,
                   int64_t timeout_ms, const std::function<Status(std::string_view)>& on_message) {
  if (count == 0) return Status::Ok();
  std::string stream_name(stream), subj(subject);
  if (!IsValidSubject(subj, false)) return Status::Invalid("invalid NATS subject '" + subj + "'");
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = timeout_ms;
  jsCtx* js = nullptr;
  natsStatus s = natsConnection_JetStream(&js, bus->impl()->nc, &jo);
  if (s != NATS_OK) return NatsError(s, "JetStream context");
  // An ordered consumer filtered on the subject: it reads from the stream
  // leader (so a message acknowledged to the writer is there), and goes on
  // delivering messages that arrive after it was made.
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream_name.c_str();
  so.Ordered = true;
  so.Config.DeliverPolicy = js_DeliverAll;
  natsSubscription* sub = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  s = js_SubscribeSync(&sub, js, subj.c_str(), nullptr, &so, &jerr);
  if (s == NATS_OK) s = natsSubscription_SetPendingLimits(sub, -1, -1);
  Status result = s == NATS_OK ? Status::Ok() : NatsError(s, "read '" + subj + "'");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (uint64_t got = 0; result.ok() && got < count;) {
    int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      result = Status(Code::kDeadlineExceeded, "read '" + subj + "': " + std::to_string(got) + " of " +
                                                   std::to_string(count) + " messages within " +
                                                   std::to_string(timeout_ms) + " ms");
      break;
    }
    natsMsg* msg = nullptr;
    s = natsSubscription_NextMsg(&msg, sub, left);
    if (s == NATS_TIMEOUT) continue;
    if (s != NATS_OK) {
      result = NatsError(s, "read '" + subj + "'");
      break;
    }
    int len = natsMsg_GetDataLength(msg);
    result = on_message(std::string_view(natsMsg_GetData(msg), len > 0 ? static_cast<size_t>(len) : 0));
    natsMsg_Destroy(msg);
    ++got;
  }
  if (sub != nullptr) {
    (void)natsSubscription_Unsubscribe(sub);  // same thread: deletes the consumer now
    natsSubscription_Destroy(sub);
  }
  jsCtx_Destroy(js);
  return result;
}

Status PurgeSubject(Bus* bus, std::string_view stream, std::string_view subject) {
  std::string stream_name(stream), subj(subject);
  if (!IsValidSubject(subj, true)) return Status::Invalid("invalid NATS subject '" + subj + "'");
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Stream.Purge.Subject = subj.c_str();
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_PurgeStream(bus->impl()->js, stream_name.c_str(), &jo, &jerr);
  if (s != NATS_OK) return NatsError(s, "purge '" + subj + "' of stream '" + stream_name + "'");
  return Status::Ok();
}

}  // namespace folio::bus
