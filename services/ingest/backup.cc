#include "backup.h"

#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "folio/bus/note_schema.h"
#include "folio/core/files.h"
#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/core/secret.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/http/client.h"
#include "folio/sqlite/db.h"
#include "store.h"

namespace folio::ingest {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kTransferTimeoutMs = 30 * 60 * 1000;
constexpr size_t kStampChars = 16;  // "20260101T120000Z", first in a signed base name

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

// A backup's name without the folder: [0-9A-Za-z._-] only (so it needs no
// percent-encoding and cannot leave the folder). Whether it is signed is
// VerifyBackupName's question.
bool IsBackupBaseName(std::string_view n) {
  if (n.empty() || n.size() > 200 || n.front() == '.' || n.find("..") != std::string_view::npos) return false;
  for (char c : n) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') return false;
  }
  return true;
}

// Every object under the backups folder: (name with folder, storage sequence).
Result<std::vector<std::pair<std::string, int64_t>>> ListBackups(const StorageAccess& storage) {
  auto objects = StorageClientFor(storage).ListAllObjects(kBackupFolder, 30'000);
  if (!objects.ok()) return objects.status();
  std::vector<std::pair<std::string, int64_t>> all;
  for (storage_client::ObjectListing::Entry& o : *objects) all.emplace_back(std::move(o.name), o.seq);
  return all;
}

std::string NotSigned(const std::string& name, const BackupKey& key) {
  return "backup " + name + " is not signed by this ingest's backup key (" + key.path + "); refusing to restore it";
}

// The newest backup whose name is signed by the key: by the time in the
// name (signed, so an old backup stored again cannot pass for a new one),
// then by storage sequence. Every object whose name is not signed goes to
// *skipped, newest stored first. kPermissionDenied if none is signed,
// kNotFound if there are no backups at all.
// Every backup whose name is signed by the key, newest first (see above).
Result<std::vector<std::string>> SignedBackupsNewestFirst(const BackupTarget& t, std::vector<std::string>* skipped) {
  auto all = ListBackups(t.storage);
  if (!all.ok()) return all.status();
  if (all->empty()) return Status::NotFound(std::string("no backups in storage under ") + kBackupFolder);
  std::sort(all->begin(), all->end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::pair<std::string, std::string>> signed_names;  // (stamp, name), stored last first
  for (const auto& [name, seq] : *all) {
    std::string base = name.substr(std::string_view(kBackupFolder).size()), sha;
    if (!IsBackupBaseName(base) || !VerifyBackupName(t.key, base, &sha)) {
      skipped->push_back(name);
    } else {
      signed_names.emplace_back(base.substr(0, kStampChars), name);
    }
  }
  if (signed_names.empty()) {
    return Status::PermissionDenied("none of the " + std::to_string(all->size()) + " backups in storage under " +
                                    kBackupFolder + " is signed by this ingest's backup key (" + t.key.path + ")");
  }
  // By stamp; ties: the one stored last.
  std::stable_sort(signed_names.begin(), signed_names.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& sn : signed_names) out.push_back(std::move(sn.second));
  return out;
}

Result<std::string> NewestSignedBackup(const BackupTarget& t, std::vector<std::string>* skipped) {
  auto names = SignedBackupsNewestFirst(t, skipped);
  if (!names.ok()) return names.status();
  return names->front();
}

// Checks the downloaded file: the SHA-256 its name signs, integrity_check.
Status Verify(const std::string& path, const std::string& name, const std::string& signed_sha) {
  auto hex = FileSha256Hex(path);
  if (!hex.ok()) return hex.status();
  if (*hex != signed_sha) {
    return Status::Internal("backup " + name + " is not the file its name signs (its SHA-256 is " + *hex +
                            "); refusing to restore it");
  }
  auto db = sqlite::Db::Open(path);
  if (!db.ok()) return Status::Internal("backup " + name + " is not a usable database: " + db.status().message());
  auto ic = (*db)->IntegrityCheck();
  if (!ic.ok()) return Status::Internal("backup " + name + " failed integrity_check: " + ic.status().message());
  if (*ic != "ok") return Status::Internal("backup " + name + " failed integrity_check: " + ic->substr(0, 300));
  return Status::Ok();
}

// "<stamp> (<N> hours ago)": when the backup `name` (with folder, signed)
// was taken, by the stamp its name signs.
// Unix seconds of the stamp that opens the base name of backup `name`
// (with folder, signed); false if it has none.
bool TakenAt(const std::string& name, int64_t* unix_s) {
  std::string stamp = name.substr(std::string_view(kBackupFolder).size(), kStampChars);
  struct tm tm {};
  if (strptime(stamp.c_str(), "%Y%m%dT%H%M%SZ", &tm) == nullptr) return false;
  *unix_s = static_cast<int64_t>(timegm(&tm));
  return true;
}

std::string TakenWhen(const std::string& name) {
  std::string stamp = name.substr(std::string_view(kBackupFolder).size(), kStampChars);
  int64_t at = 0;
  if (!TakenAt(name, &at)) return stamp;
  int64_t hours = (NowUnixMs() / 1000 - at) / 3600;
  return stamp + " (" + std::to_string(hours) + " hours ago)";
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
  (void)SyncDirectory(data_dir);  // best effort: the backup is in place either way
  return Status::Ok();
}

// The key for a command: created when backing up, never when restoring
// (a new key would only refuse every backup).
Result<BackupTarget> TargetFromFlags(const Flags& flags, bool create_key) {
  BackupTarget t;
  t.data_dir = flags.Get("data");
  auto storage = StorageAccessFromFlags(flags);
  if (!storage.ok()) return storage.status();
  t.storage = std::move(*storage);
  auto key = LoadBackupKey(t.data_dir, flags.Get("backup-key-file"), create_key);
  if (!key.ok()) return key.status();
  t.key = std::move(*key);
  return t;
}

}  // namespace

Status Backup(const BackupTarget& target, int keep, std::string* name_out) {
  const std::string& data_dir = target.data_dir;
  std::string db_path = data_dir + "/ingest.db";
  std::error_code ec;
  if (!fs::exists(db_path, ec)) return Status::NotFound("no database at " + db_path);
  int64_t now = NowUnixMs();
  TempFile tmp{data_dir + "/ingest.db.backup-" + std::to_string(getpid()) + "-" + std::to_string(now) + ".tmp"};
  {
    auto db = sqlite::Db::Open(db_path);
    if (!db.ok()) return db.status();
    // All pages in one step, in one read transaction (WAL: writers go on).
    // In steps, SQLite restarts the copy whenever another connection
    // writes: at 100k notes (700 MB, ~9 s) a push every half second kept a
    // backup restarting for minutes without end (issue 23).
    if (Status s = (*db)->BackupTo(tmp.path, -1); !s.ok()) return s;
  }
  auto hex = FileSha256Hex(tmp.path);
  if (!hex.ok()) return hex.status();
  uint64_t size = fs::file_size(tmp.path, ec);
  if (ec) return Status::Unavailable("cannot stat " + tmp.path + ": " + ec.message());
  std::string name = std::string(kBackupFolder) + SignedBackupName(target.key, UtcStamp(now), *hex);

  const storage_client::Client client = StorageClientFor(target.storage);
  auto r = client.PutObjectFile(name, keep, "application/vnd.sqlite3", tmp.path, kTransferTimeoutMs);
  if (!r.ok() || (r->status != 200 && r->status != 201)) return client.Error("uploading " + name, r);
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

namespace {

// The restored database's history restarts at the backup's versions: each
// site gets a new epoch (`folio push` indexes and note-event ids of the
// history after the backup are not trusted: its versions come again), and
// its outbox a restored mark for the notes stream (bus::RestoredEvent):
// search forgets the site's versions and sends every related list again.
// Published once ingest runs. A backup older than the epoch column has none
// to renew. Failures are logged: the restore itself has succeeded.
void MarkRestored(const std::string& db_path) {
  auto db = sqlite::Db::Open(db_path);
  if (!db.ok()) {
    log::Warn("restore: cannot mark the restored database", {{"error", db.status().message()}});
    return;
  }
  std::vector<std::pair<std::string, int64_t>> sites;
  if (auto q = (*db)->Prepare("SELECT site, version FROM site_version"); q.ok()) {
    for (auto row = q->Step(); row.ok() && *row; row = q->Step()) sites.emplace_back(std::string(q->Text(0)), q->Int(1));
  }
  const int64_t now_ms = NowUnixMs();
  for (const auto& [site, version] : sites) {
    Result<std::string> epoch = RandomHex(8);
    Status s = epoch.status();
    if (s.ok()) {
      auto put = (*db)->Prepare("UPDATE site_version SET epoch=? WHERE site=?");
      s = put.ok() ? put->Bind(1, *epoch).Bind(2, site).Run() : put.status();
    }
    if (s.ok()) {
      auto mark = (*db)->Prepare("INSERT INTO outbox(kind,subject,payload,msg_id,created_ms) VALUES(?,?,?,?,?)");
      s = mark.ok() ? mark->Bind(1, int64_t{OutboxMsg::kStream}).Bind(2, bus::NotesSubject(site))
                          .BindBlob(3, bus::EncodeNoteEvent(bus::RestoredEvent(site, version)))
                          .Bind(4, site + ":restored:" + *epoch).Bind(5, now_ms).Run()
                    : mark.status();
    }
    if (!s.ok()) log::Warn("restore: cannot mark a site restored", {{"site", site}, {"error", s.message()}});
  }
}

}  // namespace

Status Restore(const BackupTarget& target, const std::string& name, std::string* restored_out,
               std::vector<std::string>* skipped) {
  const std::string& data_dir = target.data_dir;
  std::string db_path = data_dir + "/ingest.db";
  auto in_use = [&] {
    return Status(Code::kConflict, db_path + " is open in another process: stop folio-ingest before restoring");
  };
  if (sqlite::OpenedByAnotherProcess(db_path)) return in_use();
  std::string full = name;
  if (full.empty()) {
    auto newest = NewestSignedBackup(target, skipped);
    if (!newest.ok()) return newest.status();
    full = *newest;
  } else if (full.rfind(kBackupFolder, 0) != 0) {
    full = kBackupFolder + full;
  }
  std::string base = full.substr(std::string_view(kBackupFolder).size());
  if (!IsBackupBaseName(base)) return Status::Invalid("not a backup name: " + name);
  // Before a byte is downloaded: only what this ingest made is restored.
  std::string signed_sha;
  if (!VerifyBackupName(target.key, base, &signed_sha)) return Status::PermissionDenied(NotSigned(full, target.key));

  std::string stamp = UtcStamp(NowUnixMs());
  TempFile tmp{data_dir + "/ingest.db.restore-" + std::to_string(getpid()) + "-" + stamp + ".tmp"};
  const storage_client::Client client = StorageClientFor(target.storage);
  auto r = client.GetObjectFile(full, tmp.path, kTransferTimeoutMs);
  if (r.ok() && r->status == 404) return Status::NotFound("no backup named " + full + " in storage");
  if (!r.ok() || r->status != 200) return client.Error("downloading " + full, r);
  if (Status s = Verify(tmp.path, full, signed_sha); !s.ok()) return s;
  if (sqlite::OpenedByAnotherProcess(db_path)) return in_use();  // started while we downloaded
  if (Status s = Swap(data_dir, tmp.path, stamp); !s.ok()) return s;
  MarkRestored(db_path);
  *restored_out = full;
  return Status::Ok();
}

namespace {

// The key for RestoreIfEmpty: the one there is; with none, a new one only
// while storage holds no backups (nothing could be verified without the
// old one, and a new key would make every later restore refuse them).
Result<BackupKey> KeyForRestore(const std::string& data_dir, const std::string& key_file,
                                const StorageAccess& storage) {
  auto key = LoadBackupKey(data_dir, key_file, false);
  if (key.ok() || key.status().code() != Code::kNotFound) return key;
  auto all = ListBackups(storage);
  if (!all.ok()) return all.status();
  if (!all->empty()) {
    return Status::PermissionDenied(key.status().message() + ", and storage holds " + std::to_string(all->size()) +
                                    " backups under " + kBackupFolder +
                                    " that only the key which signed them can verify: give that key");
  }
  bool created = false;
  auto made = CreateBackupKeyFile(key_file.empty() ? data_dir + "/" + kBackupKeyFile : key_file, &created);
  if (made.ok() && created) log::Info("restore from storage: no backups and no key yet; made a new key", {{"key", made->path}});
  return made;
}

}  // namespace

Status RestoreIfEmpty(const std::string& data_dir, const std::string& key_file, const StorageAccess& storage,
                      std::string* restored_out) {
  restored_out->clear();
  std::error_code ec;
  if (fs::exists(data_dir + "/ingest.db", ec)) return Status::Ok();
  fs::create_directories(data_dir, ec);
  if (ec) return Status::Unavailable("cannot create " + data_dir + ": " + ec.message());
  auto key = KeyForRestore(data_dir, key_file, storage);
  if (!key.ok()) return key.status();
  const BackupTarget target{data_dir, storage, std::move(*key)};
  std::vector<std::string> skipped;
  auto names = SignedBackupsNewestFirst(target, &skipped);
  for (const std::string& n : skipped) log::Warn("restore: skipping a backup not signed by this key", {{"name", n}});
  if (!names.ok() && names.status().code() == Code::kNotFound) {
    log::Info("restore from storage: no backups yet; starting empty", {{"storage", storage.url}});
    return Status::Ok();
  }
  if (!names.ok()) return names.status();
  Status last;
  for (const std::string& name : *names) {
    std::vector<std::string> unused;
    last = Restore(target, name, restored_out, &unused);
    if (last.ok()) return last;
    // A damaged or substituted download: the next older signed backup.
    if (last.code() != Code::kInternal && last.code() != Code::kNotFound) return last;
    log::Warn("restore from storage: backup does not verify; trying an older one",
              {{"name", name}, {"error", last.message()}});
  }
  return Status::PermissionDenied("none of the " + std::to_string(names->size()) +
                                  " signed backups in storage verifies (the last: " + last.message() +
                                  "); refusing to start empty over them");
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
  auto target = TargetFromFlags(flags, true);
  if (!target.ok()) {
    fprintf(stderr, "folio-ingest backup: %s\n", target.status().message().c_str());
    return target.status().code() == Code::kInvalidArgument ? 2 : 1;
  }
  std::string name;
  if (Status s = Backup(*target, static_cast<int>(*keep), &name); !s.ok()) {
    fprintf(stderr, "folio-ingest backup: %s\n", s.message().c_str());
    return 1;
  }
  printf("%s\n", name.c_str());
  return 0;
}

int RunRestoreCommand(const Flags& flags) {
  const auto& pos = flags.positional();
  if (pos.size() > 2 || flags.Get("storage").empty()) {
    fprintf(stderr,
            "usage: folio-ingest restore [NAME] --storage URL --storage-token TOKEN [--data DIR] "
            "[--backup-key-file PATH]\n");
    return 2;
  }
  auto target = TargetFromFlags(flags, false);
  if (!target.ok()) {
    fprintf(stderr, "folio-ingest restore: %s (the current database was not changed)\n",
            target.status().message().c_str());
    return target.status().code() == Code::kInvalidArgument ? 2 : 1;
  }
  std::string restored;
  std::vector<std::string> skipped;
  Status s = Restore(*target, pos.size() == 2 ? pos[1] : "", &restored, &skipped);
  for (const std::string& name : skipped) {
    fprintf(stderr, "folio-ingest restore: warning: skipping %s: not signed by this ingest's backup key (%s)\n",
            name.c_str(), target->key.path.c_str());
  }
  if (!s.ok()) {
    fprintf(stderr, "folio-ingest restore: %s (the current database was not changed)\n", s.message().c_str());
    return 1;
  }
  if (pos.size() < 2) {
    // Chosen, not named: a rollback (newer backups deleted or refused) must show.
    fprintf(stderr, "folio-ingest restore: restoring %s, taken %s\n", restored.c_str(), TakenWhen(restored).c_str());
  }
  printf("%s\n", restored.c_str());
  return 0;
}

BackupMetrics::BackupMetrics(metrics::Registry* registry, int64_t interval_ms)
    : ok(registry->NewCounter("folio_ingest_backups_total", "Scheduled backups by result", {{"result", "ok"}})),
      error(registry->NewCounter("folio_ingest_backups_total", "Scheduled backups by result", {{"result", "error"}})),
      last_success(registry->NewGauge("folio_ingest_backup_last_success_timestamp_seconds",
                                      "Unix time the newest backup was stored (at start: the newest in storage"
                                      " this key signed); 0: none")),
      failing(registry->NewGauge("folio_ingest_backup_failing",
                                 "1 while the latest scheduled backup failed (cleared by the next success)")) {
  registry->NewGauge("folio_ingest_backup_interval_seconds", "--backup-every in seconds; 0: no scheduled backups")
      .Set(static_cast<double>(interval_ms) / 1000.0);
}

BackupSchedule::BackupSchedule(BackupTarget target, int keep, int64_t interval_ms, BackupMetrics* m)
    : target_(std::move(target)), keep_(keep), interval_ms_(interval_ms), m_(m) {}

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
  // The newest backup this key signed, whoever stored it: an ingest that
  // restarts more often than it backs up still shows how old that is
  // (FolioBackupTooOld). None yet, or storage unreachable: 0 until one.
  std::vector<std::string> skipped;
  if (auto newest = NewestSignedBackup(target_, &skipped); newest.ok()) {
    if (int64_t at = 0; TakenAt(*newest, &at)) m_->last_success.Set(static_cast<double>(at));
  }
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (cv_.wait_for(l, std::chrono::milliseconds(interval_ms_), [this] { return stop_; })) return;
    l.unlock();
    std::string name;
    Status s = Backup(target_, keep_, &name);
    if (s.ok()) {
      m_->ok.Increment();
      m_->last_success.SetToCurrentTime();
      m_->failing.Set(0);
      log::Info("backup stored", {{"object", name}});
    } else {
      m_->error.Increment();
      m_->failing.Set(1);
      log::Warn("backup failed; retrying at the next tick", {{"error", s.message()}});
    }
    l.lock();
  }
}

}  // namespace folio::ingest
