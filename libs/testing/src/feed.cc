#include "folio/testing/feed.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "folio/bus/page_pack.h"
#include "folio/bus/page_schema.h"

namespace folio::testing {

Result<FeedPages> ReadFeed(bus::Bus* bus, std::string_view site, int64_t timeout_ms) {
  std::mutex mu;
  std::vector<bus::KvEntry> entries;
  std::atomic<bool> replayed{false};
  auto watcher = bus::KvWatcher::Start(
      bus, bus::kPagesBucket,
      [&](bus::KvEntry&& e) {
        std::lock_guard<std::mutex> l(mu);
        entries.push_back(std::move(e));
      },
      [&] { replayed = true; });
  if (!watcher.ok()) return watcher.status();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!replayed) {
    if (std::chrono::steady_clock::now() > deadline) return Status(Code::kDeadlineExceeded, "feed replay");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  watcher->reset();
  FeedPages out;
  for (const bus::KvEntry& e : entries) {
    std::string s, url;
    if (bus::ParsePackKey(e.key, &s)) {
      if (s != site || e.deleted) continue;
      out.keys.push_back(e.key);
      bus::PackHeader h;
      std::vector<bus::PackOp> ops;
      if (Status st = bus::DecodePagePack(e.value, &h, &ops); !st.ok()) return st;
      if (bus::IsSnapshot(h.kind)) ++out.snapshots;
      for (const bus::PackOp& op : ops) {
        if (op.put) out.records[std::string(op.url)] = std::string(op.record);
        else out.records.erase(std::string(op.url));
      }
    } else if (bus::ParsePageKey(e.key, &s, &url) && s == site) {
      out.keys.push_back(e.key);
      if (e.deleted) out.records.erase(url);
      else out.records[url] = e.value;
    }
  }
  return out;
}

}  // namespace folio::testing
