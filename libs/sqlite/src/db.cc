#include "folio/sqlite/db.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>

namespace folio::sqlite {
namespace {

// A full disk (SQLITE_FULL, or an I/O error whose errno says the disk or a
// quota is full) is kNoSpace: the failed statement kept nothing, and once
// the caller rolls back neither did its transaction. Anything else is
// kInternal.
bool IsFull(sqlite3* db, int rc) {
  const int primary = rc & 0xff;
  const int sys = db != nullptr ? sqlite3_system_errno(db) : 0;
  return primary == SQLITE_FULL || (primary == SQLITE_IOERR && (sys == ENOSPC || sys == EDQUOT));
}

Status FromCode(sqlite3* db, int rc, std::string message) {
  return IsFull(db, rc) ? Status::NoSpace(std::move(message)) : Status::Internal(std::move(message));
}

Status Error(sqlite3* db, int rc, std::string_view what) {
  return FromCode(db, rc, std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

// Idle statements by SQL text. Owned jointly by the Db and its live Stmts,
// so a Stmt released after its Db finalizes instead of touching a closed
// cache. One thread at a time, like the Db.
class StmtCache {
 public:
  static constexpr size_t kMaxIdle = 128;
  static constexpr size_t kMaxIdlePerSql = 4;

  sqlite3_stmt* Take(std::string_view sql) {
    auto it = idle_.find(sql);
    if (it == idle_.end() || it->second.empty()) return nullptr;
    sqlite3_stmt* st = it->second.back();
    it->second.pop_back();
    --size_;
    return st;
  }
  // Keeps st (reset, bindings cleared) for the next Prepare of its SQL;
  // false if closed or full (the caller finalizes).
  bool Put(sqlite3_stmt* st) {
    if (closed_ || size_ >= kMaxIdle) return false;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    auto& v = idle_[sqlite3_sql(st)];
    if (v.size() >= kMaxIdlePerSql) return false;
    v.push_back(st);
    ++size_;
    return true;
  }
  void Close() {
    for (auto& [sql, v] : idle_) {
      for (sqlite3_stmt* st : v) sqlite3_finalize(st);
    }
    idle_.clear();
    size_ = 0;
    closed_ = true;
  }
  size_t size() const { return size_; }

 private:
  std::map<std::string, std::vector<sqlite3_stmt*>, std::less<>> idle_;
  size_t size_ = 0;
  bool closed_ = false;
};

void Stmt::Release() {
  if (st_ == nullptr) return;
  if (!cache_ || !cache_->Put(st_)) sqlite3_finalize(st_);
  st_ = nullptr;
  cache_.reset();
}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    Release();
    db_ = o.db_;
    st_ = o.st_;
    cache_ = std::move(o.cache_);
    o.st_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() { Release(); }

Stmt& Stmt::Bind(int i, std::string_view text) {
  sqlite3_bind_text(st_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::BindBlob(int i, std::string_view bytes) {
  sqlite3_bind_blob(st_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(st_, i, v);
  return *this;
}
Stmt& Stmt::BindPointer(int i, const void* p, const char* type) {
  sqlite3_bind_pointer(st_, i, const_cast<void*>(p), type, nullptr);
  return *this;
}
Stmt& Stmt::BindNull(int i) {
  sqlite3_bind_null(st_, i);
  return *this;
}

Result<bool> Stmt::Step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(db_, rc, std::string("sqlite step of '") + sqlite3_sql(st_) + "'");
}

Status Stmt::Run() {
  for (;;) {
    auto r = Step();
    if (!r.ok()) {
      Reset();
      return r.status();
    }
    if (!*r) break;
  }
  Reset();
  return Status::Ok();
}

void Stmt::Reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

double Stmt::Double(int col) const { return sqlite3_column_double(st_, col); }
int64_t Stmt::Int(int col) const { return sqlite3_column_int64(st_, col); }
std::string_view Stmt::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
  return p ? std::string_view(p, sqlite3_column_bytes(st_, col)) : std::string_view();
}
std::string_view Stmt::Blob(int col) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(st_, col));
  return p ? std::string_view(p, sqlite3_column_bytes(st_, col)) : std::string_view();
}
bool Stmt::IsNull(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }

Result<std::unique_ptr<Db>> Db::Open(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string m = "cannot open database " + path + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return Status::Unavailable(m);
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<Db> d(new Db(db));
  Status s = d->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
  if (!s.ok()) return s;
  return d;
}

Db::Db(sqlite3* db) : db_(db), cache_(std::make_shared<StmtCache>()) {}

Db::~Db() {
  cache_->Close();
  sqlite3_close_v2(db_);  // a Stmt still alive keeps the connection until it finalizes
}

size_t Db::CachedStatements() const { return cache_->size(); }

Status Db::Exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  if (int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err); rc != SQLITE_OK) {
    std::string m = "sqlite exec failed: " + std::string(err ? err : "?");
    sqlite3_free(err);
    return FromCode(db_, rc, std::move(m));
  }
  return Status::Ok();
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  if (sqlite3_stmt* st = cache_->Take(sql)) return Stmt(db_, st, cache_);
  sqlite3_stmt* st = nullptr;
  const char* tail = nullptr;
  if (int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &st,
                                  &tail);
      rc != SQLITE_OK) {
    return Error(db_, rc, "sqlite prepare of '" + std::string(sql) + "'");
  }
  // Cached only when the whole text is the statement, so the cache's key
  // (sqlite3_sql) is the text the next Prepare looks up.
  const bool whole = tail == sql.data() + sql.size() && st != nullptr && sql == sqlite3_sql(st);
  return Stmt(db_, st, whole ? cache_ : nullptr);
}

void Db::Rollback() { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }
bool Db::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }
int64_t Db::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
int Db::Changes() const { return sqlite3_changes(db_); }

int64_t Db::TotalChanges() const { return sqlite3_total_changes64(db_); }

Status Db::BackupTo(const std::string& dest_path, int pages_per_step, int pause_ms) {
  std::error_code ec;
  if (std::filesystem::exists(dest_path, ec)) return Status::Invalid("backup target exists: " + dest_path);
  sqlite3* dest = nullptr;
  int rc = sqlite3_open_v2(dest_path.c_str(), &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::string err;
  bool full = false;
  if (rc == SQLITE_OK) {
    sqlite3_backup* b = sqlite3_backup_init(dest, "main", db_, "main");
    if (!b) {
      err = sqlite3_errmsg(dest);
    } else {
      // BUSY/LOCKED only mean a writer holds the source for now: wait, retry.
      do {
        rc = sqlite3_backup_step(b, pages_per_step);
        if (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) sqlite3_sleep(pause_ms);
      } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
      sqlite3_backup_finish(b);
      if (rc != SQLITE_DONE) err = sqlite3_errstr(rc);
      full = IsFull(dest, rc);
    }
  } else {
    err = dest ? sqlite3_errmsg(dest) : "out of memory";
  }
  sqlite3_close_v2(dest);
  if (!err.empty()) {
    std::remove(dest_path.c_str());
    std::string m = "backup to " + dest_path + " failed: " + err;
    return full ? Status::NoSpace(std::move(m)) : Status::Unavailable(std::move(m));
  }
  return Status::Ok();
}

Result<std::string> Db::IntegrityCheck() {
  auto st = Prepare("PRAGMA integrity_check");
  if (!st.ok()) return st.status();
  std::string out;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (!out.empty()) out += "\n";
    out += st->Text(0);
  }
  if (out.empty()) return Status::Internal("integrity_check returned no rows");
  return out;
}

void Db::TraceStatements(std::function<void(std::string_view sql)> fn) {
  trace_ = std::move(fn);
  if (!trace_) {
    sqlite3_trace_v2(db_, 0, nullptr, nullptr);
    return;
  }
  sqlite3_trace_v2(
      db_, SQLITE_TRACE_STMT,
      [](unsigned, void* ctx, void* p, void*) -> int {
        const char* sql = sqlite3_sql(static_cast<sqlite3_stmt*>(p));
        if (sql != nullptr) (*static_cast<std::function<void(std::string_view)>*>(ctx))(sql);
        return 0;
      },
      &trace_);
}

Result<std::vector<std::string>> Db::QueryPlan(std::string_view sql) {
  auto st = Prepare("EXPLAIN QUERY PLAN " + std::string(sql));
  if (!st.ok()) return st.status();
  std::vector<std::string> lines;
  for (;;) {
    auto row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    lines.emplace_back(st->Text(3));  // id, parent, notused, detail
  }
  return lines;
}

bool OpenedByAnotherProcess(const std::string& db_path) {
  // The -shm lock bytes start at offset 120; the DMS ("dead man switch")
  // byte is slot 8 (os_unix.c, UNIX_SHM_DMS).
  constexpr off_t kShmDmsByte = 120 + 8;
  int fd = open((db_path + "-shm").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock fl = {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = kShmDmsByte;
  fl.l_len = 1;
  bool open_elsewhere = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  close(fd);
  return open_elsewhere;
}

}  // namespace folio::sqlite
