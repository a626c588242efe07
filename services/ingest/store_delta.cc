// Store: the manifest delta (versions per row, tombstones of deletions).
#include <algorithm>
#include <string>

#include "folio/core/secret.h"
#include "store.h"

namespace folio::ingest {
namespace {

enum TombstoneKind : int64_t { kNoteTombstone = 1, kAttachmentTombstone = 2 };

Result<std::vector<ManifestEntry>> Entries(sqlite::Db* db, const char* sql, const std::string& site, int64_t since) {
  auto q = db->Prepare(sql);
  if (!q.ok()) return q.status();
  q->Bind(1, site).Bind(2, since);
  std::vector<ManifestEntry> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back({std::string(q->Text(0)), std::string(q->Text(1)), std::string(q->Text(2))});
  }
}

}  // namespace

Status Store::MigrateDelta() {
  // Attachments written before this column have version 0; deletions before
  // the tombstone table are unknown: the floor starts at each site's version,
  // so a delta since an earlier version is "too old" (the client takes the
  // full manifest once). ALTER fails harmlessly when the column exists.
  (void)db_->Exec("ALTER TABLE attachments ADD COLUMN version INTEGER NOT NULL DEFAULT 0");
  (void)db_->Exec("ALTER TABLE site_version ADD COLUMN epoch TEXT NOT NULL DEFAULT ''");
  if (db_->Exec("ALTER TABLE site_version ADD COLUMN deleted_floor INTEGER NOT NULL DEFAULT 0").ok()) {
    if (Status s = db_->Exec("UPDATE site_version SET deleted_floor=version"); !s.ok()) return s;
  }
  return db_->Exec("CREATE INDEX IF NOT EXISTS attachments_by_version ON attachments(site, version)");
}

Status Store::RecordDelta(const Commit& c) {
  auto clear = db_->Prepare("DELETE FROM deleted WHERE site=? AND path=?");
  auto put = db_->Prepare("INSERT OR REPLACE INTO deleted(site,path,kind,version) VALUES(?,?,?,?)");
  if (!clear.ok()) return clear.status();
  if (!put.ok()) return put.status();
  for (const auto& n : c.notes) {
    if (!n.content_changed) continue;
    if (Status s = clear->Bind(1, c.site).Bind(2, n.meta.path).Run(); !s.ok()) return s;
  }
  for (const auto& a : c.attachments) {
    if (Status s = clear->Bind(1, c.site).Bind(2, a.first.path).Run(); !s.ok()) return s;
  }
  for (const auto& p : c.deleted_notes) {
    if (Status s = put->Bind(1, c.site).Bind(2, p).Bind(3, int64_t{kNoteTombstone}).Bind(4, c.version).Run(); !s.ok()) {
      return s;
    }
  }
  for (const auto& p : c.deleted_attachments) {
    Status s = put->Bind(1, c.site).Bind(2, p).Bind(3, int64_t{kAttachmentTombstone}).Bind(4, c.version).Run();
    if (!s.ok()) return s;
  }
  const int64_t floor = c.version - kTombstoneVersions;
  if (floor <= 0) return Status::Ok();
  auto prune = db_->Prepare("DELETE FROM deleted WHERE site=? AND version<=?");
  auto raise = db_->Prepare("UPDATE site_version SET deleted_floor=max(deleted_floor, ?) WHERE site=?");
  if (!prune.ok()) return prune.status();
  if (!raise.ok()) return raise.status();
  if (Status s = prune->Bind(1, c.site).Bind(2, floor).Run(); !s.ok()) return s;
  return raise->Bind(1, floor).Bind(2, c.site).Run();
}

Result<std::string> Store::Epoch(const std::string& site) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto q = db_->Prepare("SELECT epoch FROM site_version WHERE site=?");
    if (!q.ok()) return q.status();
    q->Bind(1, site);
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (*row && !q->Text(0).empty()) return std::string(q->Text(0));
    if (attempt == 1) break;
    Result<std::string> fresh = RandomHex(8);
    if (!fresh.ok()) return fresh.status();
    // A site without pushes gets its row (version 0) here.
    auto put = db_->Prepare(
        "INSERT INTO site_version(site,version,epoch) VALUES(?,0,?) "
        "ON CONFLICT(site) DO UPDATE SET epoch=excluded.epoch WHERE site_version.epoch=''");
    if (!put.ok()) return put.status();
    if (Status s = put->Bind(1, site).Bind(2, *fresh).Run(); !s.ok()) return s;
  }
  return Status::Internal("cannot record the site's epoch");
}

Result<ManifestDelta> Store::ManifestSince(const std::string& site, int64_t since) {
  ManifestDelta d;  // sorted here: an ORDER BY path could lead the planner to the (site, path) index
  auto floor = db_->Prepare("SELECT deleted_floor FROM site_version WHERE site=?");
  if (!floor.ok()) return floor.status();
  floor->Bind(1, site);
  auto row = floor->Step();
  if (!row.ok()) return row.status();
  if (*row && since < floor->Int(0)) {
    d.too_old = true;
    return d;
  }
  auto notes = Entries(db_.get(), kNotesSinceSql, site, since);
  if (!notes.ok()) return notes.status();
  d.notes = std::move(notes).value();
  auto atts = Entries(db_.get(), kAttachmentsSinceSql, site, since);
  if (!atts.ok()) return atts.status();
  d.attachments = std::move(atts).value();
  auto del = db_->Prepare(kDeletedSinceSql);
  if (!del.ok()) return del.status();
  del->Bind(1, site).Bind(2, since);
  for (;;) {
    auto r = del->Step();
    if (!r.ok()) return r.status();
    if (!*r) break;
    d.deleted.emplace_back(del->Text(0));
  }
  auto by_path = [](const ManifestEntry& a, const ManifestEntry& b) { return a.path < b.path; };
  std::sort(d.notes.begin(), d.notes.end(), by_path);
  std::sort(d.attachments.begin(), d.attachments.end(), by_path);
  std::sort(d.deleted.begin(), d.deleted.end());
  return d;
}

}  // namespace folio::ingest
