// BlobCensus: which attachment blobs folio-storage can serve, so the
// manifest a CLI diffs against does not call an attachment unchanged when
// storage lost its bytes (issue 23: `folio push` said "1 unchanged" and
// `folio status` "in sync" while the edge answered 404 for it).
//
// How: one listing of every blob (GET /blobs, all pages, through
// libs/storage_client's fail-over) kept for max_age_ms. A hash the listing
// lacks is confirmed with a HEAD (a blob uploaded after the listing was
// made is never reported missing); past max_heads such hashes a new
// listing is made instead, and believed: a blob is in storage before its
// attachment is committed, so a listing begun after the manifest was read
// holds every blob the manifest names that storage has. A blob deleted less than max_age_ms ago may
// still count as present; the next listing finds it. At 10,000 blobs a
// listing is 10 requests (tests/integration/lost_attachments_test.cc
// measures it).
//
// Ownership: HandlerContext owns it (services/ingest/handlers.h); its
// thread is joined by the destructor, so destroy it before the loops its
// callbacks post to. Threading: Check from any thread; done runs on the
// census' own thread.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "folio/core/status.h"
#include "folio/core/thread_pool.h"
#include "storage_client.h"

namespace folio::ingest {

struct BlobCensusOptions {
  int64_t max_age_ms = 5'000;   // how long a listing is trusted (default 5 s)
  size_t max_heads = 16;        // HEADs confirming the listing per call; past it, a new listing (default 16)
  int64_t timeout_ms = 10'000;  // per storage request (default 10 s)
};

class BlobCensus {
 public:
  // Indexes into the checked hashes of those storage cannot serve.
  using Done = std::function<void(Result<std::vector<size_t>>)>;

  // REQUIRES: storage.url and storage.token set.
  BlobCensus(StorageAccess storage, BlobCensusOptions options = {});
  ~BlobCensus() = default;
  BlobCensus(const BlobCensus&) = delete;
  BlobCensus& operator=(const BlobCensus&) = delete;

  // Runs Missing on the census' thread and passes its result to done.
  void Check(std::vector<std::string> sha256, Done done);
  // Blocking: the indexes of the hashes in `sha256` storage lacks. Fails
  // with kUnavailable when storage cannot be listed (callers then report
  // nothing missing rather than everything).
  Result<std::vector<size_t>> Missing(const std::vector<std::string>& sha256);

 private:
  // A new listing if the last is older than max_age_ms (or `force`).
  Status Refresh(bool force);
  // Indexes of the hashes the listing lacks, and when that listing began.
  std::vector<size_t> Unlisted(const std::vector<std::string>& sha256, int64_t* listed_at_ms);

  const storage_client::Client client_;
  const BlobCensusOptions options_;
  std::mutex mu_;
  std::unordered_set<std::string> held_;  // GUARDED_BY(mu_): the last listing plus HEADs since
  int64_t listed_at_ms_ = -1;             // GUARDED_BY(mu_): steady clock; -1 never listed
  ThreadPool pool_{1};                    // last: joined first
};

}  // namespace folio::ingest
