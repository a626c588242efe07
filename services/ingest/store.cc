// Store (store.h): opening ingest.db, its schema and migrations, and the
// connection-wide chores (checkpoint, cache, data version). The tables'
// reads and writes live in store_*.cc, one file per table group.
#include "store.h"

#include <charconv>
#include <filesystem>

#include "store_internal.h"

namespace folio::ingest {
namespace store_internal {

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

// Vault paths hold no control characters (CheckVaultPath), so '\t' and
// '\n' are free.
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

}  // namespace store_internal

namespace {

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
CREATE TABLE IF NOT EXISTS feed_bytes(site TEXT PRIMARY KEY, bytes INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sites(
  name TEXT PRIMARY KEY, title TEXT NOT NULL, hosts TEXT NOT NULL, token_sha256 TEXT NOT NULL UNIQUE,
  created_ms INTEGER NOT NULL);
)sql";

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
  if (Status s = MigrateSitePrefs(); !s.ok()) return s;
  return MigrateDelta();
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

Status Store::Checkpoint() { return db_->Exec("PRAGMA wal_checkpoint(PASSIVE)"); }

Status Store::ReleaseCache() { return db_->Exec("PRAGMA shrink_memory"); }

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

}  // namespace folio::ingest
