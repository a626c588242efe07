// `folio push DIR [--prefix P]`: sends the notes and attachments of a local
// vault (or, with --prefix, of the site's folder P) that the server lacks or
// holds in another version, and deletes from the server the notes and
// attachments gone locally (with --prefix: only those under P/).
//
// Output contract (integration tests rely on it):
//   stdout  with --dry-run: one "would send PATH (attachment, new|changed,
//           SIZE)", "would send PATH (new|changed, N bytes)" or "would delete
//           PATH" line per item, in sending order, then DryRunSummaryLine;
//           and, when the push would change the site's setting, one "would
//           turn strict line breaks on|off (every note page re-renders)"
//           line before it; otherwise one SummaryLine (with --json: one
//           SummaryJson line).
//   settings  DIR/.obsidian/app.json's "strictLineBreaks" (settings.h),
//           overridden by --[no-]strict-line-breaks, goes with the push
//           (with --prefix too); neither: nothing is sent and the site keeps
//           its setting. A push that sends no file sends it alone when the
//           manifest says the site's differs.
//   index   after a push that succeeded (not with --dry-run), DIR/.folio/index
//           (index.h) records the files' stat data and hashes and the
//           server view; the next push reads and hashes only files whose
//           stat data changed and asks the server for a manifest delta
//           (sync.h). An unusable index gives one "folio: ..." note on
//           stderr, never an error.
//   stderr  "warning: PATH: REASON" per local file left out and per distinct
//           server warning ("warning: Folder/Note.md: dangling link [[X]]"),
//           each printed once; PATH is the site path (with --prefix: "P/x.md"); on
//           failure one "folio: MESSAGE" line; the progress bar if enabled.
//   exit    kExitOk, kExitFailed (nothing or only part was pushed),
//           kExitSkipped (pushed, but some local files were left out).
// Thread-safety: call from main().
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "api.h"
#include "plan.h"
#include "report.h"
#include "vault.h"

namespace folio::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;   // server unreachable, rejected, malformed answer, bad DIR
inline constexpr int kExitUsage = 2;    // bad command line (main.cc)
inline constexpr int kExitSkipped = 3;  // the push succeeded but some local files were left out

// What one push did, for a caller that prints its own line (`folio watch`).
struct PushRun {
  PushTotals totals;
  int64_t added = 0;     // files (notes and attachments) sent that the server lacked
  int64_t modified = 0;  // files sent that the server held in another version
  int64_t removed = 0;   // paths deleted on the server
  std::vector<std::string> warnings;  // the first few "PATH: REASON" warnings
  std::string error;     // "" or why the push failed (the "folio: ..." line's text)
  // The failure needs the author, not a retry: the token or the server was
  // refused (401, 403, not a folio server), or the delete guard stopped it.
  bool needs_author = false;
  int64_t max_note_bytes = 0, max_attachment_bytes = 0;  // the size limits in effect (0: not known)
};

struct PushOptions {
  std::filesystem::path dir;                      // the vault root
  // --prefix: DIR's files are the site's files under this scope ("Team A/",
  // prefix.h); nothing outside it is changed or deleted. "" = the whole site.
  // REQUIRES: "" or a result of ScopeOfPrefix.
  std::string scope;
  ServerOptions server;
  BatchLimits limits;                             // defaults: 500 notes, 8 MiB
  // Larger files are left out with a warning. 0: the limit the server's
  // manifest advertises (servers that do not: 4 MiB notes, 1008 KiB
  // attachments). A value over the server's limit is lowered to it.
  int64_t max_note_bytes = 0;
  int64_t max_attachment_bytes = 0;
  bool dry_run = false;                           // list, send nothing
  bool allow_delete_all = false;                  // an empty vault may delete every note
  bool no_delete = false;                         // send what changed; delete nothing on the server
  bool yes = false;                               // go ahead with a push that deletes many notes
  // A push deleting more notes than this (and more than a quarter of the
  // server's notes) stops and asks for --yes: a mistaken folder must not
  // wipe a site.
  size_t delete_confirm_above = 20;
  bool progress = false;                          // draw a progress bar on stderr
  bool full = false;                              // ignore the index: full manifest, hash every file
  bool json = false;                              // the summary as one JSON line (SummaryJson)
  // One "folio: timings index_read=MS manifest=MS walk=MS diff=MS send=MS
  // index_write=MS total=MS" line on stderr at the end (loadtest/cli_bench.py).
  bool timings = false;
  // --strict-line-breaks (true) / --no-strict-line-breaks (false); unset
  // (default): DIR/.obsidian/app.json's, if it says.
  std::optional<bool> strict_line_breaks;
  // Not null: filled with what the push did; the summary line and the
  // "folio: MESSAGE" failure line are then left to the caller (warnings
  // still go to stderr).
  PushRun* run = nullptr;
};

// Runs the push and returns the process exit code.
// REQUIRES: options.limits has max_notes >= 1 and max_bytes >= 1.
int RunPush(const PushOptions& options);

}  // namespace folio::cli
