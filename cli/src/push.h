// `folio push DIR`: sends the notes and attachments of a local vault that the
// server lacks or holds in another version, and deletes from the server the
// notes and attachments gone locally.
//
// Output contract (integration tests rely on it):
//   stdout  with --dry-run: one "would send PATH (attachment, new|changed,
//           SIZE)", "would send PATH (new|changed, N bytes)" or "would delete
//           PATH" line per item, in sending order, then DryRunSummaryLine;
//           otherwise one SummaryLine.
//   stderr  "warning: PATH: REASON" per local file left out and per server
//           warning ("warning: Folder/Note.md: dangling link [[X]]"); on
//           failure one "folio: MESSAGE" line; the progress bar if enabled.
//   exit    kExitOk, kExitFailed (nothing or only part was pushed),
//           kExitSkipped (pushed, but some local files were left out).
// Thread-safety: call from main().
#pragma once

#include <cstdint>
#include <filesystem>

#include "api.h"
#include "plan.h"
#include "vault.h"

namespace folio::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;   // server unreachable, rejected, malformed answer, bad DIR
inline constexpr int kExitUsage = 2;    // bad command line (main.cc)
inline constexpr int kExitSkipped = 3;  // the push succeeded but some local files were left out

struct PushOptions {
  std::filesystem::path dir;                      // the vault root
  ServerOptions server;
  BatchLimits limits;                             // defaults: 500 notes, 8 MiB
  // Larger files are left out with a warning. 0: the limit the server's
  // manifest advertises (servers that do not: 4 MiB notes, 1008 KiB
  // attachments). A value over the server's limit is lowered to it.
  int64_t max_note_bytes = 0;
  int64_t max_attachment_bytes = 0;
  bool dry_run = false;                           // list, send nothing
  bool allow_delete_all = false;                  // an empty vault may delete every note
  bool progress = false;                          // draw a progress bar on stderr
};

// Runs the push and returns the process exit code.
// REQUIRES: options.limits has max_notes >= 1 and max_bytes >= 1.
int RunPush(const PushOptions& options);

}  // namespace folio::cli
