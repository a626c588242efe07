// Ingest backups in folio-storage (the issue "Ingest backups"): an online
// `folio-ingest backup` while ingest serves, retention with --backup-keep,
// `folio-ingest restore` of the newest backup after the database is lost,
// refusals (unknown name, corrupt backup, ingest running) that leave the
// current database alone, and --backup-every. Issue 9: restore trusts only
// backups this ingest signed (backup_key.h): planted objects under
// backups/ingest/ (unsigned, signed with another key, or a signed name with
// other bytes) are refused or skipped; the key travels with
// --backup-key-file; storage's write token is required.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cluster.h"
#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"

namespace folio::it {
namespace {

namespace fs = std::filesystem;

class Storage {
 public:
  Storage() : port_(testing::FreePort()) {
    proc_ = std::make_unique<testing::Process>(
        std::vector<std::string>{testing::BinPath("folio-storage"), "--listen", "127.0.0.1:" + std::to_string(port_),
                                 "--data", dir_.path() + "/journal", "--write-token", kStorageWriteToken,
                                 "--read-token", kStorageReadToken},
        std::vector<std::string>{}, dir_.path() + "/storage.log");
    REQUIRE(testing::WaitForHttp(url() + "/readyz", 200, 10000));
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // --storage and --storage-token for folio-ingest's commands and server.
  std::vector<std::string> Args() const { return {"--storage", url(), "--storage-token", kStorageWriteToken}; }
  void Stop() { proc_->Stop(); }
  http::ClientResponse Do(const std::string& method, const std::string& path, const std::string& body = "") {
    http::ClientRequest req;
    req.method = method;
    req.url = url() + path;
    req.body = body;
    req.headers.emplace_back("Authorization", std::string("Bearer ") + kStorageWriteToken);
    auto r = http::Fetch(req);
    return r.ok() ? *r : http::ClientResponse{};
  }
  // Names of the objects under backups/ingest/, in listing order.
  std::vector<std::string> Backups() {
    auto r = Do("GET", "/objects?prefix=backups/ingest/");
    std::vector<std::string> names;
    for (size_t at = 0; (at = r.body.find("\"name\":\"", at)) != std::string::npos;) {
      at += 8;
      names.push_back(r.body.substr(at, r.body.find('"', at) - at));
    }
    return names;
  }
  // Retention runs after the PUT is answered: poll for it.
  std::vector<std::string> WaitForBackupCount(size_t n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::vector<std::string> names;
    do {
      names = Backups();
      if (names.size() == n) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < deadline);
    return names;
  }

 private:
  testing::TempDir dir_;
  int port_;
  std::unique_ptr<testing::Process> proc_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::vector<std::string> Cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A backup's object name as ingest signs it (services/ingest/backup_key.h),
// computed here from the key file: the scheme is the contract under test.
std::string SignedName(const std::string& key, const std::string& stamp, const std::string& bytes) {
  std::string sha = Sha256Hex(bytes);
  std::string sig = HmacSha256Hex(key, "folio-backup-v1\n" + stamp + "\n" + sha).substr(0, 32);
  return "backups/ingest/" + stamp + "-" + sha + "-" + sig + ".db";
}

std::string KeyOf(Cluster& c) { return Trimmed(ReadFile(c.ingest_data_dir() + "/backup.key")); }

}  // namespace

TEST_CASE("backup: online backups, retention, restore of the newest, refusals") {
  Storage st;
  Cluster c;
  REQUIRE(c.Push(PushBody({{"first.md", "# First\n\nbacked up"}})).status == 200);
  std::string out, err;

  // While ingest runs (and a push is in flight).
  std::thread pusher([&] { c.Push(PushBody({{"concurrent.md", "# Concurrent"}})); });
  int rc = c.RunIngest(Cat({"backup"}, st.Args()), &out, &err);
  pusher.join();
  INFO("stderr: " << err << c.Logs());
  REQUIRE(rc == 0);
  std::string first_backup = Trimmed(out);
  CHECK(first_backup.rfind("backups/ingest/", 0) == 0);
  CHECK(first_backup.find('\n') == std::string::npos);
  CHECK(st.Backups() == std::vector<std::string>{first_backup});
  // No temp file is left behind in the data directory.
  for (const auto& e : fs::directory_iterator(c.ingest_data_dir())) {
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  }

  REQUIRE(c.Push(PushBody({{"second.md", "# Second\n\nin the newest backup"}})).status == 200);
  REQUIRE(c.RunIngest({"backup", "--storage", st.url() + "/", "--storage-token", kStorageWriteToken, "--backup-keep",
                       "1"},
                      &out, &err) == 0);
  std::string newest = Trimmed(out);
  CHECK(newest != first_backup);
  CHECK(st.WaitForBackupCount(1) == std::vector<std::string>{newest});

  // Not in the backup: must be gone after the restore.
  REQUIRE(c.Push(PushBody({{"third.md", "# Third\n\nnot backed up"}})).status == 200);

  // Refused while ingest has the database open.
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 1);
  CHECK(err.find("stop folio-ingest") != std::string::npos);

  c.StopIngest();
  std::string db = c.ingest_data_dir() + "/ingest.db";
  // Damage the database: it is replaced by garbage.
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
  { std::ofstream(db, std::ios::trunc) << "this is not a database"; }

  // A named backup that does not exist: clear message, nothing changes.
  const std::string absent = SignedName(KeyOf(c), "20000101T000000Z", "never stored");
  CHECK(c.RunIngest(Cat({"restore", absent}, st.Args()), &out, &err) == 1);
  CHECK(err.find("no backup named " + absent) != std::string::npos);
  CHECK(ReadFile(db) == "this is not a database");

  // A corrupt backup (garbage bytes under a name ingest would have signed for
  // them, stored later so it is the newest) fails integrity_check.
  const std::string corrupt = SignedName(KeyOf(c), "29990101T000000Z", std::string(8192, 'z'));
  REQUIRE(st.Do("PUT", "/objects/" + corrupt, std::string(8192, 'z')).status == 201);
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 1);
  CHECK(err.find(corrupt) != std::string::npos);
  CHECK(err.find("not signed") == std::string::npos);  // refused for its bytes, not its name
  CHECK(ReadFile(db) == "this is not a database");
  CHECK(st.Do("DELETE", "/objects/" + corrupt).status == 204);

  // Restore the newest backup.
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 0);
  INFO("restore stderr: " << err);
  CHECK(Trimmed(out) == newest);
  // Which one was taken, and how old it is (a rollback must show).
  CHECK(err.find("restoring " + newest + ", taken " + newest.substr(15, 16) + " (0 hours ago)") != std::string::npos);
  bool kept_aside = false;
  for (const auto& e : fs::directory_iterator(c.ingest_data_dir())) {
    std::string f = e.path().filename().string();
    if (f.rfind("ingest.db.before-restore-", 0) == 0 && ReadFile(e.path().string()) == "this is not a database") {
      kept_aside = true;
    }
    CHECK(f.find(".tmp") == std::string::npos);
  }
  CHECK(kept_aside);

  c.StartIngest();
  auto m = c.Manifest();
  REQUIRE(m.status == 200);
  CHECK(m.body.find("first.md") != std::string::npos);
  CHECK(m.body.find("second.md") != std::string::npos);
  CHECK(m.body.find("third.md") == std::string::npos);
  CHECK(c.WaitForPage("/second", 200, "in the newest backup").status == 200);
}

TEST_CASE("backup: a corrupt newest backup is refused and the current database is untouched") {
  Storage st;
  Cluster c;
  REQUIRE(c.Push(PushBody({{"keep.md", "# Keep"}})).status == 200);
  c.StopIngest();
  std::string db = c.ingest_data_dir() + "/ingest.db";
  std::string before = ReadFile(db);
  REQUIRE(!before.empty());
  // A real SQLite header followed by garbage pages, under a name signed by
  // this ingest's key (as if the database had been damaged when backed up).
  std::string out, err;
  REQUIRE(c.RunIngest(Cat({"backup"}, st.Args()), &out, &err) == 0);  // makes the key
  std::string bytes = before.substr(0, 100) + std::string(before.size() > 200 ? before.size() - 100 : 8192, '\x5a');
  const std::string name = SignedName(KeyOf(c), "29990101T000000Z", bytes);
  REQUIRE(st.Do("PUT", "/objects/" + name, bytes).status == 201);
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 1);
  CHECK(err.find(name) != std::string::npos);
  CHECK(err.find("not signed") == std::string::npos);  // refused for its bytes, not its name
  CHECK(err.find("not the file its name signs") == std::string::npos);
  CHECK(err.find("the current database was not changed") != std::string::npos);
  CHECK(ReadFile(db) == before);
  c.StartIngest();
  CHECK(c.Manifest().body.find("keep.md") != std::string::npos);
}

TEST_CASE("backup: --backup-every stores backups on a schedule") {
  Storage st;
  Cluster c(Cat(st.Args(), {"--backup-every", "1s", "--backup-keep", "2"}));
  REQUIRE(c.Push(PushBody({{"a.md", "# A"}})).status == 200);
  auto names = st.WaitForBackupCount(2);
  INFO(c.Logs());
  CHECK(names.size() == 2);
  auto metrics = http::Get(c.ingest_url() + "/metrics");
  REQUIRE(metrics.ok());
  CHECK(metrics->body.find("folio_ingest_backups_total{result=\"ok\"}") != std::string::npos);
  // Issue 24: the age and failure gauges the alerts read.
  CHECK(metrics->body.find("\nfolio_ingest_backup_interval_seconds 1\n") != std::string::npos);
  CHECK(metrics->body.find("\nfolio_ingest_backup_failing 0\n") != std::string::npos);
  size_t at = metrics->body.find("\nfolio_ingest_backup_last_success_timestamp_seconds ");
  REQUIRE(at != std::string::npos);
  double last = strtod(metrics->body.c_str() + at + 52, nullptr);
  double now = static_cast<double>(time(nullptr));
  CHECK(last > now - 60);
  CHECK(last <= now + 1);
}

TEST_CASE("backup: a scheduled backup that cannot reach storage counts an error and sets folio_ingest_backup_failing") {
  Storage st;
  Cluster c(Cat(st.Args(), {"--backup-every", "1s"}));
  REQUIRE(c.Push(PushBody({{"a.md", "# A"}})).status == 200);
  st.Stop();
  std::string body;
  for (int i = 0; i < 100; ++i) {
    auto m = http::Get(c.ingest_url() + "/metrics");
    if (m.ok() && m->body.find("\nfolio_ingest_backup_failing 1\n") != std::string::npos) {
      body = m->body;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(c.Logs());
  REQUIRE(!body.empty());
  CHECK(body.find("folio_ingest_backups_total{result=\"error\"} 0\n") == std::string::npos);
}

// The gauge FolioBackupTooOld reads, from ingest's /metrics (-1 if absent).
double LastBackupGauge(Cluster& c) {
  auto m = http::Get(c.ingest_url() + "/metrics");
  if (!m.ok()) return -1;
  const std::string name = "\nfolio_ingest_backup_last_success_timestamp_seconds ";
  size_t at = m->body.find(name);
  return at == std::string::npos ? -1 : strtod(m->body.c_str() + at + name.size(), nullptr);
}

TEST_CASE("backup: a restarted ingest reports the newest backup in storage before it makes one") {
  Storage st;
  // Hourly: no scheduled backup is made while the test runs.
  Cluster c(Cat(st.Args(), {"--backup-every", "1h"}));
  REQUIRE(c.Push(PushBody({{"a.md", "# A"}})).status == 200);
  CHECK(LastBackupGauge(c) == 0);  // none in storage yet
  std::string out, err;
  REQUIRE(c.RunIngest(Cat({"backup"}, st.Args()), &out, &err) == 0);
  const double taken = static_cast<double>(time(nullptr));
  c.StopIngest();
  c.StartIngest();
  // An ingest that restarts more often than it backs up still shows the
  // age of the newest backup (read from storage on start).
  double last = 0;
  for (int i = 0; i < 100 && last <= 0; ++i) {
    last = LastBackupGauge(c);
    if (last <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(c.Logs());
  CHECK(last > taken - 60);
  CHECK(last <= taken + 1);
}

// ingest.db and its -wal, to tell whether a refused restore touched them.
std::string DbState(Cluster& c) {
  std::string db = c.ingest_data_dir() + "/ingest.db";
  return ReadFile(db) + "|" + ReadFile(db + "-wal");
}

// No temp file and no database moved aside: nothing was restored.
void CheckNothingRestored(Cluster& c) {
  for (const auto& e : fs::directory_iterator(c.ingest_data_dir())) {
    std::string f = e.path().filename().string();
    CHECK(f.find(".tmp") == std::string::npos);
    CHECK(f.find("before-restore") == std::string::npos);
  }
}

TEST_CASE("backup: restore refuses planted backups and restores only what this ingest signed") {
  Storage st;
  Cluster c;
  REQUIRE(c.Push(PushBody({{"real.md", "# Real\n\nin the real backup"}})).status == 200);
  std::string out, err;
  REQUIRE(c.RunIngest(Cat({"backup"}, st.Args()), &out, &err) == 0);
  const std::string real = Trimmed(out);
  const std::string key_path = c.ingest_data_dir() + "/backup.key";
  // backups/ingest/<stamp>-<SHA-256 of the file>-<signature>.db
  const std::string real_bytes = st.Do("GET", "/objects/" + real).body;
  REQUIRE(!real_bytes.empty());
  CHECK(real.size() == std::string("backups/ingest/").size() + 16 + 1 + 64 + 1 + 32 + 3);
  CHECK(real.find("-" + Sha256Hex(real_bytes) + "-") != std::string::npos);
  CHECK(real == SignedName(KeyOf(c), real.substr(15, 16), real_bytes));
  REQUIRE(c.Push(PushBody({{"later.md", "# Later\n\nnot in the backup"}})).status == 200);
  c.StopIngest();
  const std::string before = DbState(c);

  // What an attacker who could write to storage would plant: a working
  // database (here the real backup's bytes; theirs would carry their token
  // hash), stored after the real backup so that it is the newest.
  struct Planted {
    const char* what;
    std::string name;
    std::string refusal;
  };
  const std::string not_signed = "is not signed by this ingest's backup key (" + key_path + "); refusing to restore it";
  const std::vector<Planted> planted{
      {"an unsigned name (as older versions made)",
       "backups/ingest/29990101T000000Z-" + Sha256Hex(real_bytes).substr(0, 12) + ".db", not_signed},
      {"a name signed with another key", SignedName("another ingest's key", "29990102T000000Z", real_bytes),
       not_signed},
      {"a name signed with this key for other bytes", SignedName(KeyOf(c), "29990103T000000Z", "other bytes"),
       "is not the file its name signs"},
  };
  for (const Planted& p : planted) {
    CAPTURE(p.what);
    REQUIRE(st.Do("PUT", "/objects/" + p.name, real_bytes).status == 201);
    CHECK(c.RunIngest(Cat({"restore", p.name}, st.Args()), &out, &err) == 1);
    CHECK(err.find("backup " + p.name + " " + p.refusal) != std::string::npos);
    CHECK(err.find("the current database was not changed") != std::string::npos);
    CHECK(out.empty());
    CHECK(DbState(c) == before);
    CheckNothingRestored(c);
  }

  // Without NAME: the newest backup with a verified name is taken (the third
  // plant has one: a refused download must not fall back to an older backup).
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 1);
  CHECK(err.find(planted[2].name) != std::string::npos);
  CHECK(DbState(c) == before);
  // Once it is gone, the unsigned ones are skipped, one warning each, and the
  // real backup is restored.
  REQUIRE(st.Do("DELETE", "/objects/" + planted[2].name).status == 204);
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 0);
  INFO("stderr: " << err);
  CHECK(Trimmed(out) == real);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(err.find("warning: skipping " + planted[i].name + ": not signed by this ingest's backup key") !=
          std::string::npos);
  }
  c.StartIngest();
  auto m = c.Manifest();
  REQUIRE(m.status == 200);
  CHECK(m.body.find("real.md") != std::string::npos);
  CHECK(m.body.find("later.md") == std::string::npos);
  c.StopIngest();

  // Nothing signed left: a clear refusal, the database untouched.
  REQUIRE(st.Do("DELETE", "/objects/" + real).status == 204);
  const std::string restored = DbState(c);
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 1);
  CHECK(err.find("none of the 2 backups in storage under backups/ingest/ is signed by this ingest's backup key (" +
                 key_path + ")") != std::string::npos);
  CHECK(DbState(c) == restored);
}

TEST_CASE("backup: an older signed backup stored again is not taken for the newest") {
  Storage st;
  Cluster c;
  REQUIRE(c.Push(PushBody({{"old.md", "# Old"}})).status == 200);
  std::string out, err;
  REQUIRE(c.RunIngest(Cat({"backup"}, st.Args()), &out, &err) == 0);
  const std::string older = Trimmed(out);
  REQUIRE(c.Push(PushBody({{"new.md", "# New"}})).status == 200);
  // Backups are named to the second: take the newer one in a later second.
  std::string newer;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    REQUIRE(c.RunIngest(Cat({"backup"}, st.Args()), &out, &err) == 0);
    newer = Trimmed(out);
  } while (newer.substr(0, 31) == older.substr(0, 31) && std::chrono::steady_clock::now() < deadline);
  REQUIRE(newer.substr(0, 31) > older.substr(0, 31));
  // Someone stores the older backup again, under its own (validly signed)
  // name: it is now the last object storage received.
  const std::string bytes = st.Do("GET", "/objects/" + older).body;
  REQUIRE(st.Do("DELETE", "/objects/" + older).status == 204);
  REQUIRE(st.Do("PUT", "/objects/" + older, bytes).status == 201);
  c.StopIngest();
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 0);
  CHECK(Trimmed(out) == newer);
  c.StartIngest();
  CHECK(c.Manifest().body.find("new.md") != std::string::npos);
}

TEST_CASE("backup: restoring elsewhere needs --backup-key-file; the storage token is required and checked") {
  Storage st;
  Cluster c;
  REQUIRE(c.Push(PushBody({{"moved.md", "# Moved\n\nto a new machine"}})).status == 200);
  std::string out, err;
  // No token, or the read token, or a wrong one: clear errors, nothing stored.
  CHECK(c.RunIngest({"backup", "--storage", st.url()}, &out, &err) == 2);
  CHECK(err.find("--storage-token") != std::string::npos);
  CHECK(err.find("write-token") != std::string::npos);
  CHECK(c.RunIngest({"backup", "--storage", st.url(), "--storage-token", kStorageReadToken}, &out, &err) == 1);
  CHECK(err.find("HTTP 403") != std::string::npos);
  CHECK(c.RunIngest({"backup", "--storage", st.url(), "--storage-token", "wrong"}, &out, &err) == 1);
  CHECK(err.find("HTTP 401") != std::string::npos);
  CHECK(st.Backups().empty());
  REQUIRE(c.RunIngest(Cat({"backup"}, st.Args()), &out, &err) == 0);
  const std::string name = Trimmed(out);
  c.StopIngest();
  CHECK(c.RunIngest({"restore", "--storage", st.url(), "--storage-token", "wrong"}, &out, &err) == 1);
  CHECK(err.find("HTTP 401") != std::string::npos);

  // A new machine: an empty data folder, the key copied aside.
  const std::string key_copy = c.dir() + "/backup.key.copy";
  fs::copy_file(c.ingest_data_dir() + "/backup.key", key_copy);
  fs::remove_all(c.ingest_data_dir());
  fs::create_directories(c.ingest_data_dir());
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 1);
  CHECK(err.find("no backup key at " + c.ingest_data_dir() + "/backup.key") != std::string::npos);
  CHECK(err.find("--backup-key-file") != std::string::npos);
  CHECK(!fs::exists(c.ingest_data_dir() + "/backup.key"));  // restore never makes a key
  CHECK(c.RunIngest(Cat(Cat({"restore"}, st.Args()), {"--backup-key-file", key_copy}), &out, &err) == 0);
  CHECK(Trimmed(out) == name);
  c.StartIngest();
  CHECK(c.Manifest().body.find("moved.md") != std::string::npos);
}

TEST_CASE("backup: restore pages through more than 1000 objects, whatever their names") {
  Storage st;
  Cluster c;
  REQUIRE(c.Push(PushBody({{"paged.md", "# Paged"}})).status == 200);
  std::string out, err;
  REQUIRE(c.RunIngest(Cat({"backup"}, st.Args()), &out, &err) == 0);
  const std::string real = Trimmed(out);
  // 1000 planted objects sort before it ("0-...", "1 ...": stamps start with
  // "2"), the last of the first page of the listing with a name that needs
  // percent-encoding in the next page's `after=`.
  const std::string odd = "backups/ingest/1 a&b+c#d%.db";
  std::vector<std::string> planted{odd};
  for (int i = 0; i < 999; ++i) planted.push_back("backups/ingest/0-" + std::to_string(1000 + i));
  std::atomic<size_t> next{0}, stored{0};
  std::vector<std::thread> putters;
  for (int t = 0; t < 8; ++t) {
    putters.emplace_back([&] {
      for (size_t i; (i = next++) < planted.size();) {
        if (st.Do("PUT", "/objects/" + PercentEncodePath(planted[i]), "planted").status == 201) ++stored;
      }
    });
  }
  for (auto& t : putters) t.join();
  REQUIRE(stored == planted.size());
  c.StopIngest();
  CHECK(c.RunIngest(Cat({"restore"}, st.Args()), &out, &err) == 0);
  INFO("stderr: " << err.substr(0, 2000));
  CHECK(Trimmed(out) == real);
  CHECK(err.find("warning: skipping " + odd + ":") != std::string::npos);
}

}  // namespace folio::it
