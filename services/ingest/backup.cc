#include "backup.h"

#include <fcntl.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/core/time.h"
#include "folio/http/client.h"
#include "folio/sqlite/db.h"

namespace folio::ingest {
namespace {

namespace fs = std::filesystem;
constexpr size_t kShortHash = 12;  // hex digits of the SHA-256 in a backup's name

// Removes a temp file when it goes out of scope.
struct TempFile {
  std::string path;
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

// "20260101T120000Z"
std::string UtcStamp(int64_t unix_ms) {
  time_t t = static_cast<time_t>(unix_ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

Result<std::string> FileSha256Hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Unavailable("cannot read " + path);
  Sha256Stream h;
  std::string buf(1 << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.Update(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) return Status::Unavailable("cannot read " + path);
  return h.FinishHex();
}

Status StorageError(std::string_view what, const Result<http::ClientResponse>& r) {
  if (!r.ok()) return Status::Unavailable(std::string(what) + ": storage unreachable: " + r.status().message());
  return Status::Unavailable(std::string(what) + ": storage answered " + std::to_string(r->status) + " " + r->body);
}

// A backup's name without the folder: <stamp>-<hash>.db, [0-9A-Za-z.-] only
// (so it needs no percent-encoding and cannot leave the folder).
bool IsBackupBaseName(std::string_view n) {
  if (n.empty() || n.size() > 200 || n.front() == '.' || n.find("..") != std::string_view::npos) return false;
  for (char c : n) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') return false;
  }
  return true;
}

// The newest backup by storage sequence number; kNotFound if there is none.
Result<std::string> NewestBackup(const std::string& storage_url) {
  std::string newest, after;
  int64_t newest_seq = -1;
  for (;;) {
    auto r = http::Get(storage_url + "/objects?limit=1000&prefix=" + kBackupFolder + (after.empty() ? "" : "&after=" + after));
    if (!r.ok() || r->status != 200) return StorageError("listing backups", r);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    simdjson::dom::array objects;
    if (parser.parse(r->body).get(doc) || doc["objects"].get_array().get(objects)) {
      return Status::Unavailable("listing backups: storage answered malformed JSON");
    }
    for (simdjson::dom::element o : objects) {
      std::string_view name;
      int64_t seq = 0;
      if (o["name"].get_string().get(name) || o["seq"].get_int64().get(seq)) continue;
      after = std::string(name);
      if (seq > newest_seq) newest_seq = seq, newest = std::string(name);
    }
    bool truncated = false;
    if (doc["truncated"].get_bool().get(truncated) || !truncated || objects.size() == 0) break;
  }
  if (newest.empty()) return Status::NotFound(std::string("no backups in storage under ") + kBackupFolder);
  return newest;
}

// Checks the downloaded file: SHA-256 prefix from the name, integrity_check.
Status Verify(const std::string& path, const std::string& base_name) {
  size_t dash = base_name.rfind('-'), dot = base_name.find('.', dash == std::string::npos ? 0 : dash);
  if (dash != std::string::npos && dot != std::string::npos && dot - dash - 1 == kShortHash) {
    auto hex = FileSha256Hex(path);
    if (!hex.ok()) return hex.status();
    if (hex->compare(0, kShortHash, base_name, dash + 1, kShortHash) != 0) {
      return Status::Internal("backup " + base_name + " is damaged: its SHA-256 starts " + hex->substr(0, kShortHash));
    }
  }
  auto db = sqlite::Db::Open(path);
  if (!db.ok()) return Status::Internal("backup " + base_name + " is not a usable database: " + db.status().message());
  auto ic = (*db)->IntegrityCheck();
  if (!ic.ok()) return Status::Internal("backup " + base_name + " failed integrity_check: " + ic.status().message());
  if (*ic != "ok") return Status::Internal("backup " + base_name + " failed integrity_check: " + ic->substr(0, 300));
  return Status::Ok();
}

void SyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

// Moves ingest.db and its -wal/-shm aside (a stale -wal must never meet
// the restored file), then renames `downloaded` into place.
Status Swap(const std::string& data_dir, const std::string& downloaded, const std::string& stamp) {
  std::string db = data_dir + "/ingest.db", aside = db + ".before-restore-" + stamp;
  std::error_code ec;
  if (fs::exists(db, ec)) {
    fs::rename(db, aside, ec);
    if (ec) return Status::Unavailable("cannot move " + db + " aside: " + ec.message());
  }
  for (const char* suffix : {"-wal", "-shm"}) {
    if (!fs::exists(db + suffix, ec)) continue;
    fs::rename(db + suffix, aside + suffix, ec);
    if (ec) return Status::Unavailable("cannot move " + db + suffix + " aside: " + ec.message());
  }
  fs::rename(downloaded, db, ec);
  if (ec) return Status::Unavailable("cannot rename the backup into place: " + ec.message());
  SyncDir(data_dir);
  return Status::Ok();
}

std::string TrimSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

Status Backup(const std::string& data_dir, const std::string& storage_url_in, int keep, std::string* name_out) {
  const std::string storage_url = TrimSlash(storage_url_in);
  std::string db_path = data_dir + "/ingest.db";
  std::error_code ec;
  if (!fs::exists(db_path, ec)) return Status::NotFound("no database at " + db_path);
  int64_t now = NowUnixMs();
  TempFile tmp{data_dir + "/ingest.db.backup-" + std::to_string(getpid()) + "-" + std::to_string(now) + ".tmp"};
  {
    auto db = sqlite::Db::Open(db_path);
    if (!db.ok()) return db.status();
    if (Status s = (*db)->BackupTo(tmp.path); !s.ok()) return s;
  }
  auto hex = FileSha256Hex(tmp.path);
  if (!hex.ok()) return hex.status();
  uint64_t size = fs::file_size(tmp.path, ec);
  if (ec) return Status::Unavailable("cannot stat " + tmp.path + ": " + ec.message());
  std::string name = std::string(kBackupFolder) + UtcStamp(now) + "-" + hex->substr(0, kShortHash) + ".db";

  http::ClientRequest req;
  req.method = "PUT";
  req.url = storage_url + "/objects/" + name + "?keep=" + std::to_string(keep);
  req.headers.emplace_back("Content-Type", "application/vnd.sqlite3");
  req.timeout_ms = 30 * 60 * 1000;
  auto r = http::FetchFile(req, tmp.path, "");
  if (!r.ok() || (r->status != 200 && r->status != 201)) return StorageError("uploading " + name, r);
  // The answer is {"key","size"}: the size stored must be the size sent.
  simdjson::dom::parser parser;
  int64_t stored = -1;
  if (parser.parse(r->body)["size"].get_int64().get(stored) || stored != static_cast<int64_t>(size)) {
    return Status::Internal("uploading " + name + ": storage kept " + std::to_string(stored) + " bytes of " +
                            std::to_string(size));
  }
  *name_out = name;
  return Status::Ok();
}

Status Restore(const std::string& data_dir, const std::string& storage_url_in, const std::string& name,
               std::string* restored_out) {
  const std::string storage_url = TrimSlash(storage_url_in);
  std::string db_path = data_dir + "/ingest.db";
  auto in_use = [&] {
    return Status(Code::kConflict, db_path + " is open in another process: stop folio-ingest before restoring");
  };
  if (sqlite::OpenedByAnotherProcess(db_path)) return in_use();
  std::string full = name;
  if (full.empty()) {
    auto newest = NewestBackup(storage_url);
    if (!newest.ok()) return newest.status();
    full = *newest;
  } else if (full.rfind(kBackupFolder, 0) != 0) {
    full = kBackupFolder + full;
  }
  std::string base = full.substr(std::string_view(kBackupFolder).size());
  if (!IsBackupBaseName(base)) return Status::Invalid("not a backup name: " + name);

  std::string stamp = UtcStamp(NowUnixMs());
  TempFile tmp{data_dir + "/ingest.db.restore-" + std::to_string(getpid()) + "-" + stamp + ".tmp"};
  http::ClientRequest req;
  req.url = storage_url + "/objects/" + full;
  req.timeout_ms = 30 * 60 * 1000;
  auto r = http::FetchFile(req, "", tmp.path);
  if (r.ok() && r->status == 404) return Status::NotFound("no backup named " + full + " in storage");
  if (!r.ok() || r->status != 200) return StorageError("downloading " + full, r);
  if (Status s = Verify(tmp.path, base); !s.ok()) return s;
  if (sqlite::OpenedByAnotherProcess(db_path)) return in_use();  // started while we downloaded
  if (Status s = Swap(data_dir, tmp.path, stamp); !s.ok()) return s;
  *restored_out = full;
  return Status::Ok();
}

int RunBackupCommand(const Flags& flags) {
  auto keep = flags.GetInt("backup-keep");
  if (!keep.ok() || *keep < 1 || *keep > 10000) {
    fprintf(stderr, "folio-ingest backup: --backup-keep must be an integer in 1..10000\n");
    return 2;
  }
  if (flags.Get("storage").empty()) {
    fprintf(stderr, "folio-ingest backup: --storage URL is required\n");
    return 2;
  }
  std::string name;
  if (Status s = Backup(flags.Get("data"), flags.Get("storage"), static_cast<int>(*keep), &name); !s.ok()) {
    fprintf(stderr, "folio-ingest backup: %s\n", s.message().c_str());
    return 1;
  }
  printf("%s\n", name.c_str());
  return 0;
}

int RunRestoreCommand(const Flags& flags) {
  const auto& pos = flags.positional();
  if (pos.size() > 2 || flags.Get("storage").empty()) {
    fprintf(stderr, "usage: folio-ingest restore [NAME] --storage URL [--data DIR]\n");
    return 2;
  }
  std::string restored;
  Status s = Restore(flags.Get("data"), flags.Get("storage"), pos.size() == 2 ? pos[1] : "", &restored);
  if (!s.ok()) {
    fprintf(stderr, "folio-ingest restore: %s (the current database was not changed)\n", s.message().c_str());
    return 1;
  }
  printf("%s\n", restored.c_str());
  return 0;
}

BackupSchedule::BackupSchedule(std::string data_dir, std::string storage_url, int keep, int64_t interval_ms,
                               metrics::Registry* registry)
    : data_dir_(std::move(data_dir)),
      storage_url_(std::move(storage_url)),
      keep_(keep),
      interval_ms_(interval_ms),
      ok_(registry->NewCounter("folio_ingest_backups_total", "Scheduled backups by result", {{"result", "ok"}})),
      error_(registry->NewCounter("folio_ingest_backups_total", "Scheduled backups by result", {{"result", "error"}})) {}

BackupSchedule::~BackupSchedule() { Stop(); }

void BackupSchedule::Start() { thread_ = std::thread([this] { Run(); }); }

void BackupSchedule::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackupSchedule::Run() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (cv_.wait_for(l, std::chrono::milliseconds(interval_ms_), [this] { return stop_; })) return;
    l.unlock();
    std::string name;
    Status s = Backup(data_dir_, storage_url_, keep_, &name);
    if (s.ok()) {
      ok_.Increment();
      log::Info("backup stored", {{"object", name}});
    } else {
      error_.Increment();
      log::Warn("backup failed; retrying at the next tick", {{"error", s.message()}});
    }
    l.lock();
  }
}

}  // namespace folio::ingest
