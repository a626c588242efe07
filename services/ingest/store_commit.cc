// Store::Apply (store.h): a push's Commit written in one transaction, one
// named step per table group, in the order below. Every step REQUIRES the
// transaction open; a failed step returns its error and the guard rolls the
// whole commit back.
#include "folio/core/time.h"
#include "folio/sqlite/transaction.h"
#include "store.h"
#include "store_internal.h"

namespace folio::ingest {
namespace {

using store_internal::EncodeRelatedList;
using store_internal::Join;

constexpr const char* kUpsertNoteSql =
    "INSERT INTO notes(site,path,url,sha256,title,targets,aliases,warnings,updated_ms,version,content,"
    "embeds,tags,permalink,published,anchors,created_ms,date_ms,modified_ms) "
    "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(site,path) DO UPDATE SET "
    "url=excluded.url, sha256=excluded.sha256, title=excluded.title, targets=excluded.targets, "
    "aliases=excluded.aliases, warnings=excluded.warnings, updated_ms=excluded.updated_ms, "
    "version=excluded.version, content=excluded.content, embeds=excluded.embeds, tags=excluded.tags, "
    "permalink=excluded.permalink, published=excluded.published, anchors=excluded.anchors, "
    "created_ms=CASE WHEN notes.created_ms>0 THEN notes.created_ms ELSE excluded.created_ms END, "
    "date_ms=excluded.date_ms, modified_ms=excluded.modified_ms";

// notes.published: 0 unpublished, 1 public, kPublishedPrivate private.
int64_t PublishedColumn(const site::NoteMeta& m) {
  if (!m.published) return 0;
  return m.private_note ? store_internal::kPublishedPrivate : 1;
}

// A changed note's whole row.
Status UpsertNote(sqlite::Stmt* upsert, const std::string& site, const NoteRow& n) {
  const auto& m = n.meta;
  return upsert->Bind(1, site).Bind(2, m.path).Bind(3, m.url).Bind(4, m.sha256).Bind(5, m.title)
      .Bind(6, Join(m.targets)).Bind(7, Join(m.aliases)).Bind(8, Join(n.warnings))
      .Bind(9, m.updated_ms).Bind(10, m.version).Bind(11, n.content).Bind(12, Join(m.embeds))
      .Bind(13, Join(m.tags)).Bind(14, m.permalink).Bind(15, PublishedColumn(m))
      .Bind(16, Join(m.anchors)).Bind(17, m.created_ms).Bind(18, m.date_ms).Bind(19, m.modified_ms)
      .Run();
}

// notes: changed rows upserted, re-rendered ones get their warnings and
// URL only, deleted ones go.
Status WriteNotes(sqlite::Db* db, const Commit& c) {
  auto upsert = db->Prepare(kUpsertNoteSql);
  auto rerendered = db->Prepare("UPDATE notes SET warnings=?, url=? WHERE site=? AND path=?");
  auto del = db->Prepare("DELETE FROM notes WHERE site=? AND path=?");
  for (auto* st : {&upsert, &rerendered, &del}) {
    if (!st->ok()) return st->status();
  }
  for (const auto& n : c.notes) {
    Status s = n.content_changed
                   ? UpsertNote(&*upsert, c.site, n)
                   : rerendered->Bind(1, Join(n.warnings)).Bind(2, n.meta.url).Bind(3, c.site).Bind(4, n.meta.path).Run();
    if (!s.ok()) return s;
  }
  for (const auto& p : c.deleted_notes) {
    if (Status s = del->Bind(1, c.site).Bind(2, p).Run(); !s.ok()) return s;
  }
  return Status::Ok();
}

// pages: deletions first, then the puts (a page may be deleted and put
// back by one commit).
Status WritePages(sqlite::Db* db, const Commit& c) {
  auto put = db->Prepare("INSERT OR REPLACE INTO pages(site,url,record) VALUES(?,?,?)");
  auto del = db->Prepare("DELETE FROM pages WHERE site=? AND url=?");
  if (!put.ok()) return put.status();
  if (!del.ok()) return del.status();
  for (const auto& u : c.deleted_pages) {
    if (Status s = del->Bind(1, c.site).Bind(2, u).Run(); !s.ok()) return s;
  }
  for (const auto& p : c.pages) {
    if (Status s = put->Bind(1, c.site).Bind(2, p.url).BindBlob(3, p.record).Run(); !s.ok()) return s;
  }
  return Status::Ok();
}

// Whether the outbox holds no row yet (before this commit's).
Result<bool> OutboxEmpty(sqlite::Db* db) {
  auto any = db->Prepare("SELECT 1 FROM outbox LIMIT 1");
  if (!any.ok()) return any.status();
  auto row = any->Step();
  if (!row.ok()) return row.status();
  return !*row;
}

// outbox: the commit's messages in order, each given its seq; a page's put
// names its row in `pages` (written by WritePages) instead of storing the
// record a second time. Sets c->outbox_was_empty.
Status WriteOutbox(sqlite::Db* db, Commit* c) {
  if (c->outbox.empty()) return Status::Ok();
  Result<bool> empty = OutboxEmpty(db);
  if (!empty.ok()) return empty.status();
  c->outbox_was_empty = *empty;
  auto put = db->Prepare(
      "INSERT INTO outbox(kind,subject,payload,msg_id,created_ms,page_site,page_url) VALUES(?,?,?,?,?,?,?)");
  if (!put.ok()) return put.status();
  static const std::string kNone;
  const int64_t now_ms = NowUnixMs();
  for (auto& m : c->outbox) {
    if (m.page >= static_cast<int64_t>(c->pages.size())) return Status::Internal("outbox refers to a missing page");
    const bool page = m.page >= 0;
    const std::string& url = page ? c->pages[static_cast<size_t>(m.page)].url : kNone;
    Status s = put->Bind(1, int64_t{page ? OutboxMsg::kPagePut : m.kind}).Bind(2, m.subject)
                   .BindBlob(3, page ? kNone : m.payload).Bind(4, m.msg_id).Bind(5, now_ms)
                   .Bind(6, page ? c->site : kNone).Bind(7, url).Run();
    if (!s.ok()) return s;
    m.seq = db->LastInsertRowId();
  }
  return Status::Ok();
}

// attachments: deletions, then the puts, stamped with the commit's version.
Status WriteAttachments(sqlite::Db* db, const Commit& c) {
  if (c.attachments.empty() && c.deleted_attachments.empty()) return Status::Ok();
  auto put = db->Prepare("INSERT OR REPLACE INTO attachments(site,path,sha256,url,data,version) VALUES(?,?,?,?,?,?)");
  auto del = db->Prepare("DELETE FROM attachments WHERE site=? AND path=?");
  if (!put.ok()) return put.status();
  if (!del.ok()) return del.status();
  for (const auto& p : c.deleted_attachments) {
    if (Status s = del->Bind(1, c.site).Bind(2, p).Run(); !s.ok()) return s;
  }
  for (const auto& [m, bytes] : c.attachments) {
    Status s = put->Bind(1, c.site).Bind(2, m.path).Bind(3, m.sha256).Bind(4, m.url).BindBlob(5, bytes)
                   .Bind(6, c.version).Run();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// related: each list replaces the note's; an empty one deletes it.
Status WriteRelated(sqlite::Db* db, const Commit& c) {
  if (c.related.empty()) return Status::Ok();
  auto put = db->Prepare("INSERT OR REPLACE INTO related(site,path,list) VALUES(?,?,?)");
  auto del = db->Prepare("DELETE FROM related WHERE site=? AND path=?");
  if (!put.ok()) return put.status();
  if (!del.ok()) return del.status();
  for (const auto& l : c.related) {
    Status s = l.related.empty() ? del->Bind(1, c.site).Bind(2, l.path).Run()
                                 : put->Bind(1, c.site).Bind(2, l.path).Bind(3, EncodeRelatedList(l.related)).Run();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// site_layout and site_settings, when the commit sets them.
Status WriteSiteSettings(sqlite::Db* db, const Commit& c) {
  if (!c.layout_fingerprint.empty()) {
    auto put = db->Prepare("INSERT OR REPLACE INTO site_layout(site, fingerprint) VALUES(?,?)");
    if (!put.ok()) return put.status();
    if (Status s = put->Bind(1, c.site).Bind(2, c.layout_fingerprint).Run(); !s.ok()) return s;
  }
  if (c.strict_line_breaks) {
    auto put = db->Prepare("INSERT OR REPLACE INTO site_settings(site, strict_line_breaks) VALUES(?,?)");
    if (!put.ok()) return put.status();
    const int64_t strict = *c.strict_line_breaks ? 1 : 0;
    if (Status s = put->Bind(1, c.site).Bind(2, strict).Run(); !s.ok()) return s;
  }
  return Status::Ok();
}

// site_version: the commit's version (a new site gets its row).
Status WriteVersion(sqlite::Db* db, const Commit& c) {
  auto put = db->Prepare(
      "INSERT INTO site_version(site,version) VALUES(?,?) ON CONFLICT(site) DO UPDATE SET version=excluded.version");
  if (!put.ok()) return put.status();
  return put->Bind(1, c.site).Bind(2, c.version).Run();
}

}  // namespace

Status Store::Apply(Commit* c) {
  Status s = ApplyTransaction(c);
  disk_.Observe(s);
  return s;
}

Status Store::ApplyTransaction(Commit* c) {
  auto tx = sqlite::Transaction::Begin(db_.get());
  if (!tx.ok()) return tx.status();
  const int64_t changes_before = db_->TotalChanges();
  if (Status s = WriteTables(c); !s.ok()) return s;
  c->rows_written = db_->TotalChanges() - changes_before;
  return tx->Commit();
}

Status Store::WriteTables(Commit* c) {
  sqlite::Db* db = db_.get();
  if (Status s = WriteNotes(db, *c); !s.ok()) return s;
  if (Status s = WritePages(db, *c); !s.ok()) return s;
  if (Status s = WriteOutbox(db, c); !s.ok()) return s;
  if (Status s = WriteAttachments(db, *c); !s.ok()) return s;
  if (Status s = WriteRelated(db, *c); !s.ok()) return s;
  if (Status s = WriteSiteSettings(db, *c); !s.ok()) return s;
  if (c->push_record) {
    if (Status s = InsertPushRecord(c->site, *c->push_record); !s.ok()) return s;
  }
  if (!c->drop_stage.empty()) {
    if (Status s = DropStageRows(c->site, c->drop_stage); !s.ok()) return s;
  }
  if (Status s = WriteVersion(db, *c); !s.ok()) return s;
  return RecordDelta(*c);  // after the site_version row: it may raise its floor
}

}  // namespace folio::ingest
