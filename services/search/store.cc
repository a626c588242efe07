#include "store.h"

#include <charconv>
#include <algorithm>
#include <cstring>

#include "fulltext.h"

namespace folio::search {
namespace {

constexpr std::string_view kSchema = R"sql(
CREATE TABLE IF NOT EXISTS notes(
  id INTEGER PRIMARY KEY,
  site TEXT NOT NULL,
  path TEXT NOT NULL,
  url TEXT NOT NULL,
  title TEXT NOT NULL,
  text TEXT NOT NULL,
  hash TEXT NOT NULL,
  version INTEGER NOT NULL,
  related_dirty INTEGER NOT NULL DEFAULT 0,
  UNIQUE(site, path));
CREATE TABLE IF NOT EXISTS vectors(
  note_id INTEGER NOT NULL,
  chunk INTEGER NOT NULL,
  heading TEXT NOT NULL,
  anchor TEXT NOT NULL,
  vec BLOB NOT NULL,
  PRIMARY KEY(note_id, chunk)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS related(
  note_id INTEGER PRIMARY KEY,
  list TEXT NOT NULL,
  published INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS links(
  site TEXT NOT NULL,
  source TEXT NOT NULL,
  target TEXT NOT NULL,
  text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS links_by_source ON links(site, source);
CREATE INDEX IF NOT EXISTS links_by_target ON links(site, target);
)sql";

// Columns added to notes after its first release (issue 27), with their
// default: ALTER TABLE for a database made before them.
constexpr std::string_view kAddedColumns[][2] = {
    {"extra", "ALTER TABLE notes ADD COLUMN extra TEXT NOT NULL DEFAULT ''"},
    {"sections", "ALTER TABLE notes ADD COLUMN sections TEXT NOT NULL DEFAULT ''"},
};

Status AddMissingColumns(sqlite::Db* db) {
  auto info = db->Prepare("SELECT name FROM pragma_table_info('notes')");
  if (!info.ok()) return info.status();
  std::vector<std::string> have;
  for (;;) {
    auto row = info->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    have.emplace_back(info->Text(0));
  }
  info->Reset();
  for (const auto& [name, sql] : kAddedColumns) {
    if (std::find(have.begin(), have.end(), name) != have.end()) continue;
    if (Status s = db->Exec(sql); !s.ok()) return s;
  }
  return Status::Ok();
}

std::string_view FloatBytes(const std::vector<float>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)};
}

}  // namespace

Result<std::unique_ptr<SearchStore>> SearchStore::Open(const std::string& dir) {
  auto db = sqlite::Db::Open(dir + "/search.db");
  if (!db.ok()) return db.status();
  if (Status s = (*db)->Exec(kSchema); !s.ok()) return s;
  if (Status s = AddMissingColumns(db->get()); !s.ok()) return s;
  bool dropped_old = false;
  if (Status s = FullTextIndex::CreateSchema(db->get(), &dropped_old); !s.ok()) return s;
  std::unique_ptr<SearchStore> store(new SearchStore(std::move(*db)));
  if (dropped_old) {
    // The schema-1 index held only titles and texts: every note must come
    // again from the notes stream to be indexed with its fields.
    if (Status s = store->db()->Exec("UPDATE notes SET version = 0"); !s.ok()) return s;
    if (Status s = store->SetMeta(kReplayNotesKey, "1"); !s.ok()) return s;
  }
  return store;
}

Result<std::unique_ptr<sqlite::Db>> SearchStore::OpenReader(const std::string& dir) {
  return sqlite::Db::Open(dir + "/search.db");
}

Status SearchStore::SetNoteFields(int64_t id, std::string_view extra, std::string_view sections) {
  auto st_r = Cached(16, "UPDATE notes SET extra = ?, sections = ? WHERE id = ?");
  if (!st_r.ok()) return st_r.status();
  (*st_r)->Bind(1, extra).Bind(2, sections).Bind(3, id);
  return (*st_r)->Run();
}

Result<std::vector<std::string>> SearchStore::ReplaceLinks(std::string_view site, std::string_view source,
                                                           std::span<const bus::NoteLink> links) {
  std::vector<std::string> targets;
  auto old = Cached(17, "SELECT DISTINCT target FROM links WHERE site = ? AND source = ?");
  if (!old.ok()) return old.status();
  (*old)->Bind(1, site).Bind(2, source);
  for (;;) {
    auto row = (*old)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    targets.emplace_back((*old)->Text(0));
  }
  (*old)->Reset();
  auto del = Cached(18, "DELETE FROM links WHERE site = ? AND source = ?");
  if (!del.ok()) return del.status();
  if (Status s = (*del)->Bind(1, site).Bind(2, source).Run(); !s.ok()) return s;
  auto ins = Cached(19, "INSERT INTO links(site, source, target, text) VALUES(?, ?, ?, ?)");
  if (!ins.ok()) return ins.status();
  for (const bus::NoteLink& l : links) {
    if (l.text.empty() || l.target.empty()) continue;  // only texts teach a name
    (*ins)->Bind(1, site).Bind(2, source).Bind(3, l.target).Bind(4, l.text);
    if (Status s = (*ins)->Run(); !s.ok()) return s;
    targets.push_back(l.target);
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  return targets;
}

Result<SearchStore::Fields> SearchStore::ReadFields(int64_t id) {
  auto st = Cached(23, "SELECT title, text, extra FROM notes WHERE id = ?");
  if (!st.ok()) return st.status();
  (*st)->Bind(1, id);
  auto row = (*st)->Step();
  if (!row.ok()) return row.status();
  Fields f;
  if (*row) {
    f.title = (*st)->Text(0);
    f.text = (*st)->Text(1);
    f.extra = (*st)->Text(2);
  }
  (*st)->Reset();
  return f;
}

Result<std::vector<std::string>> SearchStore::LinkTexts(std::string_view site, std::string_view target) {
  auto st = db_->Prepare("SELECT DISTINCT text FROM links WHERE site = ? AND target = ? LIMIT 200");
  if (!st.ok()) return st.status();
  st->Bind(1, site).Bind(2, target);
  std::vector<std::string> out;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.emplace_back(st->Text(0));
  }
}

Status SearchStore::ForEachNoteFields(
    const std::function<void(int64_t id, std::string_view site, std::string_view path, std::string_view title,
                             std::string_view text, std::string_view extra)>& fn) {
  auto st = db_->Prepare("SELECT id, site, path, title, text, extra FROM notes ORDER BY id");
  if (!st.ok()) return st.status();
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    fn(st->Int(0), st->Text(1), st->Text(2), st->Text(3), st->Text(4), st->Text(5));
  }
}

Result<sqlite::Stmt*> SearchStore::Cached(int slot, std::string_view sql) {
  std::optional<sqlite::Stmt>& st = stmts_[static_cast<size_t>(slot)];
  if (!st) {
    auto prepared = db_->Prepare(sql);
    if (!prepared.ok()) return prepared.status();
    st.emplace(std::move(*prepared));
  }
  st->Reset();
  return &*st;
}

Result<std::string> SearchStore::GetMeta(std::string_view key) {
  auto st_r = Cached(0, "SELECT value FROM meta WHERE key = ?");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  st->Bind(1, key);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  std::string value = *row ? std::string(st->Text(0)) : std::string();
  st->Reset();
  return value;
}

Status SearchStore::SetMeta(std::string_view key, std::string_view value) {
  auto st_r = Cached(1, "INSERT INTO meta(key, value) VALUES(?, ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  st->Bind(1, key).Bind(2, value);
  return st->Run();
}

Result<std::optional<StoredNote>> SearchStore::FindNote(std::string_view site, std::string_view path) {
  auto st_r = Cached(2, "SELECT id, url, title, hash, version FROM notes WHERE site = ? AND path = ?");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  st->Bind(1, site).Bind(2, path);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<StoredNote>();
  StoredNote n;
  n.id = st->Int(0);
  n.site = site;
  n.path = path;
  n.url = st->Text(1);
  n.title = st->Text(2);
  n.hash = st->Text(3);
  n.version = st->Int(4);
  st->Reset();
  return std::optional<StoredNote>(std::move(n));
}

Result<int64_t> SearchStore::UpsertNote(const StoredNote& n, std::string_view text) {
  auto st_r = Cached(13,
      "INSERT INTO notes(site, path, url, title, text, hash, version) VALUES(?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT(site, path) DO UPDATE SET url = excluded.url, title = excluded.title, "
      "text = excluded.text, hash = excluded.hash, version = excluded.version RETURNING id");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  st->Bind(1, n.site).Bind(2, n.path).Bind(3, n.url).Bind(4, n.title).Bind(5, text).Bind(6, n.hash);
  st->Bind(7, n.version);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::Internal("upsert of note " + n.path + " returned no id");
  int64_t id = st->Int(0);
  st->Reset();
  return id;
}

Status SearchStore::DeleteNote(int64_t id) {
  int slot = 20;  // 20..22: slots are per statement (14 and 15 are ForgetSiteVersions')
  for (std::string_view sql : {"DELETE FROM notes WHERE id = ?", "DELETE FROM vectors WHERE note_id = ?",
                               "DELETE FROM related WHERE note_id = ?"}) {
    auto st_r = Cached(slot++, sql);
    if (!st_r.ok()) return st_r.status();
    sqlite::Stmt* st = *st_r;
    st->Bind(1, id);
    if (Status s = st->Run(); !s.ok()) return s;
  }
  return Status::Ok();
}

Status SearchStore::ReplaceVectors(int64_t id, const std::vector<StoredVector>& vectors) {
  auto del_r = Cached(3, "DELETE FROM vectors WHERE note_id = ?");
  if (!del_r.ok()) return del_r.status();
  sqlite::Stmt* del = *del_r;
  del->Bind(1, id);
  if (Status s = del->Run(); !s.ok()) return s;
  auto ins_r = Cached(4, "INSERT INTO vectors(note_id, chunk, heading, anchor, vec) VALUES(?, ?, ?, ?, ?)");
  if (!ins_r.ok()) return ins_r.status();
  sqlite::Stmt* ins = *ins_r;
  for (const StoredVector& v : vectors) {
    ins->Bind(1, id).Bind(2, static_cast<int64_t>(v.chunk)).Bind(3, v.heading).Bind(4, v.anchor);
    ins->BindBlob(5, FloatBytes(v.v));
    if (Status s = ins->Run(); !s.ok()) return s;
  }
  return Status::Ok();
}

Status SearchStore::SetRelatedDirty(int64_t id, bool dirty) {
  auto st_r = Cached(5, "UPDATE notes SET related_dirty = ? WHERE id = ?");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  st->Bind(1, int64_t{dirty}).Bind(2, id);
  return st->Run();
}

Status SearchStore::ForEachNote(const std::function<void(const StoredNote&)>& fn) {
  auto st_r = Cached(6, "SELECT id, site, path, url, title, hash, version FROM notes ORDER BY id");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  StoredNote n;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    n.id = st->Int(0);
    n.site = st->Text(1);
    n.path = st->Text(2);
    n.url = st->Text(3);
    n.title = st->Text(4);
    n.hash = st->Text(5);
    n.version = st->Int(6);
    fn(n);
  }
}

Status SearchStore::ForEachVector(const std::function<void(int64_t, const StoredVector&)>& fn) {
  auto st_r = Cached(7, "SELECT note_id, chunk, heading, anchor, vec FROM vectors ORDER BY note_id, chunk");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  StoredVector v;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    v.chunk = static_cast<int>(st->Int(1));
    v.heading = st->Text(2);
    v.anchor = st->Text(3);
    std::string_view blob = st->Blob(4);
    v.v.resize(blob.size() / sizeof(float));
    if (!blob.empty()) std::memcpy(v.v.data(), blob.data(), v.v.size() * sizeof(float));
    fn(st->Int(0), v);
  }
}

Status SearchStore::ForEachText(const std::function<void(int64_t, std::string_view, std::string_view)>& fn) {
  auto st_r = Cached(8, "SELECT id, site, text FROM notes ORDER BY id");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    fn(st->Int(0), st->Text(1), st->Text(2));
  }
}

Result<std::vector<int64_t>> SearchStore::RelatedDirtyNotes() {
  auto st_r = Cached(9, "SELECT id FROM notes WHERE related_dirty != 0");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  std::vector<int64_t> ids;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return ids;
    ids.push_back(st->Int(0));
  }
}

Status SearchStore::SetRelated(int64_t id, std::string_view list, bool published) {
  auto st_r = Cached(10, "INSERT INTO related(note_id, list, published) VALUES(?, ?, ?) "
                         "ON CONFLICT(note_id) DO UPDATE SET list = excluded.list, published = excluded.published");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  st->Bind(1, id).Bind(2, list).Bind(3, int64_t{published});
  return st->Run();
}

Status SearchStore::ForgetSiteVersions(std::string_view site) {
  auto versions = Cached(14, "UPDATE notes SET version = 0 WHERE site = ?");
  if (!versions.ok()) return versions.status();
  if (Status s = (*versions)->Bind(1, site).Run(); !s.ok()) return s;
  auto lists = Cached(15, "UPDATE related SET published = 0 WHERE note_id IN (SELECT id FROM notes WHERE site = ?)");
  if (!lists.ok()) return lists.status();
  return (*lists)->Bind(1, site).Run();
}

Status SearchStore::MarkRelatedPublished(std::span<const int64_t> ids) {
  auto st_r = Cached(11, "UPDATE related SET published = 1 WHERE note_id = ?");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  for (int64_t id : ids) {
    st->Bind(1, id);
    if (Status s = st->Run(); !s.ok()) return s;
  }
  return Status::Ok();
}

Status SearchStore::ForEachRelated(const std::function<void(int64_t, std::string_view, bool)>& fn) {
  auto st_r = Cached(12, "SELECT note_id, list, published FROM related");
  if (!st_r.ok()) return st_r.status();
  sqlite::Stmt* st = *st_r;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    fn(st->Int(0), st->Text(1), st->Int(2) != 0);
  }
}

std::string EncodeRelatedList(const std::vector<std::pair<int64_t, float>>& list) {
  std::string out;
  char buf[64];
  for (const auto& [id, score] : list) {
    if (!out.empty()) out += ' ';
    auto r = std::to_chars(buf, buf + sizeof buf, id);
    out.append(buf, r.ptr);
    out += ':';
    r = std::to_chars(buf, buf + sizeof buf, score);
    out.append(buf, r.ptr);
  }
  return out;
}

std::vector<std::pair<int64_t, float>> DecodeRelatedList(std::string_view s) {
  std::vector<std::pair<int64_t, float>> out;
  while (!s.empty()) {
    size_t sp = s.find(' ');
    std::string_view item = s.substr(0, sp);
    s = sp == std::string_view::npos ? std::string_view() : s.substr(sp + 1);
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) continue;
    int64_t id = 0;
    float score = 0;
    if (std::from_chars(item.data(), item.data() + colon, id).ec != std::errc()) continue;
    if (std::from_chars(item.data() + colon + 1, item.data() + item.size(), score).ec != std::errc()) continue;
    out.emplace_back(id, score);
  }
  return out;
}

Result<NoteForHit> ReadNoteForHit(sqlite::Db* reader, int64_t id) {
  auto st = reader->Prepare("SELECT text, sections FROM notes WHERE id = ?");
  if (!st.ok()) return st.status();
  st->Bind(1, id);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  NoteForHit n;
  if (*row) {
    n.text = st->Text(0);
    n.sections = st->Text(1);
  }
  return n;
}

Result<std::pair<std::string, std::string>> ReadTitleAndExtra(sqlite::Db* reader, int64_t id) {
  auto st = reader->Prepare("SELECT title, extra FROM notes WHERE id = ?");
  if (!st.ok()) return st.status();
  st->Bind(1, id);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  std::pair<std::string, std::string> out;
  if (*row) out = {std::string(st->Text(0)), std::string(st->Text(1))};
  return out;
}

Result<std::string> ReadNoteText(sqlite::Db* reader, int64_t id) {
  auto st = reader->Prepare("SELECT text FROM notes WHERE id = ?");
  if (!st.ok()) return st.status();
  st->Bind(1, id);
  auto row = st->Step();
  if (!row.ok()) return row.status();
  return *row ? std::string(st->Text(0)) : std::string();
}

}  // namespace folio::search
