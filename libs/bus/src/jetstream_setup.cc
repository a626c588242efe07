// Bus::EnsureSchema and stream info: the JetStream assets folio needs, with
// the replica count the service was given.
#include <string>

#include "bus_internal.h"
#include "folio/bus/blob_store.h"
#include "folio/bus/note_schema.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/related_schema.h"
#include "folio/core/log.h"

namespace folio::bus {

namespace {

constexpr int64_t kNanosPerMs = 1'000'000;
constexpr int64_t kDuplicateWindowNs = 2 * 60 * 1000 * kNanosPerMs;  // notes and related

// The size and age limits folio gives a stream it creates (issue 24); a
// stream created without them gets them on the next EnsureSchema, while
// limits an operator set (`nats stream edit`) are left as they are.
struct Limits {
  int64_t max_bytes = -1;  // -1: none
  int64_t max_age_ns = 0;  // 0: none
  jsDiscardPolicy discard = js_DiscardOld;
};

Limits LimitsOf(std::string_view stream) {
  Limits l;
  if (stream == kNotesStream) {
    l.max_bytes = kNotesMaxBytes;
    l.discard = js_DiscardNew;  // search replicas rebuild from the whole stream: refuse, never drop
  } else if (stream == kRelatedStream) {
    l.max_bytes = kRelatedMaxBytes;
    l.max_age_ns = kRelatedMaxAgeSeconds * 1000 * kNanosPerMs;
  }
  return l;
}

// True if *c was changed to carry folio's limits where it has none.
// `stored` is what the stream holds now: JetStream enforces a lowered size
// limit by deleting the oldest messages whatever the discard policy, so a
// stream already past half the limit keeps none (and a warning says so)
// rather than lose messages search still needs.
bool ApplyMissingLimits(jsStreamConfig* c, const Limits& want, uint64_t stored = 0) {
  bool changed = false;
  if (want.max_bytes > 0 && c->MaxBytes <= 0 && stored > static_cast<uint64_t>(want.max_bytes / 2)) {
    log::Warn("stream holds more than half of folio's size limit; left without one (set it: nats stream edit)",
              {{"stream", c->Name != nullptr ? c->Name : ""}, {"bytes", std::to_string(stored)},
               {"limit", std::to_string(want.max_bytes)}});
  } else if (want.max_bytes > 0 && c->MaxBytes <= 0) {
    c->MaxBytes = want.max_bytes;
    c->Discard = want.discard;
    changed = true;
  }
  if (want.max_age_ns > 0 && c->MaxAge == 0) {
    c->MaxAge = want.max_age_ns;
    changed = true;
  }
  return changed;
}

int ReplicasOf(const jsStreamConfig* c) { return c->Replicas < 1 ? 1 : static_cast<int>(c->Replicas); }

// A failed create or update: the JetStream error code decides the message.
// Too few servers for the replicas is kUnavailable (servers may still be
// joining) and says so in words an operator can act on.
Status SetupError(natsStatus s, jsErrCode jerr, const std::string& what, int replicas) {
  if (jerr == JSInsufficientResourcesErr || jerr == JSClusterNoPeersErr || jerr == JSStreamReplicasNotSupportedErr) {
    Status detail = NatsError(s, what);
    return Status::Unavailable(what + " with " + std::to_string(replicas) +
                               " replicas: insufficient resources, the NATS cluster cannot place them (" +
                               detail.message() +
                               "); --nats-replicas must not exceed the JetStream servers up in the cluster"
                               " (a standalone server takes 1)");
  }
  return NatsError(s, what);
}

// Stream info, or nullptr (Ok) if the stream does not exist.
Status StreamInfo(jsCtx* js, const std::string& name, jsStreamInfo** si, int64_t timeout_ms = 0) {
  jsOptions jo;
  jsOptions_Init(&jo);
  if (timeout_ms > 0) jo.Wait = timeout_ms;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  *si = nullptr;
  natsStatus s = js_GetStreamInfo(si, js, name.c_str(), &jo, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) {
    jsStreamInfo_Destroy(*si);
    *si = nullptr;
    return Status::Ok();
  }
  if (s != NATS_OK) return NatsError(s, "stream info '" + name + "'");
  return Status::Ok();
}

// An existing stream with fewer replicas than asked is scaled up (NATS
// copies its data to the new peers); one with more keeps them: a service
// started with the default of 1 must not silently lower a cluster's
// redundancy. REQUIRES: si describes an existing stream.
// Limits missing from an existing stream are added in the same update.
Status ReconcileReplicas(jsCtx* js, jsStreamInfo* si, int replicas) {
  std::string name = si->Config->Name;
  int have = ReplicasOf(si->Config);
  bool limits = ApplyMissingLimits(si->Config, LimitsOf(name), si->State.Bytes);
  if (have == replicas && !limits) return Status::Ok();
  if (have > replicas) {
    log::Warn("stream has more replicas than --nats-replicas asks; leaving it as it is",
              {{"stream", name}, {"replicas", std::to_string(have)}, {"asked", std::to_string(replicas)}});
    if (!limits) return Status::Ok();
  } else {
    si->Config->Replicas = replicas;
  }
  jsStreamInfo* updated = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_UpdateStream(&updated, js, si->Config, nullptr, &jerr);
  jsStreamInfo_Destroy(updated);
  if (s != NATS_OK) return SetupError(s, jerr, "update stream '" + name + "'", replicas);
  if (limits) log::Info("stream given folio's size and age limits", {{"stream", name}});
  if (have < replicas) {
    log::Info("stream scaled up", {{"stream", name}, {"from", std::to_string(have)}, {"to", std::to_string(replicas)}});
  }
  return Status::Ok();
}

// Runs `create` unless stream `name` exists; then (also when a concurrent
// creator won the race) reconciles its replicas. With !may_create (a user
// that may only read, issue 24) a missing stream is kUnavailable and an
// existing one is left as it is.
template <typename Create>
Status EnsureStream(jsCtx* js, const std::string& name, int replicas, bool may_create, Create create) {
  jsStreamInfo* si = nullptr;
  if (Status st = StreamInfo(js, name, &si); !st.ok()) return st;
  if (!may_create) {
    jsStreamInfo_Destroy(si);
    if (si == nullptr) return Status::Unavailable("stream '" + name + "' does not exist yet (folio-ingest or folio-search creates it)");
    return Status::Ok();
  }
  if (si == nullptr) {
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = create(&jerr);
    if (s == NATS_OK) return Status::Ok();
    Status failed = SetupError(s, jerr, "create stream '" + name + "'", replicas);
    if (Status st = StreamInfo(js, name, &si); !st.ok() || si == nullptr) return failed;
  }
  Status st = ReconcileReplicas(js, si, replicas);
  jsStreamInfo_Destroy(si);
  return st;
}

// Stream `name` on "<prefix>>": file storage, limits retention, 2-minute
// duplicate window.
Status EnsurePlainStream(jsCtx* js, std::string_view name, std::string_view subject_prefix, int replicas,
                         bool may_create = true) {
  std::string stream(name), subject = std::string(subject_prefix) + ">";
  return EnsureStream(js, stream, replicas, may_create, [&](jsErrCode* jerr) {
    const char* subjects[] = {subject.c_str()};
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = stream.c_str();
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    sc.Retention = js_LimitsPolicy;
    sc.Duplicates = kDuplicateWindowNs;
    sc.Replicas = replicas;
    ApplyMissingLimits(&sc, LimitsOf(stream));
    jsStreamInfo* si = nullptr;
    natsStatus s = js_AddStream(&si, js, &sc, nullptr, jerr);
    jsStreamInfo_Destroy(si);
    return s;
  });
}

// KV bucket `bucket` (history 1, file storage) with `replicas`, bound in
// impl's cache so a failure shows here and not at first use.
Status EnsureBucket(Bus::Impl* impl, const std::string& bucket, int replicas) {
  Status st = EnsureStream(impl->js, "KV_" + bucket, replicas, impl->options.create_schema, [&](jsErrCode* jerr) {
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = bucket.c_str();
    kc.History = 1;
    kc.StorageType = js_FileStorage;
    kc.Replicas = replicas;
    kvStore* kv = nullptr;
    natsStatus s = js_CreateKeyValue(&kv, impl->js, &kc);
    if (s == NATS_OK) {
      std::lock_guard<std::mutex> lock(impl->mu);
      if (!impl->kv_stores.emplace(bucket, kv).second) kvStore_Destroy(kv);
    }
    // NATS.c's KV create does not return the JetStream error code; the
    // text ("insufficient resources") is in nats_GetLastError.
    natsStatus last = NATS_OK;
    const char* text = s == NATS_OK ? nullptr : nats_GetLastError(&last);
    std::string_view t = text != nullptr ? text : "";
    if (t.find("insufficient resources") != t.npos) *jerr = JSInsufficientResourcesErr;
    if (t.find("no suitable peers") != t.npos) *jerr = JSClusterNoPeersErr;
    if (t.find("non-clustered mode") != t.npos) *jerr = JSStreamReplicasNotSupportedErr;
    return s;
  });
  if (!st.ok()) return st;
  if (Result<kvStore*> kv = impl->Kv(bucket); !kv.ok()) return kv.status();
  return Status::Ok();
}

}  // namespace

Status Bus::EnsureSchema() {
  const int replicas = impl_->options.replicas;
  if (Status st = EnsureBucket(impl_.get(), std::string(kPagesBucket), replicas); !st.ok()) return st;
  const bool create = impl_->options.create_schema;
  if (Status st = EnsurePlainStream(impl_->js, kNotesStream, kNotesSubjectPrefix, replicas, create); !st.ok()) {
    return st;
  }
  return EnsurePlainStream(impl_->js, kRelatedStream, kRelatedSubjectPrefix, replicas, create);
}

Status EnsureBlobStore(Bus* bus) {
  Bus::Impl* impl = bus->impl();
  const int replicas = impl->options.replicas;
  if (Status st = EnsurePlainStream(impl->js, kBlobStream, kBlobSubjectPrefix, replicas); !st.ok()) return st;
  return EnsureBucket(impl, std::string(kBlobMetaBucket), replicas);
}

Result<Bus::StreamState> Bus::GetStreamState(std::string_view stream, int64_t timeout_ms) {
  std::string name(stream);
  jsStreamInfo* si = nullptr;
  if (Status st = StreamInfo(impl_->js, name, &si, timeout_ms); !st.ok()) return st;
  if (si == nullptr) return Status::NotFound("stream '" + name + "' does not exist");
  StreamState out;
  out.messages = si->State.Msgs;
  out.last_seq = si->State.LastSeq;
  out.replicas = ReplicasOf(si->Config);
  out.bytes = si->State.Bytes;
  out.max_bytes = si->Config->MaxBytes;
  out.max_age_seconds = si->Config->MaxAge / (1000 * kNanosPerMs);
  out.discard_new = si->Config->Discard == js_DiscardNew;
  if (si->Cluster != nullptr && si->Cluster->Leader != nullptr) out.leader = si->Cluster->Leader;
  jsStreamInfo_Destroy(si);
  return out;
}

Result<uint64_t> Bus::StreamMessageCount(std::string_view stream) {
  Result<StreamState> st = GetStreamState(stream);
  if (!st.ok()) return st.status();
  return st->messages;
}

}  // namespace folio::bus
