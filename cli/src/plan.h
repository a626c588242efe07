// Deciding what a push sends: the diff of a local vault against the server's
// manifest, and the split of that diff into bounded batches.
//
// Pure functions over values; no I/O. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vault.h"

namespace folio::cli {

// What the server holds, from GET /api/v1/manifest.
struct RemoteNote {
  std::string path;    // vault-relative, as pushed
  std::string sha256;  // lower-case hex of the raw bytes last pushed
  std::string url;     // site path, "/folder/note"
};
struct Manifest {
  int64_t version = 0;
  std::vector<RemoteNote> notes;
};

struct PushPlan {
  std::vector<LocalNote> to_send;      // new or changed notes, sorted by path
  std::vector<bool> is_new;            // parallel to to_send: absent on the server
  size_t new_count = 0;                // of to_send: absent on the server
  size_t changed_count = 0;            // of to_send: different hash on the server
  std::vector<std::string> to_delete;  // on the server, gone locally; sorted
  size_t unchanged = 0;                // same hash on both sides: not sent
};

// Compares `local` with `remote`. A path counts as present locally if it is a
// note or a skipped file (a note left out for a bad encoding or its size is
// not deleted from the server). Comparison is byte-exact on paths and
// case-insensitive on hex hashes.
PushPlan Diff(const Vault& local, const Manifest& remote);

struct BatchLimits {
  int64_t max_notes = 500;       // notes plus deletions per request; default 500
  int64_t max_bytes = 8 << 20;   // note content bytes (and deleted path bytes); default 8 MiB
};

// One request: a contiguous range of plan.to_send, then one of plan.to_delete.
struct Batch {
  size_t first_note = 0, note_count = 0;
  size_t first_delete = 0, delete_count = 0;
  int64_t bytes = 0;  // content bytes of the notes + bytes of the deleted paths
};

// Splits `plan` greedily, in order. No batch has more than max_notes items or
// more than max_bytes bytes, except that an item bigger than max_bytes travels
// alone. Deletions come after every note: they fill the last note batch and
// then batches of their own. Returns no batch for an empty plan.
// REQUIRES: limits.max_notes >= 1 and limits.max_bytes >= 1.
std::vector<Batch> PlanBatches(const PushPlan& plan, const BatchLimits& limits);

}  // namespace folio::cli
