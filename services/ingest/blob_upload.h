// Attachment uploads of a push, before the push reaches the writer: each
// attachment's SHA-256, and the bytes of those storage lacks PUT into
// folio-storage through the storage client (HEAD first: storage is content
// addressed, so a blob it has is never sent again). The writer commits only
// after the upload succeeded, so a committed page never names a blob storage
// lacks; the blob collector (blob_gc.h) leaves alone the blobs of pushes
// between upload and commit (BlobsInFlight).
//
// Threading: UploadAttachments blocks on the network and fans out on its own
// threads: call it from a pool thread, never from an event loop.
// BlobsInFlight is thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "push_request.h"
#include "storage_client.h"

namespace folio::ingest {

// The blobs of pushes uploaded but not committed (or failed) yet.
class BlobsInFlight {
 public:
  // Held until the returned handle is destroyed.
  std::shared_ptr<void> Hold(std::vector<std::string> sha256);
  bool Contains(const std::string& sha256) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, int> held_;  // GUARDED_BY(mu_): sha256 -> how many pushes hold it
};

// Sets each attachment's sha256 (when empty) and, with storage enabled
// (`storage.url` set), puts the bytes of every one storage lacks, 8 at a
// time (storage's group commit shares one fsync among concurrent PUTs).
// The first failure stops the rest: kNoSpace when storage is full,
// kUnavailable otherwise, each message saying nothing was changed and the
// push may be retried.
Status UploadAttachments(const StorageAccess& storage, std::vector<PushAttachment>* attachments);

// Content-Type an attachment is stored and served with, by extension (the
// table the edge serves attachments by); application/octet-stream if
// unknown, never "" (a PUT without one would be stored as curl's default
// for a body, application/x-www-form-urlencoded).
std::string AttachmentContentType(std::string_view path);

}  // namespace folio::ingest
