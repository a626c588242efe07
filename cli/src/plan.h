// Deciding what a push sends: the diff of a local vault against the server's
// manifest, and the split of that diff into bounded batches.
//
// Pure functions over values; no I/O. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vault.h"

namespace folio::cli {

// A note or an attachment the server holds, from GET /api/v1/manifest.
struct RemoteFile {
  std::string path;    // vault-relative, as pushed
  std::string sha256;  // lower-case hex of the raw bytes last pushed
  std::string url;     // site path: "/folder/note", "/assets/<16 hex>/pic.png"
};
using RemoteNote = RemoteFile;
using RemoteAttachment = RemoteFile;

struct Manifest {
  int64_t version = 0;
  // What the server accepts ("limits"); 0 if it does not say (older servers).
  int64_t max_note_bytes = 0;
  int64_t max_attachment_bytes = 0;
  std::vector<RemoteNote> notes;
  std::vector<RemoteAttachment> attachments;  // empty from servers older than attachments
  std::string site;  // the site the token selects; "" from servers that do not say
  std::string site_url;  // the site's public base URL ("site_url"); "" when unset or not said
  std::string epoch;  // the site's history id (new after a restore); "" from servers that do not say
  std::optional<bool> strict_line_breaks;  // "settings": the site's now; unset from servers that do not say
  // A full manifest's per-note "warnings" (dangling or ambiguous links...):
  // path -> the server's warnings, for the notes that have some.
  std::map<std::string, std::vector<std::string>> warnings;

  // A delta (GET /api/v1/manifest?since=S, sync.h): notes and attachments
  // hold what was written after S, `deleted` what was deleted after S.
  bool delta = false;
  bool too_old = false;               // the server no longer knows every deletion since S
  std::vector<std::string> deleted;   // paths of notes and attachments
  int64_t note_count = -1;            // what the server holds in all; -1: not said
  int64_t attachment_count = -1;
  // "missing_attachments" (full manifests and deltas alike): paths of the
  // attachments listed here (or in the index's view) whose bytes the
  // server's storage cannot serve; Diff sends them again (issue 23). Empty
  // from servers without storage or that do not say.
  std::vector<std::string> missing_attachments;
};

// The sending half of a diff, for one kind of file.
struct FileChanges {
  std::vector<LocalFile> to_send;  // new or changed, sorted by path
  std::vector<bool> is_new;        // parallel to to_send: absent on the server
  size_t new_count = 0;            // of to_send: absent on the server
  size_t changed_count = 0;        // of to_send: different hash on the server, or lost (below)
  size_t lost_count = 0;           // of changed_count: same hash, but the server lost the bytes
  size_t unchanged = 0;            // same hash on both sides: not sent
};

struct PushPlan {
  FileChanges notes;
  FileChanges attachments;
  std::vector<std::string> to_delete;  // notes and attachments on the server, gone
                                       // locally; sorted
};

// Compares `local` with `remote`, notes with notes and attachments with
// attachments. A path counts as present locally if it is a note, an
// attachment or a skipped file (a file left out for a bad encoding or its
// size is not deleted from the server). Comparison is byte-exact on paths and
// case-insensitive on hex hashes; an attachment in remote's
// missing_attachments is sent even when its hash matches (its bytes were
// lost). Server files outside `scope` (a path
// prefix such as "Team A/", prefix.h; "" = every path) are left alone:
// never compared, never deleted.
// REQUIRES: every local path lies in `scope`.
PushPlan Diff(const Vault& local, const Manifest& remote, std::string_view scope = {});

// What an attachment costs in a request body: the length of its standard
// base64 text (with padding).
constexpr int64_t EncodedAttachmentSize(int64_t raw_bytes) { return (raw_bytes + 2) / 3 * 4; }

struct BatchLimits {
  int64_t max_notes = 500;       // attachments, notes and deletions per request; default 500
  int64_t max_bytes = 8 << 20;   // note content bytes, attachment base64 bytes and deleted
                                 // path bytes per request; default 8 MiB
};

// One request: a contiguous range of plan.attachments.to_send, then one of
// plan.notes.to_send, then one of plan.to_delete.
struct Batch {
  size_t first_attachment = 0, attachment_count = 0;
  size_t first_note = 0, note_count = 0;
  size_t first_delete = 0, delete_count = 0;
  int64_t bytes = 0;  // EncodedAttachmentSize of the attachments + content bytes of the
                      // notes + bytes of the deleted paths

  size_t items() const { return attachment_count + note_count + delete_count; }
};

// Splits `plan` greedily, in order: every attachment, then every note, then
// every deletion, each kind filling the last batch of the kind before it. So a
// note is never sent before an attachment it may embed. No batch has more
// than max_notes items or more than max_bytes bytes, except that an item
// bigger than max_bytes travels alone. Returns no batch for an empty plan.
// REQUIRES: limits.max_notes >= 1 and limits.max_bytes >= 1.
std::vector<Batch> PlanBatches(const PushPlan& plan, const BatchLimits& limits);

}  // namespace folio::cli
