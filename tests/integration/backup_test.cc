// Ingest backups in folio-storage (the issue "Ingest backups"): an online
// `folio-ingest backup` while ingest serves, retention with --backup-keep,
// `folio-ingest restore` of the newest backup after the database is lost,
// refusals (unknown name, corrupt backup, ingest running) that leave the
// current database alone, and --backup-every.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cluster.h"
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
                                 "--data", dir_.path() + "/journal"},
        std::vector<std::string>{}, dir_.path() + "/storage.log");
    REQUIRE(testing::WaitForHttp(url() + "/readyz", 200, 10000));
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  http::ClientResponse Do(const std::string& method, const std::string& path, const std::string& body = "") {
    http::ClientRequest req;
    req.method = method;
    req.url = url() + path;
    req.body = body;
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

}  // namespace

TEST_CASE("backup: online backups, retention, restore of the newest, refusals") {
  Storage st;
  Cluster c;
  REQUIRE(c.Push(PushBody({{"first.md", "# First\n\nbacked up"}})).status == 200);
  std::string out, err;

  // While ingest runs (and a push is in flight).
  std::thread pusher([&] { c.Push(PushBody({{"concurrent.md", "# Concurrent"}})); });
  int rc = c.RunIngest({"backup", "--storage", st.url()}, &out, &err);
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
  REQUIRE(c.RunIngest({"backup", "--storage", st.url() + "/", "--backup-keep", "1"}, &out, &err) == 0);
  std::string newest = Trimmed(out);
  CHECK(newest != first_backup);
  CHECK(st.WaitForBackupCount(1) == std::vector<std::string>{newest});

  // Not in the backup: must be gone after the restore.
  REQUIRE(c.Push(PushBody({{"third.md", "# Third\n\nnot backed up"}})).status == 200);

  // Refused while ingest has the database open.
  CHECK(c.RunIngest({"restore", "--storage", st.url()}, &out, &err) == 1);
  CHECK(err.find("stop folio-ingest") != std::string::npos);

  c.StopIngest();
  std::string db = c.ingest_data_dir() + "/ingest.db";
  // Damage the database: it is replaced by garbage.
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
  { std::ofstream(db, std::ios::trunc) << "this is not a database"; }

  // A named backup that does not exist: clear message, nothing changes.
  CHECK(c.RunIngest({"restore", "20000101T000000Z-000000000000.db", "--storage", st.url()}, &out, &err) == 1);
  CHECK(err.find("no backup named backups/ingest/20000101T000000Z-000000000000.db") != std::string::npos);
  CHECK(ReadFile(db) == "this is not a database");

  // A corrupt backup (garbage bytes, stored later so it is the newest) is refused.
  REQUIRE(st.Do("PUT", "/objects/backups/ingest/29990101T000000Z-abcdefabcdef.db", std::string(8192, 'z')).status == 201);
  CHECK(c.RunIngest({"restore", "--storage", st.url()}, &out, &err) == 1);
  CHECK(err.find("29990101T000000Z-abcdefabcdef.db") != std::string::npos);
  CHECK(ReadFile(db) == "this is not a database");
  CHECK(st.Do("DELETE", "/objects/backups/ingest/29990101T000000Z-abcdefabcdef.db").status == 204);

  // Restore the newest backup.
  CHECK(c.RunIngest({"restore", "--storage", st.url()}, &out, &err) == 0);
  INFO("restore stderr: " << err);
  CHECK(Trimmed(out) == newest);
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
  // A real SQLite header followed by garbage pages.
  std::string bytes = before.substr(0, 100) + std::string(before.size() > 200 ? before.size() - 100 : 8192, '\x5a');
  REQUIRE(st.Do("PUT", "/objects/backups/ingest/29990101T000000Z-deadbeef0000.db", bytes).status == 201);
  std::string out, err;
  CHECK(c.RunIngest({"restore", "--storage", st.url()}, &out, &err) == 1);
  CHECK(err.find("the current database was not changed") != std::string::npos);
  CHECK(ReadFile(db) == before);
  c.StartIngest();
  CHECK(c.Manifest().body.find("keep.md") != std::string::npos);
}

TEST_CASE("backup: --backup-every stores backups on a schedule") {
  Storage st;
  Cluster c({"--storage", st.url(), "--backup-every", "1s", "--backup-keep", "2"});
  REQUIRE(c.Push(PushBody({{"a.md", "# A"}})).status == 200);
  auto names = st.WaitForBackupCount(2);
  INFO(c.Logs());
  CHECK(names.size() == 2);
  auto metrics = http::Get(c.ingest_url() + "/metrics");
  REQUIRE(metrics.ok());
  CHECK(metrics->body.find("folio_ingest_backups_total{result=\"ok\"}") != std::string::npos);
}

}  // namespace folio::it
