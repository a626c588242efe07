// Store: ingest's SQLite database (WAL). Holds, per site, every note (text,
// hash, metadata), every published page record, each note's related-note
// list as search last sent it, and the outbox of bus messages committed but
// not yet acknowledged by JetStream; and the sites table (name, title, host
// names, SHA-256 of the site's API token).
//
// Commit first, publish second: a push is one transaction that writes notes,
// pages and outbox rows together; the publisher deletes outbox rows once
// JetStream acknowledged them, and republishes what is left after a crash.
// A full disk: Apply fails with kNoSpace (its transaction rolled back,
// nothing kept) and marks disk() full; the next successful Apply clears the
// mark, as does disk().Recheck() once space returns.
//
// Threading: owned and used by ingest's writer thread only, except disk(),
// which any thread may read (atomic). Other processes (`folio-ingest site
// add|remove`) may open the same file; SQLite's locking serialises them, and
// DataVersionChanged() tells the writer about it.
//
// Files: store.cc opens the database and migrates its schema; each table
// group has its own store_<group>.cc (notes, pages, outbox, sites, pushes,
// stages, crashed, delta), and store_commit.cc writes a push's Commit.
// Every multi-statement write runs in one sqlite::Transaction. The rows
// it reads and writes (Commit, OutboxMsg, PushRecord, ...) are in store_rows.h.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/page_schema.h"
#include "folio/bus/related_schema.h"
#include "folio/core/disk_space.h"
#include "folio/core/status.h"
#include "folio/site/vault.h"
#include "folio/sqlite/db.h"
#include "site_prefs.h"
#include "store_rows.h"

namespace folio::ingest {

class Store {
 public:
  // Opens (creating) <dir>/ingest.db. kUnavailable if the file can't be opened.
  static Result<std::unique_ptr<Store>> Open(const std::string& dir);

  // The site's current version (0 for a new site).
  Result<int64_t> Version(const std::string& site);
  // Loads every note's metadata into *vault (then vault->Rebuild()).
  Status LoadVault(const std::string& site, site::Vault* vault);
  Result<std::string> NoteContent(const std::string& site, const std::string& path);
  // Every note's warnings by path, for the notes that have some.
  Result<std::map<std::string, std::vector<std::string>>> LoadWarnings(const std::string& site);
  // The layout fingerprint last recorded for the site ("" if none).
  Result<std::string> LayoutFingerprint(const std::string& site);
  // The site's own strict-line-breaks setting, or nullopt if it never sent one.
  Result<std::optional<bool>> StrictLineBreaks(const std::string& site);
  Result<std::string> PageRecord(const std::string& site, const std::string& url);
  // Every page of the site: (url, record).
  Result<std::vector<PageRow>> AllPages(const std::string& site);
  // Up to `limit` of the site's page URLs after `after` in byte order (""
  // for the first), for an export walking the site in bounded pages.
  Result<std::vector<std::string>> PageUrls(const std::string& site, const std::string& after, int limit);
  // Every stored related list of the site, by note path.
  Result<std::vector<bus::RelatedList>> LoadRelated(const std::string& site);

  // What changed in the site after version `since` (see ManifestDelta).
  // Reads rows through the (site, version) indexes only: its cost follows
  // the change, not the vault. REQUIRES: since >= 0.
  Result<ManifestDelta> ManifestSince(const std::string& site, int64_t since);
  // The site's history id: random hex made on first use and kept, cleared by
  // `folio-ingest restore` (ClearEpochs) so that clients' indexes of the
  // history before the restore are not trusted. Store errors as Status.
  Result<std::string> Epoch(const std::string& site);

  // Writes the whole commit in one transaction and fills in outbox seqs.
  // On failure nothing is written: kNoSpace if the disk is full.
  Status Apply(Commit* commit);
  // For tests and diagnostics: the database connection (see sqlite::Db's
  // TraceStatements and QueryPlan). Same threading rules as the Store.
  sqlite::Db* db() { return db_.get(); }
  // The push recorded under (site, key), or nullopt.
  Result<std::optional<PushRecord>> FindPush(const std::string& site, const std::string& key);
  // Records a push that committed nothing (changed nothing), in a
  // transaction of its own. kConflict if the key is already recorded.
  Status RecordPush(const std::string& site, const PushRecord& record);
  // Staged imports (store_stages.cc): batch bodies, validated by the caller,
  // kept until their stage is committed (Commit::drop_stage), dropped, or
  // unused for the stage timeout (DropStaleStages).
  // Stores `body` as batch `batch` of (site, stage), replacing a batch of
  // that number (a retried upload), and marks the stage used at now_ms.
  // kTooLarge (nothing stored) if the site's staged bytes would exceed
  // max_site_bytes.
  Result<StageInfo> PutStageBatch(const std::string& site, const std::string& stage, int64_t batch,
                                  std::string_view body, int64_t now_ms, int64_t max_site_bytes);
  // The batch bodies of (site, stage) in batch order; empty if it has none.
  Result<std::vector<std::string>> LoadStage(const std::string& site, const std::string& stage);
  // Drops the batches of (site, stage), in a transaction of its own.
  Status DropStage(const std::string& site, const std::string& stage);
  // Drops every stage (of every site) last used before cutoff_ms; returns
  // how many batches went.
  Result<int64_t> DropStaleStages(int64_t cutoff_ms);
  // Bytes of staged batch bodies, all sites together.
  Result<int64_t> StagedBytes();

  // Notes that crashed folio-ingest while they rendered (store_crashed.cc,
  // crashed_notes.h): one row per (site, content hash), with the build that
  // crashed. Adds (or replaces) a row, in a transaction of its own.
  Status AddCrashedNote(const CrashedNoteRow& row);
  // Drops the rows of builds other than `build` (a new build may have fixed
  // the crash), then returns the rest.
  Result<std::vector<CrashedNoteRow>> CrashedNotes(const std::string& build);

  // Whether the database's disk was found full (see above).
  DiskFull& disk() { return disk_; }

  // Outbox rows in seq order, at most `limit`.
  Result<std::vector<OutboxMsg>> PendingOutbox(size_t limit);
  // The page feed's counts (outbox_publisher.h): record bytes of the packs
  // published per site since its last snapshot, the sites past `floor`,
  // and the bytes of a site's page records as stored now.
  Status AddFeedBytes(const std::string& site, int64_t bytes);
  Status ResetFeedBytes(const std::string& site);
  Result<std::vector<std::pair<std::string, int64_t>>> FeedBytesOver(int64_t floor);
  Result<int64_t> PageBytes(const std::string& site);
  Status AckOutbox(int64_t upto_seq);
  Result<int64_t> OutboxSize();

  // Copies the write-ahead log into the database file (SQLite's PASSIVE
  // checkpoint), on this connection. Ingest leaves it to WalCheckpointer's
  // own thread and connection (wal_checkpointer.h); tests call it. The log
  // holds up to kWalPages pages before a commit must do it itself.
  Status Checkpoint();
  // Frees SQLite's page cache (PRAGMA shrink_memory): after a large push it
  // holds ~2 MB the next push re-reads cheaply from the OS's cache.
  Status ReleaseCache();
  static constexpr int kWalPages = 16384;  // 64 MiB of 4 KiB pages
  // When the oldest outbox row was committed (Unix ms; 0 for a row written
  // before that was recorded), or -1 when the outbox is empty.
  Result<int64_t> OutboxOldestMs();
  // Loads every attachment's metadata into *vault (call before LoadVault's Rebuild matters not).
  Status LoadAttachments(const std::string& site, site::Vault* vault);
  // Calls fn with the sha256 of every attachment of every site (each once).
  Status ForEachAttachmentHash(const std::function<void(std::string_view sha256)>& fn);

  // Sites. AddSite and RemoveSite write `outbox` (e.g. the site record's
  // KV put or delete) in the same transaction as the row.
  // kConflict if the name exists or a host is already another site's.
  Status AddSite(const SiteRow& row, std::vector<OutboxMsg> outbox);
  // kNotFound if there is no such site. Keeps the site's notes and pages.
  Status RemoveSite(const std::string& name, std::vector<OutboxMsg> outbox);
  // Every site, by name.
  Result<std::vector<SiteRow>> ListSites();
  // kNotFound if no site has this token hash.
  Result<SiteRow> FindSiteByTokenHash(const std::string& token_sha256);
  // True once another connection (another process) has committed since the
  // previous call; the first call returns false.
  Result<bool> DataVersionChanged();

  // Site settings and readers (store_site_prefs.cc, issue 29). A site
  // without a row has SitePrefs' defaults. Store errors as Status.
  Result<SitePrefs> LoadSitePrefs(const std::string& site);
  // Every site that has settings, by name.
  Result<std::map<std::string, SitePrefs>> AllSitePrefs();
  // In one write transaction: loads the site's settings, lets `edit` change
  // them and stores the result (readers replaced as a whole). An error from
  // `edit` is returned and nothing changes.
  Status UpdateSitePrefs(const std::string& site, const std::function<Status(SitePrefs*)>& edit);

 private:
  Store(std::unique_ptr<sqlite::Db> db, const std::string& dir) : db_(std::move(db)), disk_(dir, "data") {}
  Status ApplyTransaction(Commit* commit);  // store_commit.cc
  // Apply's steps, one per table group. REQUIRES: inside Apply's transaction.
  Status WriteTables(Commit* commit);
  // PutStageBatch without the disk's bookkeeping (store_stages.cc).
  Result<StageInfo> PutStageBatchTransaction(const std::string& site, const std::string& stage, int64_t batch,
                                             std::string_view body, int64_t now_ms, int64_t max_site_bytes);
  // The first column of the row matching (site, key) for a 2-parameter query; nullopt if none.
  Result<std::optional<std::string>> SelectOne(std::string_view sql, const std::string& site, const std::string& key);
  Status Migrate();
  Status MigrateStages();  // store_stages.cc
  Status MigrateCrashed();  // store_crashed.cc
  Status MigrateSitePrefs();  // store_site_prefs.cc
  // REQUIRES: inside a transaction (RemoveSite's).
  Status DeleteSitePrefs(const std::string& site);
  // REQUIRES: inside a transaction.
  Status DropStageRows(const std::string& site, const std::string& stage);
  // The delta columns, tables and indexes (store_delta.cc).
  Status MigrateDelta();
  // Tombstones and their pruning for `c`. REQUIRES: inside Apply's
  // transaction, after the site_version row is written.
  Status RecordDelta(const Commit& c);
  Status InsertOutbox(const std::vector<OutboxMsg>& outbox);
  // Inserts the record and drops the site's records past the retention.
  // REQUIRES: inside a transaction.
  Status InsertPushRecord(const std::string& site, const PushRecord& record);
  std::unique_ptr<sqlite::Db> db_;
  int64_t data_version_ = -1;
  DiskFull disk_;
};

}  // namespace folio::ingest
