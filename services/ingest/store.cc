#include "store.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>

#include "folio/core/time.h"

namespace folio::ingest {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += '\n';
    s += v[i];
  }
  return s;
}

std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> v;
  while (!s.empty()) {
    size_t nl = s.find('\n');
    v.emplace_back(s.substr(0, nl));
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
  return v;
}

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS site_version(site TEXT PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS attachments(
  site TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL, url TEXT NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY(site, path));
CREATE TABLE IF NOT EXISTS notes(
  site TEXT NOT NULL, path TEXT NOT NULL, url TEXT NOT NULL, sha256 TEXT NOT NULL,
  title TEXT NOT NULL, targets TEXT NOT NULL, aliases TEXT NOT NULL, warnings TEXT NOT NULL,
  updated_ms INTEGER NOT NULL, version INTEGER NOT NULL, content TEXT NOT NULL,
  embeds TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '', permalink TEXT NOT NULL DEFAULT '',
  published INTEGER NOT NULL DEFAULT 1, anchors TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(site, path));
CREATE TABLE IF NOT EXISTS pages(
  site TEXT NOT NULL, url TEXT NOT NULL, record BLOB NOT NULL, PRIMARY KEY(site, url));
CREATE TABLE IF NOT EXISTS outbox(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, kind INTEGER NOT NULL, subject TEXT NOT NULL,
  payload BLOB NOT NULL, msg_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS related(
  site TEXT NOT NULL, path TEXT NOT NULL, list TEXT NOT NULL, PRIMARY KEY(site, path));
CREATE TABLE IF NOT EXISTS site_layout(site TEXT PRIMARY KEY, fingerprint TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS site_settings(site TEXT PRIMARY KEY, strict_line_breaks INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS push_keys(
  site TEXT NOT NULL, key TEXT NOT NULL, body_sha256 TEXT NOT NULL, reply TEXT NOT NULL,
  created_ms INTEGER NOT NULL, PRIMARY KEY(site, key));
CREATE INDEX IF NOT EXISTS push_keys_by_age ON push_keys(site, created_ms);
CREATE TABLE IF NOT EXISTS deleted(
  site TEXT NOT NULL, path TEXT NOT NULL, kind INTEGER NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY(site, path));
CREATE INDEX IF NOT EXISTS deleted_by_version ON deleted(site, version);
CREATE INDEX IF NOT EXISTS notes_by_version ON notes(site, version);
CREATE TABLE IF NOT EXISTS sites(
  name TEXT PRIMARY KEY, title TEXT NOT NULL, hosts TEXT NOT NULL, token_sha256 TEXT NOT NULL UNIQUE,
  created_ms INTEGER NOT NULL);
)sql";

// related.list: one "path\tscore" line per entry, best first. Vault paths
// hold no control characters (CheckVaultPath), so '\t' and '\n' are free.
std::string EncodeRelatedList(const std::vector<bus::RelatedEntry>& entries) {
  std::string s;
  char num[32];
  for (const auto& e : entries) {
    if (!s.empty()) s += '\n';
    s += e.path;
    s += '\t';
    auto r = std::to_chars(num, num + sizeof num, e.score);
    s.append(num, r.ec == std::errc() ? r.ptr : num);
  }
  return s;
}

std::vector<bus::RelatedEntry> DecodeRelatedList(std::string_view s) {
  std::vector<bus::RelatedEntry> out;
  for (const std::string& line : Split(s)) {
    bus::RelatedEntry e;
    size_t tab = line.rfind('\t');
    e.path = line.substr(0, tab);
    if (tab != std::string::npos) std::from_chars(line.data() + tab + 1, line.data() + line.size(), e.score);
    out.push_back(std::move(e));
  }
  return out;
}

constexpr const char* kSiteColumns = "name, title, hosts, token_sha256, created_ms";

SiteRow ReadSiteRow(const sqlite::Stmt& q) {
  return SiteRow{std::string(q.Text(0)), std::string(q.Text(1)), Split(q.Text(2)), std::string(q.Text(3)), q.Int(4)};
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Unavailable("cannot create data directory " + dir + ": " + ec.message());
  auto db = sqlite::Db::Open(dir + "/ingest.db");
  if (!db.ok()) return db.status();
  std::unique_ptr<Store> s(new Store(std::move(*db), dir));
  if (Status st = s->Migrate(); !st.ok()) return st;
  return s;
}

Status Store::Migrate() {
  // SQLite checkpoints every 1,000 pages by default, inside the commit that
  // crosses the mark: two fsyncs and a copy of the log on a push's path
  // (about a third of a 1,000-note push's commit). The idle tick checkpoints
  // instead (Checkpoint); the log file is truncated back to its limit after.
  const std::string wal = "PRAGMA wal_autocheckpoint=" + std::to_string(kWalPages) +
                          "; PRAGMA journal_size_limit=" + std::to_string(int64_t{kWalPages} * 4096) + ";";
  if (Status s = db_->Exec(wal); !s.ok()) return s;
  if (Status s = db_->Exec(kSchema); !s.ok()) return s;
  // Columns added after the first release; ALTER fails harmlessly when present.
  for (const char* col : {"embeds TEXT NOT NULL DEFAULT ''", "tags TEXT NOT NULL DEFAULT ''",
                          "permalink TEXT NOT NULL DEFAULT ''", "published INTEGER NOT NULL DEFAULT 1",
                          "anchors TEXT NOT NULL DEFAULT ''", "created_ms INTEGER NOT NULL DEFAULT 0",
                          "date_ms INTEGER NOT NULL DEFAULT 0", "modified_ms INTEGER NOT NULL DEFAULT 0"}) {
    (void)db_->Exec(std::string("ALTER TABLE notes ADD COLUMN ") + col);
  }
  // When each outbox row was committed (Unix ms; 0 in rows older than the
  // column), for folio_ingest_outbox_oldest_seconds.
  (void)db_->Exec("ALTER TABLE outbox ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0");
  // The page a kPagePut row publishes (its record stays in `pages` only).
  (void)db_->Exec("ALTER TABLE outbox ADD COLUMN page_site TEXT NOT NULL DEFAULT ''");
  (void)db_->Exec("ALTER TABLE outbox ADD COLUMN page_url TEXT NOT NULL DEFAULT ''");
  if (Status s = MigrateStages(); !s.ok()) return s;
  if (Status s = MigrateCrashed(); !s.ok()) return s;
  return MigrateDelta();
}

Result<int64_t> Store::Version(const std::string& site) {
  auto q = db_->Prepare("SELECT version FROM site_version WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return *row ? q->Int(0) : int64_t{0};
}

Status Store::LoadVault(const std::string& site, site::Vault* vault) {
  auto q = db_->Prepare(
      "SELECT path, url, sha256, title, targets, aliases, updated_ms, version, embeds, tags, permalink, published, "
      "anchors, created_ms, date_ms, modified_ms "
      "FROM notes WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    site::NoteMeta m;
    m.path = q->Text(0);
    m.url = q->Text(1);
    m.sha256 = q->Text(2);
    m.title = q->Text(3);
    m.targets = Split(q->Text(4));
    m.aliases = Split(q->Text(5));
    m.updated_ms = q->Int(6);
    m.version = q->Int(7);
    m.embeds = Split(q->Text(8));
    m.tags = Split(q->Text(9));
    m.permalink = q->Text(10);
    m.published = q->Int(11) != 0;
    m.anchors = Split(q->Text(12));
    m.created_ms = q->Int(13);
    m.date_ms = q->Int(14);
    m.modified_ms = q->Int(15);
    vault->Load(std::move(m));
  }
  vault->Rebuild();
  return Status::Ok();
}

Result<std::optional<std::string>> Store::SelectOne(std::string_view sql, const std::string& site,
                                                    const std::string& key) {
  auto q = db_->Prepare(sql);
  if (!q.ok()) return q.status();
  q->Bind(1, site).Bind(2, key);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(q->Blob(0)));  // blob bytes work for text columns too
}

Result<std::string> Store::NoteContent(const std::string& site, const std::string& path) {
  auto v = SelectOne("SELECT content FROM notes WHERE site=? AND path=?", site, path);
  if (!v.ok()) return v.status();
  if (!*v) return Status::NotFound("no note " + path);
  return std::move(**v);
}

Result<std::string> Store::LayoutFingerprint(const std::string& site) {
  auto q = db_->Prepare("SELECT fingerprint FROM site_layout WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return *row ? std::string(q->Text(0)) : std::string();
}

Result<std::optional<bool>> Store::StrictLineBreaks(const std::string& site) {
  auto q = db_->Prepare("SELECT strict_line_breaks FROM site_settings WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return *row ? std::optional<bool>(q->Int(0) != 0) : std::nullopt;
}

Result<std::map<std::string, std::vector<std::string>>> Store::LoadWarnings(const std::string& site) {
  auto q = db_->Prepare("SELECT path, warnings FROM notes WHERE site=? AND warnings != ''");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  std::map<std::string, std::vector<std::string>> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.emplace(q->Text(0), Split(q->Text(1)));
  }
  return out;
}

Result<std::string> Store::PageRecord(const std::string& site, const std::string& url) {
  auto v = SelectOne("SELECT record FROM pages WHERE site=? AND url=?", site, url);
  if (!v.ok()) return v.status();
  if (!*v) return Status::NotFound("no page " + url);
  return std::move(**v);
}

Result<std::vector<PageRow>> Store::AllPages(const std::string& site) {
  auto q = db_->Prepare("SELECT url, record FROM pages WHERE site=? ORDER BY url");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  std::vector<PageRow> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({std::string(q->Text(0)), std::string(q->Blob(1))});
  }
  return out;
}

Result<std::vector<std::string>> Store::PageUrls(const std::string& site, const std::string& after, int limit) {
  auto q = db_->Prepare("SELECT url FROM pages WHERE site=? AND url>? ORDER BY url LIMIT ?");
  if (!q.ok()) return q.status();
  q->Bind(1, site).Bind(2, after).Bind(3, int64_t{limit});
  std::vector<std::string> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.emplace_back(q->Text(0));
  }
  return out;
}

Result<std::vector<bus::RelatedList>> Store::LoadRelated(const std::string& site) {
  auto q = db_->Prepare("SELECT path, list FROM related WHERE site=? ORDER BY path");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  std::vector<bus::RelatedList> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({std::string(q->Text(0)), DecodeRelatedList(q->Text(1))});
  }
  return out;
}

Status Store::Apply(Commit* c) {
  Status s = ApplyTransaction(c);
  disk_.Observe(s);
  return s;
}

Status Store::ApplyTransaction(Commit* c) {
  if (Status s = db_->Begin(); !s.ok()) return s;
  const int64_t changes_before = db_->TotalChanges();
  auto fail = [&](Status s) {
    db_->Rollback();
    return s;
  };
  auto upsert = db_->Prepare(
      "INSERT INTO notes(site,path,url,sha256,title,targets,aliases,warnings,updated_ms,version,content,"
      "embeds,tags,permalink,published,anchors,created_ms,date_ms,modified_ms) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(site,path) DO UPDATE SET "
      "url=excluded.url, sha256=excluded.sha256, title=excluded.title, targets=excluded.targets, "
      "aliases=excluded.aliases, warnings=excluded.warnings, updated_ms=excluded.updated_ms, "
      "version=excluded.version, content=excluded.content, embeds=excluded.embeds, tags=excluded.tags, "
      "permalink=excluded.permalink, published=excluded.published, anchors=excluded.anchors, "
      "created_ms=CASE WHEN notes.created_ms>0 THEN notes.created_ms ELSE excluded.created_ms END, "
      "date_ms=excluded.date_ms, modified_ms=excluded.modified_ms");
  auto rerendered = db_->Prepare("UPDATE notes SET warnings=?, url=? WHERE site=? AND path=?");
  auto del_note = db_->Prepare("DELETE FROM notes WHERE site=? AND path=?");
  auto put_page = db_->Prepare("INSERT OR REPLACE INTO pages(site,url,record) VALUES(?,?,?)");
  auto del_page = db_->Prepare("DELETE FROM pages WHERE site=? AND url=?");
  auto outbox = db_->Prepare(
      "INSERT INTO outbox(kind,subject,payload,msg_id,created_ms,page_site,page_url) VALUES(?,?,?,?,?,?,?)");
  auto version = db_->Prepare(
      "INSERT INTO site_version(site,version) VALUES(?,?) ON CONFLICT(site) DO UPDATE SET version=excluded.version");
  for (auto* st : {&upsert, &rerendered, &del_note, &put_page, &del_page, &outbox, &version}) {
    if (!st->ok()) return fail(st->status());
  }
  for (const auto& n : c->notes) {
    Status s;
    if (n.content_changed) {
      const auto& m = n.meta;
      s = upsert->Bind(1, c->site).Bind(2, m.path).Bind(3, m.url).Bind(4, m.sha256).Bind(5, m.title)
              .Bind(6, Join(m.targets)).Bind(7, Join(m.aliases)).Bind(8, Join(n.warnings))
              .Bind(9, m.updated_ms).Bind(10, m.version).Bind(11, n.content).Bind(12, Join(m.embeds))
              .Bind(13, Join(m.tags)).Bind(14, m.permalink).Bind(15, int64_t{m.published ? 1 : 0})
              .Bind(16, Join(m.anchors)).Bind(17, m.created_ms).Bind(18, m.date_ms).Bind(19, m.modified_ms)
              .Run();
    } else {
      s = rerendered->Bind(1, Join(n.warnings)).Bind(2, n.meta.url).Bind(3, c->site).Bind(4, n.meta.path).Run();
    }
    if (!s.ok()) return fail(s);
  }
  for (const auto& p : c->deleted_notes) {
    if (Status s = del_note->Bind(1, c->site).Bind(2, p).Run(); !s.ok()) return fail(s);
  }
  for (const auto& u : c->deleted_pages) {
    if (Status s = del_page->Bind(1, c->site).Bind(2, u).Run(); !s.ok()) return fail(s);
  }
  for (const auto& p : c->pages) {
    if (Status s = put_page->Bind(1, c->site).Bind(2, p.url).BindBlob(3, p.record).Run(); !s.ok()) return fail(s);
  }
  const int64_t now_ms = NowUnixMs();
  if (!c->outbox.empty()) {
    auto any = db_->Prepare("SELECT 1 FROM outbox LIMIT 1");
    if (!any.ok()) return fail(any.status());
    auto row = any->Step();
    if (!row.ok()) return fail(row.status());
    c->outbox_was_empty = !*row;
  }
  static const std::string kNone;
  for (auto& m : c->outbox) {
    if (m.page >= static_cast<int64_t>(c->pages.size())) return fail(Status::Internal("outbox refers to a missing page"));
    // A page's put names its row in `pages` (written above) instead of
    // storing the record a second time.
    const bool page = m.page >= 0;
    const std::string& url = page ? c->pages[static_cast<size_t>(m.page)].url : kNone;
    Status s = outbox->Bind(1, int64_t{page ? OutboxMsg::kPagePut : m.kind}).Bind(2, m.subject)
                   .BindBlob(3, page ? kNone : m.payload).Bind(4, m.msg_id).Bind(5, now_ms)
                   .Bind(6, page ? c->site : kNone).Bind(7, url).Run();
    if (!s.ok()) return fail(s);
    m.seq = db_->LastInsertRowId();
  }
  if (!c->attachments.empty() || !c->deleted_attachments.empty()) {
    auto put = db_->Prepare("INSERT OR REPLACE INTO attachments(site,path,sha256,url,data,version) VALUES(?,?,?,?,?,?)");
    auto del = db_->Prepare("DELETE FROM attachments WHERE site=? AND path=?");
    if (!put.ok()) return fail(put.status());
    if (!del.ok()) return fail(del.status());
    for (const auto& p : c->deleted_attachments) {
      if (Status s = del->Bind(1, c->site).Bind(2, p).Run(); !s.ok()) return fail(s);
    }
    for (const auto& [m, bytes] : c->attachments) {
      Status s = put->Bind(1, c->site).Bind(2, m.path).Bind(3, m.sha256).Bind(4, m.url).BindBlob(5, bytes)
                     .Bind(6, c->version).Run();
      if (!s.ok()) return fail(s);
    }
  }
  if (!c->related.empty()) {
    auto put = db_->Prepare("INSERT OR REPLACE INTO related(site,path,list) VALUES(?,?,?)");
    auto del = db_->Prepare("DELETE FROM related WHERE site=? AND path=?");
    if (!put.ok()) return fail(put.status());
    if (!del.ok()) return fail(del.status());
    for (const auto& l : c->related) {
      Status s = l.related.empty() ? del->Bind(1, c->site).Bind(2, l.path).Run()
                                   : put->Bind(1, c->site).Bind(2, l.path).Bind(3, EncodeRelatedList(l.related)).Run();
      if (!s.ok()) return fail(s);
    }
  }
  if (!c->layout_fingerprint.empty()) {
    auto put = db_->Prepare("INSERT OR REPLACE INTO site_layout(site, fingerprint) VALUES(?,?)");
    if (!put.ok()) return fail(put.status());
    if (Status s = put->Bind(1, c->site).Bind(2, c->layout_fingerprint).Run(); !s.ok()) return fail(s);
  }
  if (c->strict_line_breaks) {
    auto put = db_->Prepare("INSERT OR REPLACE INTO site_settings(site, strict_line_breaks) VALUES(?,?)");
    if (!put.ok()) return fail(put.status());
    const int64_t strict = *c->strict_line_breaks ? 1 : 0;
    if (Status s = put->Bind(1, c->site).Bind(2, strict).Run(); !s.ok()) return fail(s);
  }
  if (c->push_record) {
    if (Status s = InsertPushRecord(c->site, *c->push_record); !s.ok()) return fail(s);
  }
  if (!c->drop_stage.empty()) {
    if (Status s = DropStageRows(c->site, c->drop_stage); !s.ok()) return fail(s);
  }
  if (Status s = version->Bind(1, c->site).Bind(2, c->version).Run(); !s.ok()) return fail(s);
  if (Status s = RecordDelta(*c); !s.ok()) return fail(s);
  c->rows_written = db_->TotalChanges() - changes_before;
  if (Status s = db_->Commit(); !s.ok()) return fail(s);
  return Status::Ok();
}

Status Store::InsertPushRecord(const std::string& site, const PushRecord& r) {
  auto put = db_->Prepare("INSERT INTO push_keys(site,key,body_sha256,reply,created_ms) VALUES(?,?,?,?,?)");
  if (!put.ok()) return put.status();
  Status s = put->Bind(1, site).Bind(2, r.key).Bind(3, r.body_sha256).Bind(4, r.reply).Bind(5, r.created_ms).Run();
  if (s.code() == Code::kConflict || (!s.ok() && s.message().find("UNIQUE") != std::string::npos)) {
    return Status(Code::kConflict, "Idempotency-Key " + r.key + " is already recorded");
  }
  if (!s.ok()) return s;
  auto old = db_->Prepare("DELETE FROM push_keys WHERE site=? AND created_ms<?");
  if (!old.ok()) return old.status();
  if (s = old->Bind(1, site).Bind(2, r.created_ms - kPushRecordTtlMs).Run(); !s.ok()) return s;
  auto extra = db_->Prepare(
      "DELETE FROM push_keys WHERE rowid IN (SELECT rowid FROM push_keys WHERE site=? "
      "ORDER BY created_ms DESC, rowid DESC LIMIT -1 OFFSET ?)");
  if (!extra.ok()) return extra.status();
  return extra->Bind(1, site).Bind(2, kPushRecordsPerSite).Run();
}

Result<std::optional<PushRecord>> Store::FindPush(const std::string& site, const std::string& key) {
  auto q = db_->Prepare("SELECT body_sha256, reply, created_ms FROM push_keys WHERE site=? AND key=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site).Bind(2, key);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<PushRecord>();
  return std::optional<PushRecord>(PushRecord{key, std::string(q->Text(0)), std::string(q->Text(1)), q->Int(2)});
}

Status Store::RecordPush(const std::string& site, const PushRecord& record) {
  if (Status s = db_->Begin(); !s.ok()) return s;
  if (Status s = InsertPushRecord(site, record); !s.ok()) {
    db_->Rollback();
    return s;
  }
  if (Status s = db_->Commit(); !s.ok()) {
    db_->Rollback();
    return s;
  }
  return Status::Ok();
}

Status Store::Checkpoint() { return db_->Exec("PRAGMA wal_checkpoint(PASSIVE)"); }

Status Store::ReleaseCache() { return db_->Exec("PRAGMA shrink_memory"); }

Result<std::vector<OutboxMsg>> Store::PendingOutbox(size_t limit) {
  // A kPagePut publishes the page's record as it is now: a newer one if the
  // page changed since (a later row puts it again), none if it is gone (a
  // later row deletes it). Either way the bucket ends where the store is.
  auto q = db_->Prepare(
      "SELECT o.seq, o.kind, o.subject, o.payload, o.msg_id, p.record, p.record IS NOT NULL FROM outbox o "
      "LEFT JOIN pages p ON o.kind=4 AND p.site=o.page_site AND p.url=o.page_url ORDER BY o.seq LIMIT ?");
  if (!q.ok()) return q.status();
  q->Bind(1, static_cast<int64_t>(limit));
  std::vector<OutboxMsg> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    OutboxMsg m{q->Int(0), static_cast<int>(q->Int(1)), std::string(q->Text(2)), std::string(q->Blob(3)),
                std::string(q->Text(4))};
    if (m.kind == OutboxMsg::kPagePut && q->Int(6) != 0) {
      m.kind = OutboxMsg::kKvPut;
      m.payload = std::string(q->Blob(5));
    }
    out.push_back(std::move(m));
  }
  return out;
}

Status Store::AckOutbox(int64_t upto_seq) {
  auto q = db_->Prepare("DELETE FROM outbox WHERE seq <= ?");
  if (!q.ok()) return q.status();
  return q->Bind(1, upto_seq).Run();
}

Result<int64_t> Store::OutboxSize() {
  auto q = db_->Prepare("SELECT count(*) FROM outbox");
  if (!q.ok()) return q.status();
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return q->Int(0);
}

Result<int64_t> Store::OutboxOldestMs() {
  // The oldest row is the first by seq (the primary key): one index probe.
  auto q = db_->Prepare("SELECT created_ms FROM outbox ORDER BY seq LIMIT 1");
  if (!q.ok()) return q.status();
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return *row ? q->Int(0) : int64_t{-1};
}

Status Store::InsertOutbox(const std::vector<OutboxMsg>& outbox) {
  auto q = db_->Prepare("INSERT INTO outbox(kind,subject,payload,msg_id,created_ms) VALUES(?,?,?,?,?)");
  if (!q.ok()) return q.status();
  const int64_t now_ms = NowUnixMs();
  for (const auto& m : outbox) {
    Status s = q->Bind(1, int64_t{m.kind}).Bind(2, m.subject).BindBlob(3, m.payload).Bind(4, m.msg_id)
                   .Bind(5, now_ms).Run();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status Store::AddSite(const SiteRow& row, std::vector<OutboxMsg> outbox) {
  if (Status s = db_->Begin(); !s.ok()) return s;
  auto fail = [&](Status s) {
    db_->Rollback();
    return s;
  };
  // Checked inside the write transaction, so two concurrent `site add`s
  // cannot both claim a host.
  auto sites = ListSites();
  if (!sites.ok()) return fail(sites.status());
  for (const SiteRow& other : *sites) {
    if (other.name == row.name) {
      return fail(Status(Code::kConflict, "site \"" + row.name + "\" already exists (see `folio-ingest site list`)"));
    }
    for (const std::string& h : row.hosts) {
      if (std::find(other.hosts.begin(), other.hosts.end(), h) != other.hosts.end()) {
        return fail(Status(Code::kConflict, "host " + h + " is already served by site \"" + other.name + "\""));
      }
    }
  }
  auto q = db_->Prepare("INSERT INTO sites(name,title,hosts,token_sha256,created_ms) VALUES(?,?,?,?,?)");
  if (!q.ok()) return fail(q.status());
  Status s = q->Bind(1, row.name).Bind(2, row.title).Bind(3, Join(row.hosts)).Bind(4, row.token_sha256)
                 .Bind(5, row.created_ms).Run();
  if (!s.ok()) return fail(s);
  if (Status o = InsertOutbox(outbox); !o.ok()) return fail(o);
  if (Status c = db_->Commit(); !c.ok()) return fail(c);
  return Status::Ok();
}

Status Store::RemoveSite(const std::string& name, std::vector<OutboxMsg> outbox) {
  if (Status s = db_->Begin(); !s.ok()) return s;
  auto fail = [&](Status s) {
    db_->Rollback();
    return s;
  };
  auto q = db_->Prepare("DELETE FROM sites WHERE name=?");
  if (!q.ok()) return fail(q.status());
  if (Status s = q->Bind(1, name).Run(); !s.ok()) return fail(s);
  if (db_->Changes() == 0) {
    return fail(Status::NotFound("no site \"" + name + "\" (see `folio-ingest site list`)"));
  }
  if (Status o = InsertOutbox(outbox); !o.ok()) return fail(o);
  if (Status c = db_->Commit(); !c.ok()) return fail(c);
  return Status::Ok();
}

Result<std::vector<SiteRow>> Store::ListSites() {
  auto q = db_->Prepare(std::string("SELECT ") + kSiteColumns + " FROM sites ORDER BY name");
  if (!q.ok()) return q.status();
  std::vector<SiteRow> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadSiteRow(*q));
  }
  return out;
}

Result<SiteRow> Store::FindSiteByTokenHash(const std::string& token_sha256) {
  auto q = db_->Prepare(std::string("SELECT ") + kSiteColumns + " FROM sites WHERE token_sha256=?");
  if (!q.ok()) return q.status();
  q->Bind(1, token_sha256);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no site has this token");
  return ReadSiteRow(*q);
}

Result<bool> Store::DataVersionChanged() {
  auto q = db_->Prepare("PRAGMA data_version");
  if (!q.ok()) return q.status();
  auto row = q->Step();
  if (!row.ok()) return row.status();
  int64_t v = *row ? q->Int(0) : 0;
  bool changed = data_version_ >= 0 && v != data_version_;
  data_version_ = v;
  return changed;
}

Status Store::LoadAttachments(const std::string& site, site::Vault* vault) {
  auto q = db_->Prepare("SELECT path, sha256, url FROM attachments WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    vault->LoadAttachment({std::string(q->Text(0)), std::string(q->Text(1)), std::string(q->Text(2))});
  }
  return Status::Ok();
}

Status Store::ForEachAttachmentHash(const std::function<void(std::string_view)>& fn) {
  auto q = db_->Prepare("SELECT DISTINCT sha256 FROM attachments");
  if (!q.ok()) return q.status();
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    fn(q->Text(0));
  }
}

}  // namespace folio::ingest
