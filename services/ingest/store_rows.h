// The rows Store reads and writes (store.h): a push's Commit with its
// outbox messages, note, page and site rows, the recorded replies of keyed
// pushes, staged imports, manifest deltas, crashed notes. Plain values: the
// writer thread builds a Commit and hands it to Store::Apply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "folio/bus/page_schema.h"
#include "folio/bus/related_schema.h"
#include "folio/site/vault.h"

namespace folio::ingest {

struct OutboxMsg {
  // kPagePut is how a page's put is stored: the row names the page (site,
  // url) and PendingOutbox reads its record from `pages`, so a page is
  // written to the database once. PendingOutbox turns it into a kKvPut with
  // that record, or leaves it kPagePut with no payload when the page is gone
  // (a later row deletes it): nothing to send.
  enum Kind : int { kKvPut = 1, kKvDelete = 2, kStream = 3, kPagePut = 4 };
  int64_t seq = 0;       // assigned by the store
  int kind = kKvPut;
  std::string subject;   // KV key or stream subject
  std::string payload;
  std::string msg_id;    // for kStream: Nats-Msg-Id
  // In a Commit only: >= 0 when the payload is Commit::pages[page].record
  // (payload stays empty; Store::Apply stores that record), so a page is not
  // held twice while its push commits. See Commit::AddPage.
  int64_t page = -1;
};

struct NoteRow {
  site::NoteMeta meta;
  std::string content;
  std::vector<std::string> warnings;  // from the note's latest render
  bool content_changed = true;  // false: re-rendered only; keep content
};

struct PageRow {
  std::string url;
  std::string record;    // bus::EncodePageRecord
};

// One row of the sites table.
struct SiteRow {
  std::string name;                // bus::IsValidSiteName
  std::string title;               // "" = the name
  std::vector<std::string> hosts;  // bus::NormalizeHost-canonical, unique across sites
  std::string token_sha256;        // lower-case hex SHA-256 of the token; the token itself is never stored
  int64_t created_ms = 0;
};

// A committed push, recorded under the client's Idempotency-Key so that a
// retry of it is answered with the same reply instead of being applied
// again. Kept at least kPushRecordTtlMs, at most kPushRecordsPerSite per site.
struct PushRecord {
  std::string key;          // the client's Idempotency-Key
  std::string body_sha256;  // of the request body: a key reused for another body is refused
  std::string reply;        // the reply's fields as committed (RecordedReply in push_summary.h)
  int64_t created_ms = 0;   // unix ms
};
inline constexpr int64_t kPushRecordTtlMs = 24 * 3600 * 1000;
inline constexpr int64_t kPushRecordsPerSite = 10'000;

struct Commit {
  std::string site;
  int64_t version = 0;
  // Who may read the pages this commit writes: internal::AddPage and the
  // renderer give each page at least this access (a private site's are all
  // kSignedIn; the sign-in page is the one exception, issue 29).
  bus::PageAccess access = bus::PageAccess::kPublic;
  std::vector<NoteRow> notes;
  std::vector<std::string> deleted_notes;  // paths
  std::vector<PageRow> pages;
  std::vector<std::string> deleted_pages;  // urls
  std::vector<OutboxMsg> outbox;           // in publish order
  std::vector<std::pair<site::AttachmentMeta, std::string>> attachments;  // meta, bytes
  std::vector<std::string> deleted_attachments;                           // paths
  // Related lists to store: each replaces the note's list; an empty one deletes it.
  std::vector<bus::RelatedList> related;
  // When set, recorded as the layout the site's note pages were rendered with.
  std::string layout_fingerprint;
  // When set, recorded as the site's own strict-line-breaks setting (issue 13).
  std::optional<bool> strict_line_breaks;
  // When set, recorded with the push (same transaction), and records past
  // the retention above are dropped.
  std::optional<PushRecord> push_record;
  // When set, the site's staged batches of this stage are dropped in the
  // same transaction (the commit of a staged import).
  std::string drop_stage;
  // Set by Store::Apply: rows the transaction inserted, updated or deleted
  // (what a push costs the database; flat in the vault's size).
  int64_t rows_written = 0;
  // Set by Store::Apply: the outbox held nothing before this commit, so its
  // messages are all that is pending and may be published from memory.
  bool outbox_was_empty = false;

  // Adds a page and, after the outbox messages so far, its put (under
  // bus::PageKey(site, url)), which refers to the page's record instead of
  // copying it.
  void AddPage(std::string url, std::string record) {
    pages.push_back({std::move(url), std::move(record)});
    AddPagePut(pages.size() - 1);
  }
  // The put of pages[i], after the outbox messages so far (the puts of a
  // `pages` rebuilt as a whole).
  void AddPagePut(size_t i) {
    OutboxMsg m;
    m.subject = bus::PageKey(site, pages[i].url);
    m.page = static_cast<int64_t>(i);
    outbox.push_back(std::move(m));
  }
};

// A staged import (POST /api/v1/push?stage=ID&batch=N): what it holds.
struct StageInfo {
  int64_t batches = 0;  // distinct batch numbers stored
  int64_t bytes = 0;    // of their bodies
};

// Manifest deltas (GET /api/v1/manifest?since=V). Every note row and
// attachment row carries the version of the push that last wrote its
// content; a deleted note or attachment leaves a tombstone in the table
// `deleted` (written in the push's own transaction, removed when the path
// comes back). Tombstones older than kTombstoneVersions versions are pruned;
// site_version.deleted_floor is then the version below which deletions may
// be missing, and a delta since an older version is "too old".
inline constexpr int64_t kTombstoneVersions = 20'000;

struct ManifestEntry {
  std::string path, sha256, url;
};

struct ManifestDelta {
  bool too_old = false;                    // since < the tombstone floor: nothing else is filled
  std::vector<ManifestEntry> notes;        // written after `since`, by path
  std::vector<ManifestEntry> attachments;  // written after `since`, by path
  std::vector<std::string> deleted;        // notes and attachments deleted after `since`, by path
};

// The statements ManifestSince runs (exposed so that a test can check their
// query plans); parameters: site, since.
inline constexpr const char* kNotesSinceSql =
    "SELECT path, sha256, url FROM notes WHERE site=? AND version>?";
inline constexpr const char* kAttachmentsSinceSql =
    "SELECT path, sha256, url FROM attachments WHERE site=? AND version>?";
inline constexpr const char* kDeletedSinceSql =
    "SELECT path FROM deleted WHERE site=? AND version>?";

struct CrashedNoteRow {
  std::string site;
  std::string path;
  std::string sha256;  // of the note's content
  std::string build;   // the folio-ingest build it crashed
  int64_t at_ms = 0;
};

}  // namespace folio::ingest
