#include "blob_gc.h"

#include <set>
#include <utility>

#include "folio/core/log.h"

namespace folio::ingest {
namespace {

constexpr int64_t kTimeoutMs = 30'000;

}  // namespace

BlobGc::BlobGc(StorageAccess storage, int64_t grace_ms, Store* store, const BlobsInFlight* in_flight,
               metrics::Registry* registry)
    : storage_(std::move(storage)), grace_ms_(grace_ms), store_(store), in_flight_(in_flight),
      deleted_(registry->NewCounter("folio_ingest_blob_gc_deleted_total",
                                    "Blobs deleted from storage because no attachment used them")),
      failures_(registry->NewCounter("folio_ingest_blob_gc_failures_total", "Blob collection passes that failed")) {}

Result<BlobGc::Pass> BlobGc::RunOnce(int64_t now_ms) {
  Pass pass;
  std::set<std::string> used;
  if (Status s = store_->ForEachAttachmentHash([&](std::string_view h) { used.emplace(h); }); !s.ok()) {
    failures_.Increment();
    return s;
  }
  const storage_client::Client client = StorageClientFor(storage_);
  auto listed = client.ListAllBlobs(kTimeoutMs);
  if (!listed.ok()) {
    failures_.Increment();
    return listed.status();
  }
  const std::vector<std::string>& blobs = *listed;
  pass.blobs = blobs.size();
  // Every unused blob with the time it was first seen unused (now if this
  // pass is the first); a blob used again loses its mark.
  std::map<std::string, int64_t> marks;
  for (const std::string& sha : blobs) {
    if (used.count(sha) || in_flight_->Contains(sha)) continue;  // used, or a push's on its way
    auto seen = unused_since_.find(sha);
    marks.emplace(sha, seen == unused_since_.end() ? now_ms : seen->second);
  }
  pass.unused = marks.size();
  for (auto it = marks.begin(); it != marks.end();) {
    // Seen unused for the first time now: never deleted in the same pass,
    // even with a grace period of 0.
    if (it->second == now_ms || now_ms - it->second < grace_ms_) {
      ++it;
      continue;
    }
    auto r = client.DeleteBlob(it->first, kTimeoutMs);
    if (!r.ok() || (r->status >= 300 && r->status != 404)) {
      failures_.Increment();
      Status why = client.Error("deleting blob " + it->first, r);
      unused_since_ = std::move(marks);  // the rest keep their marks
      return why;
    }
    ++pass.deleted;
    deleted_.Increment();
    it = marks.erase(it);
  }
  unused_since_ = std::move(marks);
  if (pass.deleted > 0 || pass.unused > 0) {
    log::Info("blob collection", {{"blobs", std::to_string(pass.blobs)}, {"unused", std::to_string(pass.unused)},
                                  {"deleted", std::to_string(pass.deleted)}});
  }
  return pass;
}

}  // namespace folio::ingest
