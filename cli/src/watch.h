// `folio watch DIR`: pushes DIR once like `folio push`, then watches it with
// inotify and pushes what changed after each burst of saves.
//
// Watching: one inotify descriptor, one watch per directory of the vault
// (added as folders appear, dropped as they go), skipping the directories
// the push's walker skips (names starting with '.'), except .obsidian
// itself (its app.json carries a setting the push sends). An overflowed
// event queue (IN_Q_OVERFLOW) rescans the tree.
//
// Pushing: the first push, every retry and any burst with a folder event,
// an overflow, a settings change, more than 64 files or a file that needs
// the walker's rules (a link, over the size limit, bad UTF-8 or path) is a
// `folio push` against the vault's index (push.h): only files whose stat
// data changed are read, only what differs from the server is sent. Other
// bursts push just the files the events named, compared with the server
// hashes of the index that push wrote. Either way a rename is a delete plus
// an add in one push (the server then redirects the old URL).
//
// Debounce: a push starts once no event came for `debounce_ms`, or
// `max_wait_ms` after the first event of a burst, whichever is first; a
// temp-file-then-rename save is therefore one push.
//
// Server away: a failed push is retried after 1 s, doubling up to
// `max_backoff_ms`; events meanwhile only join the next attempt, which
// sends everything changed since the last push that succeeded.
//
// Output contract (tests rely on it):
//   stdout  per push that changed something: "folio: pushed +A ~M -D (N ms)"
//           plus "; PATH: WARNING" for the first warnings; after the first
//           push (even when nothing changed) one "folio: watching DIR" line.
//           With --json one object per line instead:
//           {"event":"push","added":A,"modified":M,"deleted":D,"ms":N,
//            "received":R,"version":V,"warnings":[...]}  (R: files the
//           server's replies say it received)
//           {"event":"error","message":"..."}
//           {"event":"retry","message":"...","in_ms":N}
//           {"event":"watching","dir":"..."}
//   stderr  the push's "warning: PATH: REASON" lines; without --json the
//           "folio: push failed: MESSAGE; retrying in N s" lines.
//   exit    0 on SIGINT or SIGTERM (an in-flight push finishes first);
//           kExitFailed when DIR is gone, moved or cannot be watched.
// Thread-safety: call from main(); installs SIGINT/SIGTERM handlers.
#pragma once

#include <cstdint>

#include "push.h"

namespace folio::cli {

struct WatchOptions {
  PushOptions push;              // dir, server, scope, flags as for `folio push`
  int64_t debounce_ms = 50;      // quiet time that ends a burst; default 50 ms
  int64_t max_wait_ms = 1000;    // longest a burst delays its push; default 1 s
  int64_t max_backoff_ms = 30'000;  // retry interval cap while pushes fail; default 30 s
};

// Runs until a signal or a fatal error; returns the process exit code.
// REQUIRES: options.push.run == nullptr (RunWatch sets it).
int RunWatch(const WatchOptions& options);

}  // namespace folio::cli
