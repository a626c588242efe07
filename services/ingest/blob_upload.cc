#include "blob_upload.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/http/attachment.h"

namespace folio::ingest {
namespace {

// Concurrent PUTs: a push of 3,000 4 KiB images took 2.0 s one at a time,
// 1.4 s with 8 (storage's group commit shares the fsync).
constexpr size_t kPutThreads = 8;

Status PutIfMissing(const storage_client::Client& client, const PushAttachment& a) {
  auto have = client.HeadBlob(a.sha256, 10'000);
  if (have.ok() && have->status == 200) return Status::Ok();
  auto r = client.PutBlob(a.sha256, a.data, AttachmentContentType(a.path), 120'000);
  if (r.ok() && (r->status == 200 || r->status == 201)) return Status::Ok();
  Status why = client.Error("attachment storage failed on " + a.path, r);
  log::Warn("storage refused an attachment", {{"path", a.path}, {"error", why.message()}});
  if (r.ok() && r->status == 507) {
    return Status::NoSpace("attachment storage is full (" + a.path +
                           "); nothing was changed, retry the push once it has space");
  }
  return Status::Unavailable(why.message() + "; nothing was changed, retry the push");
}

}  // namespace

std::string AttachmentContentType(std::string_view path) {
  std::string_view t = http::ContentTypeForName(path);
  return t.empty() ? "application/octet-stream" : std::string(t);
}

std::shared_ptr<void> BlobsInFlight::Hold(std::vector<std::string> sha256) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& h : sha256) ++held_[h];
  }
  auto release = [this, hashes = std::move(sha256)](void*) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& h : hashes) {
      auto it = held_.find(h);
      if (it != held_.end() && --it->second == 0) held_.erase(it);
    }
  };
  return std::shared_ptr<void>(static_cast<void*>(this), std::move(release));
}

bool BlobsInFlight::Contains(const std::string& sha256) const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_.count(sha256) > 0;
}

Status UploadAttachments(const StorageAccess& storage, std::vector<PushAttachment>* attachments) {
  for (PushAttachment& a : *attachments) {
    if (a.sha256.empty()) a.sha256 = Sha256Hex(a.data);
  }
  if (storage.url.empty() || attachments->empty()) return Status::Ok();
  const storage_client::Client client = StorageClientFor(storage);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status first_error;  // GUARDED_BY(mu)
  auto work = [&] {
    for (size_t k = next++; k < attachments->size() && !failed.load(); k = next++) {
      Status s = PutIfMissing(client, (*attachments)[k]);
      if (s.ok()) continue;
      std::lock_guard<std::mutex> lock(mu);
      if (!failed.exchange(true)) first_error = std::move(s);
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(kPutThreads, attachments->size()); ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  return failed.load() ? first_error : Status::Ok();
}

}  // namespace folio::ingest
