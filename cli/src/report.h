// What `folio push` tells the user: byte counts, the one-line summary, the
// dry-run listing and the progress bar on a terminal.
//
// Formatting functions are pure and thread-safe. A ProgressBar writes to the
// FILE it is given and belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "plan.h"
#include "wire.h"

namespace folio::cli {

struct PushTotals {
  int64_t sent = 0;       // notes the server received
  int64_t changed = 0;    // notes the server found changed
  int64_t rendered = 0;   // pages the server rendered (changed notes and their dependents)
  int64_t deleted = 0;    // notes the server deleted
  int64_t unchanged = 0;  // notes not sent: same hash as the manifest
  int64_t version = 0;    // the vault version after the push
  int64_t skipped = 0;    // local files left out with an error
  int64_t attachments_sent = 0;       // attachments the server received
  int64_t attachments_changed = 0;    // of those: new or changed on the server
  int64_t attachments_deleted = 0;    // attachments the server deleted
  int64_t attachments_unchanged = 0;  // attachments not sent: same hash as the manifest
  int64_t attachments_skipped = 0;    // of skipped: attachments (over the limit, unreadable)
  double seconds = 0;
  int64_t files = 0;         // notes and attachments found by the walk
  int64_t hashed = 0;        // of files: read and hashed (the others' stat data matched the index)
  bool manifest_delta = false;  // the server view came from the index plus a manifest delta
  // Set when the push changed the site's "Strict line breaks" (every note
  // page re-rendered): the new value. Unset: unchanged.
  std::optional<bool> strict_line_breaks_now;
};

// "folio: 12 notes sent (3 changed, 15 pages rendered), 40 unchanged; 2
//  attachments sent (2 changed), 4 unchanged; deleted 3 notes and 1
//  attachment; version 7; 0.42 s" (one line). The attachment part appears
// only when an attachment was sent, deleted, left out or found unchanged;
// the deleted part says "nothing deleted" when nothing was; "strict line
// breaks now on (every note page re-rendered); " precedes the version when
// the push changed that setting; "; 2 files skipped" is appended when
// skipped > 0.
std::string SummaryLine(const PushTotals& t);

// --json: {"sent":N,"changed":N,"rendered":N,"deleted":N,"unchanged":N,
//  "attachments_sent":N,"attachments_changed":N,"attachments_deleted":N,
//  "attachments_unchanged":N,"skipped":N,"version":N,"seconds":X,"files":N,
//  "hashed":N,"manifest":"delta"|"full"} (one line; sent, changed, deleted
//  and unchanged count notes only), plus "strict_line_breaks":B when the
//  push changed that setting.
std::string SummaryJson(const PushTotals& t);

// The warnings of `report` to print, in order, each once; a leading
// "PATH: " that only repeats the report's own path is dropped first (servers
// before the fix reported a frontmatter problem both bare and so prefixed).
std::vector<std::string> DistinctWarnings(const NoteReport& report);

// "would send Folder/Note.md (new, 1234 bytes)" / "would delete Old.md".
std::string DryRunSendLine(const LocalNote& note, bool is_new);
// "would send Media/pic.png (attachment, new, 12.0 KiB)".
std::string DryRunAttachmentLine(const LocalAttachment& attachment, bool is_new);
std::string DryRunDeleteLine(const std::string& path);
// "folio: dry run: 3 notes to send (1 new, 2 changed, 4.1 KiB) in 1 batch, 1 to
//  delete, 10 unchanged; 2 attachments to send (2 new, 0 changed, 1.2 MiB), 1
//  to delete, 4 unchanged; version 7; nothing sent" (one line; a deleted path
// not ending in ".md" counts as an attachment). The attachment part appears
// only when an attachment is to be sent or deleted or attachments_skipped > 0.
std::string DryRunSummaryLine(const PushPlan& plan, size_t batches, int64_t version,
                              int64_t skipped, int64_t attachments_skipped);

// "[#########...........] 120/500 files  1.2 MiB/4.8 MiB" (files: notes and
// attachments; bytes: their raw sizes).
std::string ProgressLine(size_t files_done, size_t files_total, int64_t bytes_done,
                         int64_t bytes_total);

// Redraws one line in place on `out` (a terminal); does nothing if disabled.
class ProgressBar {
 public:
  ProgressBar(std::FILE* out, bool enabled) : out_(out), enabled_(enabled) {}
  ~ProgressBar() { Clear(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Update(size_t files_done, size_t files_total, int64_t bytes_done, int64_t bytes_total);
  // Shows `text` in the bar's place (e.g. what the server is doing now).
  void Text(const std::string& text);
  // Erases the bar so that following output starts on a clean line.
  void Clear();

 private:
  std::FILE* out_;
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace folio::cli
