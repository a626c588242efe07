// What `folio push` knows of the server between pushes: the server view of
// the vault's index (index.h) brought up to date with a manifest delta
// (GET /api/v1/manifest?since=V) instead of the full manifest, and the
// index to write after a push that succeeded.
//
// The view of an index at version V is exact for every path the server did
// not write or delete after V; the delta lists every such path (what was
// written with its current hash, what was deleted), so index view + delta is
// the server's current manifest. When that cannot be trusted (no index,
// another server, site or epoch (a restored server), --full, the server's version went backwards, its
// tombstones of deletions no longer reach back to V, or the file counts
// after the delta differ from the server's), the full manifest is fetched.
//
// Pure functions except through the fetch callback; call from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "folio/core/status.h"
#include "index.h"
#include "plan.h"
#include "vault.h"

namespace folio::cli {

// Fetches the full manifest (since = -1) or the delta since a version.
using FetchManifestFn = std::function<Result<Manifest>(int64_t since)>;

struct ServerView {
  Manifest manifest;   // the server's full manifest (notes and attachments sorted by path)
  bool from_delta = false;
  std::string note;    // "" or one line saying why an index could not be used
};

// The server's manifest: `index`'s view plus a delta when index is not null,
// belongs to `server_url` and `full` is false; else the full manifest.
// Fails only as fetch fails (except for a delta refused with
// kInvalidArgument, e.g. since newer than the server: then the full one).
Result<ServerView> LoadServerView(const Index* index, std::string_view server_url, bool full,
                                  const FetchManifestFn& fetch);

// `index`'s server view with `delta` applied (deleted paths removed, written
// ones replaced or added), sorted by path; version and site from the delta.
Manifest ApplyDelta(const Index& index, const Manifest& delta);

// What the push did, for the index written after it.
struct PushOutcome {
  int64_t version = 0;               // server version the new server view is exact at
  std::set<std::string> not_sent;    // paths of plan.*.to_send left out at send time
  std::map<std::string, std::string> sent_sha256;  // path -> hash of the bytes actually sent,
                                                   // where they differ from the walk's
};

// The index after a push of `plan`, computed from `view` (the manifest the
// plan was made against) and `vault` (the walk): every local file with its
// stat data and hash, and the server view with the plan applied.
// REQUIRES: view's and vault's lists sorted by path (LoadServerView,
// WalkVault), plan made from them (Diff).
Index IndexAfterPush(const Vault& vault, const Manifest& view, const PushPlan& plan, const PushOutcome& outcome,
                     std::string server_url, int64_t walked_ns);

// IndexAfterPush's entries by reference (into vault, view, plan and
// outcome, which must outlive them), for UpdateIndex (index.h).
std::vector<IndexRow> IndexRowsAfterPush(const Vault& vault, const Manifest& view, const PushPlan& plan,
                                         const PushOutcome& outcome);

}  // namespace folio::cli
