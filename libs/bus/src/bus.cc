#include "folio/bus/bus.h"

#include <set>
#include <utility>
#include <vector>

#include "bus_internal.h"
#include "folio/core/log.h"
#include "folio/core/service.h"

namespace folio::bus {

namespace {

// HPUB framing: "NATS/1.0\r\n" ... "\r\n", plus "Name: value\r\n" per header.
constexpr size_t kHeaderFraming = 12;

Code CodeFor(natsStatus s) {
  switch (s) {
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBJECT: return Code::kInvalidArgument;
    case NATS_NOT_FOUND: return Code::kNotFound;
    case NATS_MAX_PAYLOAD: return Code::kTooLarge;
    case NATS_TIMEOUT: return Code::kDeadlineExceeded;
    case NATS_NO_MEMORY: return Code::kInternal;
    default: return Code::kUnavailable;  // the server or the network
  }
}

// NATS.c may run a callback after its Bus is gone: a late ack, a publish
// timer, a queued connection event. So callbacks get the Impl* only as a
// key, and touch it only while it is registered here; ~Impl unregisters
// before it destroys the NATS.c handles.
std::mutex& CallbackMutex() {
  static std::mutex mu;
  return mu;
}
std::set<Bus::Impl*>& LiveImpls() {  // GUARDED_BY(CallbackMutex())
  static std::set<Bus::Impl*> live;
  return live;
}
Bus::Impl* FindLive(void* closure) {  // REQUIRES: CallbackMutex() held
  auto it = LiveImpls().find(static_cast<Bus::Impl*>(closure));
  return it == LiveImpls().end() ? nullptr : *it;
}

// NATS.c reports every failed reconnect attempt; log the transitions only.
void OnDisconnected(natsConnection*, void* closure) {
  std::lock_guard<std::mutex> lock(CallbackMutex());
  Bus::Impl* impl = FindLive(closure);
  if (impl == nullptr) return;
  if (impl->options.metrics != nullptr) impl->options.metrics->connected.Set(0);
  if (impl->disconnected) return;
  impl->disconnected = true;
  log::Warn("nats disconnected; reconnecting", {{"url", impl->options.url}});
}
void OnReconnected(natsConnection* nc, void* closure) {
  std::lock_guard<std::mutex> lock(CallbackMutex());
  Bus::Impl* impl = FindLive(closure);
  if (impl == nullptr) return;
  impl->disconnected = false;
  if (BusMetrics* m = impl->options.metrics; m != nullptr) {
    m->connected.Set(1);
    m->reconnects.Increment();
  }
  char server[256] = "";
  (void)natsConnection_GetConnectedUrl(nc, server, sizeof server);
  log::Info("nats reconnected", {{"server", server}});
}
void OnAsyncError(natsConnection*, natsSubscription*, natsStatus err, void*) {
  log::Warn("nats async error", {{"error", natsStatus_GetText(err)}});
}
void OnPublishAckError(jsCtx*, jsPubAckErr* pae, void* closure) {
  std::lock_guard<std::mutex> lock(CallbackMutex());
  Bus::Impl* impl = FindLive(closure);
  if (impl == nullptr) return;
  ++impl->ack_failures;
  if (impl->first_ack_error.empty()) {
    impl->first_ack_error = natsStatus_GetText(pae->Err);
    if (pae->ErrText != nullptr && *pae->ErrText != '\0') {
      impl->first_ack_error += ": ";
      impl->first_ack_error += pae->ErrText;
    }
  }
}

// `servers` from SplitNatsUrls. NATS.c tries them in random order (its
// default: clients spread over the cluster) and adds the servers the
// cluster announces; on a lost connection it reconnects to any of them.
natsStatus SetOptions(natsOptions* o, const BusOptions& b, const std::vector<std::string>& servers,
                      void* closure) {
  std::vector<const char*> urls;
  for (const std::string& u : servers) urls.push_back(u.c_str());
  natsStatus s = natsOptions_SetServers(o, urls.data(), static_cast<int>(urls.size()));
  if (s == NATS_OK) s = natsOptions_SetName(o, b.name.c_str());
  // Without send-ASAP NATS.c's flusher delays each publish by up to ~1 ms.
  if (s == NATS_OK) s = natsOptions_SetSendAsap(o, true);
  if (s == NATS_OK) s = natsOptions_SetTimeout(o, b.connect_timeout_ms);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(o, -1);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(o, b.reconnect_wait_ms);
  if (s == NATS_OK) s = natsOptions_SetRetryOnFailedConnect(o, false, nullptr, nullptr);
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(o, OnDisconnected, closure);
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(o, OnReconnected, closure);
  if (s == NATS_OK) s = natsOptions_SetErrorHandler(o, OnAsyncError, nullptr);
  if (s == NATS_OK && !b.user.empty()) s = natsOptions_SetUserInfo(o, b.user.c_str(), b.password.c_str());
  // Replies (requests, JetStream API calls, consumers' deliveries) come to
  // _INBOX.<user>.*: the permissions let each user subscribe there alone, so
  // no service reads the answers meant for another (deploy/NATS.md).
  const std::string inbox_prefix = "_INBOX." + b.user;
  if (s == NATS_OK && !b.user.empty()) s = natsOptions_SetCustomInboxPrefix(o, inbox_prefix.c_str());
  if (s == NATS_OK && !b.ca_file.empty()) s = natsOptions_SetSecure(o, true);
  if (s == NATS_OK && !b.ca_file.empty()) s = natsOptions_LoadCATrustedCertificates(o, b.ca_file.c_str());
  return s;
}

}  // namespace

Status NatsError(natsStatus s, std::string_view what) {
  std::string msg(what);
  msg += ": ";
  msg += natsStatus_GetText(s);
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  if (detail != nullptr && *detail != '\0' && last == s) {
    msg += " (";
    msg += detail;
    msg += ")";
  }
  return Status(CodeFor(s), std::move(msg));
}

bool IsValidKvKey(std::string_view key) {
  if (key.empty() || key.front() == '.' || key.back() == '.') return false;
  char prev = 0;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '/' || c == '_' || c == '=' || c == '.';
    if (!ok || (c == '.' && prev == '.')) return false;
    prev = c;
  }
  return true;
}

bool IsValidBucketName(std::string_view bucket) {
  if (bucket.empty()) return false;
  for (char c : bucket) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool IsValidSubject(std::string_view subject, bool wildcards) {
  if (subject.empty()) return false;
  size_t start = 0;
  while (true) {
    size_t dot = subject.find('.', start);
    std::string_view token = subject.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (token.empty()) return false;
    for (unsigned char c : token) {
      if (c <= ' ' || c == 0x7f) return false;
    }
    bool last = dot == std::string_view::npos;
    if (token == "*" || token == ">") {
      if (!wildcards || (token == ">" && !last)) return false;
    }
    if (last) return true;
    start = dot + 1;
  }
}

// ---- Bus::Impl

Bus::Impl::Impl() {
  std::lock_guard<std::mutex> lock(CallbackMutex());
  LiveImpls().insert(this);
}

Bus::Impl::~Impl() {
  {
    std::lock_guard<std::mutex> lock(CallbackMutex());
    LiveImpls().erase(this);
  }
  for (auto& [name, kv] : kv_stores) kvStore_Destroy(kv);
  if (js != nullptr) jsCtx_Destroy(js);
  if (nc != nullptr) {
    natsConnection_Close(nc);
    natsConnection_Destroy(nc);
    if (options.metrics != nullptr) options.metrics->connected.Set(0);
  }
}

Result<kvStore*> Bus::Impl::Kv(std::string_view bucket) {
  if (!IsValidBucketName(bucket)) return Status::Invalid("invalid KV bucket name");
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = kv_stores.find(bucket); it != kv_stores.end()) return it->second;
  std::string name(bucket);
  kvStore* kv = nullptr;
  natsStatus s = js_KeyValue(&kv, js, name.c_str());
  if (s == NATS_NOT_FOUND) return Status::NotFound("KV bucket '" + name + "' does not exist");
  if (s != NATS_OK) return NatsError(s, "bind KV bucket '" + name + "'");
  kv_stores.emplace(std::move(name), kv);
  return kv;
}

Status Bus::Impl::Publish(std::string_view subject, std::string_view data,
                          std::string_view msg_id, bool kv_delete) {
  if (write_fence && !write_fence()) {
    return Status::Unavailable("publish to '" + std::string(subject) + "' fenced: this process may not write now");
  }
  std::string subj(subject);
  if (subj.empty() || subj.find_first_of(" \t\r\n") != std::string::npos) {
    return Status::Invalid("invalid NATS subject");
  }
  size_t headers = 0;
  if (!msg_id.empty()) headers += sizeof("Nats-Msg-Id: \r\n") - 1 + msg_id.size();
  if (kv_delete) headers += sizeof("KV-Operation: DEL\r\n") - 1;
  if (headers > 0) headers += kHeaderFraming;
  int64_t max_payload = natsConnection_GetMaxPayload(nc);
  if (max_payload > 0 && static_cast<int64_t>(data.size() + headers) > max_payload) {
    return Status::TooLarge("publish to '" + subj + "': " + std::to_string(data.size()) +
                            " bytes exceed the NATS server's max payload of " +
                            std::to_string(max_payload) + " bytes");
  }
  natsMsg* msg = nullptr;
  natsStatus s = natsMsg_Create(&msg, subj.c_str(), nullptr, data.data(), static_cast<int>(data.size()));
  if (s == NATS_OK && kv_delete) s = natsMsgHeader_Set(msg, "KV-Operation", "DEL");
  std::string id(msg_id);
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MsgId = id.empty() ? nullptr : id.c_str();
  // A per-message deadline makes a publish lost in a server restart surface
  // as a failure in WaitForAcks instead of pending forever.
  po.MaxWait = options.publish_timeout_ms;
  if (s == NATS_OK) s = js_PublishMsgAsync(js, &msg, &po);
  natsMsg_Destroy(msg);  // no-op if NATS.c took ownership
  if (s != NATS_OK) return NatsError(s, "publish to '" + subj + "'");
  return Status::Ok();
}

// ---- Bus

Bus::Bus(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Bus::~Bus() = default;

BusMetrics::BusMetrics(metrics::Registry* registry)
    : connected(registry->NewGauge("folio_bus_connected", "1 while connected to a NATS server, else 0")),
      reconnects(registry->NewCounter("folio_bus_reconnects_total",
                                      "Reconnections to NATS after a lost connection (to any server of the cluster)")) {}

Result<std::unique_ptr<Bus>> Bus::Connect(const BusOptions& options) {
  std::vector<std::string> servers;
  if (Status st = SplitNatsUrls(options.url, &servers); !st.ok()) return st;
  if (options.replicas < 1 || options.replicas > 5) {
    return Status::Invalid("NATS replicas must be in 1..5, not " + std::to_string(options.replicas));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = SetOptions(opts, options, servers, impl.get());
  if (s != NATS_OK) {
    natsOptions_Destroy(opts);
    return NatsError(s, "NATS options");
  }
  s = natsConnection_Connect(&impl->nc, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) {
    Status st = NatsError(s, "connect to " + options.url);
    return Status::Unavailable(st.message());
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = options.max_pending_publishes;
  jo.PublishAsync.ErrHandler = OnPublishAckError;
  jo.PublishAsync.ErrHandlerClosure = impl.get();
  // "Blocks" per the header: wait this long for room before failing a publish.
  jo.PublishAsync.StallWait = options.publish_timeout_ms;
  s = natsConnection_JetStream(&impl->js, impl->nc, &jo);
  if (s != NATS_OK) return NatsError(s, "JetStream context");
  if (options.metrics != nullptr) {
    // Under the callbacks' mutex, so a disconnect reported meanwhile wins.
    std::lock_guard<std::mutex> lock(CallbackMutex());
    options.metrics->connected.Set(natsConnection_Status(impl->nc) == NATS_CONN_STATUS_CONNECTED ? 1 : 0);
  }
  return std::unique_ptr<Bus>(new Bus(std::move(impl)));
}

Result<std::string> Bus::Request(std::string_view subject, std::string_view data, int64_t timeout_ms) {
  std::string subj(subject);
  if (!IsValidSubject(subj, false)) return Status::Invalid("invalid NATS subject '" + subj + "'");
  // NATS.c would buffer the request until it reconnects; fail now instead.
  if (!connected()) return Status::Unavailable("request to '" + subj + "': not connected to NATS");
  natsMsg* reply = nullptr;
  natsStatus s = natsConnection_Request(&reply, impl_->nc, subj.c_str(), data.data(),
                                        static_cast<int>(data.size()), timeout_ms > 0 ? timeout_ms : 1);
  if (s == NATS_NO_RESPONDERS) {
    return Status::Unavailable("request to '" + subj + "': no responders");
  }
  if (s == NATS_TIMEOUT) {
    return Status(Code::kDeadlineExceeded,
                  "request to '" + subj + "': no reply within " + std::to_string(timeout_ms) + " ms");
  }
  if (s != NATS_OK) return NatsError(s, "request to '" + subj + "'");
  std::string out;
  if (natsMsg_GetDataLength(reply) > 0) {
    out.assign(natsMsg_GetData(reply), static_cast<size_t>(natsMsg_GetDataLength(reply)));
  }
  natsMsg_Destroy(reply);
  return out;
}

void Bus::SetWriteFence(std::function<bool()> may_write) { impl_->write_fence = std::move(may_write); }

Status Bus::PublishAsync(std::string_view subject, std::string_view data, std::string_view msg_id) {
  return impl_->Publish(subject, data, msg_id, false);
}

static std::string KvSubject(std::string_view bucket, std::string_view key) {
  std::string subject = "$KV.";
  subject.append(bucket).push_back('.');
  subject.append(key);
  return subject;
}

Status Bus::KvPutAsync(std::string_view bucket, std::string_view key, std::string_view value) {
  if (!IsValidBucketName(bucket)) return Status::Invalid("invalid KV bucket name");
  if (!IsValidKvKey(key)) return Status::Invalid("invalid KV key '" + std::string(key) + "'");
  return impl_->Publish(KvSubject(bucket, key), value, {}, false);
}

Status Bus::KvDeleteAsync(std::string_view bucket, std::string_view key) {
  if (!IsValidBucketName(bucket)) return Status::Invalid("invalid KV bucket name");
  if (!IsValidKvKey(key)) return Status::Invalid("invalid KV key '" + std::string(key) + "'");
  return impl_->Publish(KvSubject(bucket, key), {}, {}, true);
}

Result<uint64_t> Bus::KvPut(std::string_view bucket, std::string_view key, std::string_view value) {
  if (!IsValidKvKey(key)) return Status::Invalid("invalid KV key '" + std::string(key) + "'");
  if (impl_->write_fence && !impl_->write_fence()) {
    return Status::Unavailable("put of '" + std::string(key) + "' fenced: this process may not write now");
  }
  int64_t max_payload = natsConnection_GetMaxPayload(impl_->nc);
  if (max_payload > 0 && static_cast<int64_t>(value.size()) > max_payload) {
    return Status::TooLarge("put of '" + std::string(key) + "': " + std::to_string(value.size()) +
                            " bytes exceed the NATS server's max payload");
  }
  Result<kvStore*> kv = impl_->Kv(bucket);
  if (!kv.ok()) return kv.status();
  std::string k(key);
  uint64_t rev = 0;
  natsStatus s = kvStore_Put(&rev, *kv, k.c_str(), value.data(), static_cast<int>(value.size()));
  if (s != NATS_OK) return Status::Unavailable(NatsError(s, "put '" + k + "'").message());
  return rev;
}

Status Bus::PurgeStream(std::string_view stream, std::string_view subject, uint64_t before_seq) {
  std::string name(stream), subj(subject);
  if (!IsValidSubject(subj, true)) return Status::Invalid("invalid NATS subject '" + subj + "'");
  if (impl_->write_fence && !impl_->write_fence()) {
    return Status::Unavailable("purge of '" + subj + "' fenced: this process may not write now");
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Stream.Purge.Subject = subj.c_str();
  jo.Stream.Purge.Sequence = before_seq;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_PurgeStream(impl_->js, name.c_str(), &jo, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) return Status::NotFound("stream '" + name + "' does not exist");
  if (s != NATS_OK) return Status::Unavailable(NatsError(s, "purge '" + subj + "' of stream '" + name + "'").message());
  return Status::Ok();
}

Status WaitForPublishAcks(jsCtx* js, int64_t timeout_ms, std::string_view what,
                          const std::function<void(uint64_t* failed, std::string* first_error)>& take_failures) {
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = timeout_ms > 0 ? timeout_ms : 1;
  natsStatus s = js_PublishAsyncComplete(js, &po);
  uint64_t unacked = 0;
  if (s == NATS_TIMEOUT) {
    // Forget them so the next batch starts clean; callers republish
    // (with msg ids, duplicates are dropped by the server) or fail.
    natsMsgList pending;
    if (js_PublishAsyncGetPendingList(&pending, js) == NATS_OK) {
      unacked = static_cast<uint64_t>(pending.Count);
      natsMsgList_Destroy(&pending);
    }
  }
  uint64_t failed = 0;
  std::string first_error;
  take_failures(&failed, &first_error);
  if (s != NATS_OK && s != NATS_TIMEOUT) return NatsError(s, "wait for " + std::string(what) + " acks");
  if (failed == 0 && unacked == 0 && s == NATS_OK) return Status::Ok();
  std::string msg = std::to_string(failed) + " " + std::string(what) + " failed";
  if (!first_error.empty()) msg += " (first: " + first_error + ")";
  if (s == NATS_TIMEOUT) {
    msg += ", " + std::to_string(unacked) + " not acknowledged within " + std::to_string(timeout_ms) + " ms";
  }
  return Status::Unavailable(std::move(msg));
}

Status Bus::WaitForAcks(int64_t timeout_ms) {
  return WaitForPublishAcks(impl_->js, timeout_ms, "publishes", [this](uint64_t* failed, std::string* first) {
    std::lock_guard<std::mutex> lock(CallbackMutex());
    *failed = std::exchange(impl_->ack_failures, 0);
    first->swap(impl_->first_ack_error);
  });
}

Result<std::string> Bus::KvGet(std::string_view bucket, std::string_view key) {
  if (!IsValidKvKey(key)) return Status::Invalid("invalid KV key '" + std::string(key) + "'");
  Result<kvStore*> kv = impl_->Kv(bucket);
  if (!kv.ok()) return kv.status();
  std::string k(key);
  kvEntry* e = nullptr;
  natsStatus s = kvStore_Get(&e, *kv, k.c_str());
  if (s == NATS_NOT_FOUND) return Status::NotFound("key '" + k + "' not in bucket '" + std::string(bucket) + "'");
  if (s != NATS_OK) return NatsError(s, "get '" + k + "'");
  std::string value;
  if (kvEntry_ValueLen(e) > 0) {
    value.assign(static_cast<const char*>(kvEntry_Value(e)), static_cast<size_t>(kvEntry_ValueLen(e)));
  }
  kvEntry_Destroy(e);
  return value;
}

std::string Bus::connected_url() const {
  char url[256] = "";
  if (natsConnection_GetConnectedUrl(impl_->nc, url, sizeof url) != NATS_OK) return "";
  return url;
}

int64_t Bus::max_payload() const {
  int64_t n = natsConnection_GetMaxPayload(impl_->nc);
  return n > 0 ? n : 0;
}

bool Bus::connected() const {
  return natsConnection_Status(impl_->nc) == NATS_CONN_STATUS_CONNECTED;
}

}  // namespace folio::bus
