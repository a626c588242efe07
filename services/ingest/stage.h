// Staged imports: one logical push sent as several batches.
//
//   POST /api/v1/push?stage=ID&batch=N   a push body, validated like a push
//        (same JSON errors), stored in the Store under (site, ID, N); a
//        retried upload of batch N replaces it. Nothing is applied.
//   POST /api/v1/push/commit?stage=ID    (Idempotency-Key like a push) an
//        optional push body; the stage's batches in order, then that body,
//        are applied as ONE push: one version, one render pass, one publish.
//
// This file holds the pure parts: the stage ID check and the merge of the
// batches into one PushRequest. The protocol is in docs/architecture.md
// ("Staged imports"); handlers_stage.cc wires it; store_stages.cc stores it.
// Pure; thread-safe (a StagedPush is used by one thread at a time).
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "folio/core/status.h"
#include "folio/ingest_api/limits.h"
#include "push_request.h"

namespace folio::ingest {

// Bounds of staged imports; folio-ingest's flags set them (config.h).
struct StageLimits {
  int64_t max_bytes = 1LL << 30;   // --stage-max-bytes (1GiB): staged batch bodies per site, all its stages
  int64_t ttl_ms = 3600 * 1000;    // --stage-ttl (1h): a stage without an upload this long is dropped
};

// The ingest API's (folio/ingest_api/limits.h): batch numbers are 0..kMaxStageBatch-1.
inline constexpr size_t kMaxStageIdBytes = ingest_api::kMaxStageIdBytes;
inline constexpr int64_t kMaxStageBatch = ingest_api::kMaxStageBatch;

// kInvalidArgument unless `id` is 1 to kMaxStageIdBytes characters of
// A-Z, a-z, 0-9, '-' and '_'.
Status CheckStageId(std::string_view id);
// The batch number of a "batch" query value: kInvalidArgument unless it
// is a decimal integer in 0..kMaxStageBatch-1.
Result<int64_t> ParseStageBatch(std::string_view value);

// The merge of a stage's batches into the one push its commit applies. A
// path sent again in a later batch replaces the earlier one (a re-sent
// file); a path both sent and deleted within the stage is refused, as it is
// within one push.
class StagedPush {
 public:
  // Adds the next batch (in batch order; the commit's own body last).
  // kInvalidArgument naming the path if it is sent in one batch and
  // deleted in another.
  Status Add(PushRequest batch);
  // The merged push. REQUIRES: called once, last.
  PushRequest Take() { return std::move(merged_); }

 private:
  PushRequest merged_;
  std::map<std::string, size_t, std::less<>> note_at_, attachment_at_;  // path -> index in merged_
  std::set<std::string, std::less<>> deleted_;
};

}  // namespace folio::ingest
