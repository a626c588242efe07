// Bus::ListStreamUsage and Bus::GetAccountUsage: what JetStream stores, for
// the folio_jetstream_* metrics (Debian ships no NATS exporter).
#include <string>
#include <vector>

#include "bus_internal.h"

namespace folio::bus {

namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

jsOptions WaitOptions(int64_t timeout_ms) {
  jsOptions jo;
  jsOptions_Init(&jo);
  if (timeout_ms > 0) jo.Wait = timeout_ms;
  return jo;
}

}  // namespace

Result<std::vector<Bus::StreamUsage>> Bus::ListStreamUsage(int64_t timeout_ms) {
  jsOptions jo = WaitOptions(timeout_ms);
  jsStreamInfoList* list = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_Streams(&list, impl_->js, &jo, &jerr);
  std::vector<StreamUsage> out;
  if (s == NATS_NOT_FOUND) return out;  // no stream yet
  if (s != NATS_OK) return NatsError(s, "list streams");
  for (int i = 0; i < list->Count; ++i) {
    const jsStreamInfo* si = list->List[i];
    if (si == nullptr || si->Config == nullptr || si->Config->Name == nullptr) continue;
    StreamUsage u;
    u.name = si->Config->Name;
    u.messages = si->State.Msgs;
    u.bytes = si->State.Bytes;
    u.max_bytes = si->Config->MaxBytes;
    u.max_age_seconds = si->Config->MaxAge / kNanosPerSecond;
    u.consumers = si->State.Consumers;
    out.push_back(std::move(u));
  }
  jsStreamInfoList_Destroy(list);
  return out;
}

Result<Bus::AccountUsage> Bus::GetAccountUsage(int64_t timeout_ms) {
  jsOptions jo = WaitOptions(timeout_ms);
  jsAccountInfo* ai = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetAccountInfo(&ai, impl_->js, &jo, &jerr);
  if (s != NATS_OK) return NatsError(s, "JetStream account info");
  AccountUsage u;
  u.storage_bytes = ai->Store;
  u.memory_bytes = ai->Memory;
  u.max_storage_bytes = ai->Limits.MaxStore;
  u.streams = ai->Streams;
  u.consumers = ai->Consumers;
  jsAccountInfo_Destroy(ai);
  return u;
}

}  // namespace folio::bus
