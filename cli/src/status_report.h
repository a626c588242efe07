// What `folio status` tells the user: the difference between a local vault
// and the server's full manifest, made from the same diff `folio push`
// sends (plan.h Diff), as text for a terminal or one JSON object.
//
// Pure functions over values; no I/O. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan.h"
#include "vault.h"

namespace folio::cli {

// The paths of one kind (notes or attachments) that a push would change.
struct StatusChanges {
  std::vector<std::string> add;     // local only, sorted
  std::vector<std::string> change;  // different hash on the server, or lost (below), sorted
  std::vector<std::string> lost;    // of change: the server's storage lost the bytes, sorted
  std::vector<std::string> remove;  // on the server (in scope) only, sorted
  size_t unchanged = 0;

  size_t total() const { return add.size() + change.size() + remove.size(); }
};

struct StatusWarning {
  std::string path;     // site path of the note
  std::string warning;  // "dangling link [[X]]"
};

struct StatusReport {
  std::string server;    // the ingest URL asked
  std::string site;      // the manifest's "site" ("" if not said)
  std::string site_url;  // the manifest's "site_url" ("" if unset)
  int64_t version = 0;
  StatusChanges notes, attachments;
  std::vector<StatusWarning> warnings;  // the server's, for its notes in scope, by path
  std::vector<SkippedFile> oversized;   // local files over the server's limits (too_large)
  std::vector<SkippedFile> left_out;    // other local files a push would leave out (is_error)
  // Set when the vault's "Strict line breaks" differs from the site's: the vault's.
  std::optional<bool> strict_line_breaks_change;

  bool in_sync() const { return notes.total() + attachments.total() == 0 && !strict_line_breaks_change; }
};

// The report of `plan` (Diff(vault, manifest, scope)); warnings from
// manifest's notes inside `scope`; oversized and left_out from
// vault.skipped (informational skips are not listed). `vault_strict` is
// the vault's setting (unset: none, never a change).
StatusReport MakeStatusReport(const PushPlan& plan, const Manifest& manifest, const Vault& vault,
                              std::string_view scope, std::optional<bool> vault_strict);

// Several lines, each ending in '\n': the server line ("server URL: site S,
// version N, https://site"), one count line per kind ("notes: 2 to add, 1 to
// change, 0 to delete, 40 unchanged", plus "(1 lost by the server's storage:
// re-sent)" for attachments whose bytes the server lost) followed by at most `max_paths` "  + P",
// "  ~ P", "  - P" lines of that kind and "  ... and N more", the warnings
// ("  P: W", capped alike), the oversized and left-out files, and last
// "in sync" or "not in sync: N notes and M attachments differ; `folio push`
// sends them".
// REQUIRES: max_paths >= 1.
std::string StatusText(const StatusReport& report, size_t max_paths = 20);

// One line: {"in_sync":B,"server":S,"site":S,"site_url":S,"version":N,
//  "notes":{"add":[..],"change":[..],"delete":[..],"unchanged":N},
//  "attachments":{...},"warnings":[{"path","warning"}],
//  "oversized":[{"path","reason"}],"left_out":[{"path","reason"}]}
// plus "strict_line_breaks":B (the vault's) when that setting differs. Each
// list holds at most `max_paths` entries; the counts
// ("add_count", "change_count", "delete_count", "warning_count") are exact.
std::string StatusJson(const StatusReport& report, size_t max_paths = 10000);

}  // namespace folio::cli
