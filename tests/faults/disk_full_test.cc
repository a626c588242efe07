// Fault: a full disk (issue 9, items 6 and 8). Each service's data directory
// lives on a small tmpfs the test mounts; a filler file takes every free
// byte. Writes must fail with 507 no_space and keep nothing, /readyz must
// say 503 "disk full" (and the metric 1), reads must go on, and once the
// filler is deleted everything must work again within seconds, without a
// restart. Right after the state changes either way, /readyz and the
// disk-full gauge agree (issue 22: the gauge lagged by up to a second). Where mounting is not permitted (not root, no CAP_SYS_ADMIN) the
// cases skip with a message.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "../integration/cluster.h"
#include "../integration/test_util.h"
#include "folio/core/hash.h"

using namespace folio;
using namespace folio::it;

namespace {

// Printable, incompressible-ish note text of about n bytes.
std::string NoteText(const std::string& title, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s = "# " + title + "\n\n";
  while (s.size() < n) {
    for (int w = 0; w < 12; ++w) s += static_cast<char>('a' + rng() % 26), s += static_cast<char>('a' + rng() % 26);
    s += ' ';
    if (rng() % 8 == 0) s += "\n\n";
  }
  return s;
}

http::ClientResponse Do(const std::string& method, const std::string& url, const std::string& body = "",
                        std::vector<std::pair<std::string, std::string>> headers = {}) {
  http::ClientRequest req;
  req.method = method;
  req.url = url;
  req.body = body;
  req.headers = std::move(headers);
  auto r = http::Fetch(req);
  return r.ok() ? *r : http::ClientResponse{};
}

// A tmpfs for one service's data directory, linked where the Cluster puts
// that directory (<cluster dir>/<name>). Declared before the Cluster, so it
// is unmounted after the Cluster stopped its processes, also when a check
// failed.
struct SmallDisk {
  explicit SmallDisk(uint64_t bytes) : mount(root.path() + "/disk", bytes) {}
  bool Usable() {
    if (!mount.mounted()) MESSAGE("skipped: cannot mount a tmpfs for the full-disk test: " << mount.error());
    return mount.mounted();
  }
  void LinkAs(const std::string& path) { std::filesystem::create_directory_symlink(mount.dir(), path); }
  std::string filler() const { return mount.dir() + "/filler"; }
  testing::TempDir root;
  testing::TmpfsMount mount;
};

}  // namespace

TEST_CASE("faults: storage on a full disk refuses writes with 507, keeps reading, and recovers by itself") {
  SmallDisk disk(16u << 20);
  if (!disk.Usable()) return;
  Cluster c({}, /*start_services=*/false);
  disk.LinkAs(c.dir() + "/storage");
  c.StartStorage();
  INFO(c.Logs());
  const std::string blob = c.storage_url() + "/blobs/sha256/";
  const std::pair<std::string, std::string> auth{"Authorization", "Bearer " + c.storage_write_token()};
  auto put = [&](const std::string& data) {
    return Do("PUT", blob + Sha256Hex(data), data, {{"Content-Type", "image/png"}, auth});
  };
  auto get = [&](const std::string& data) { return Do("GET", blob + Sha256Hex(data), "", {auth}); };
  const std::string before = RandomBytes(300000, 1);
  REQUIRE(put(before).status == 201);
  REQUIRE(Do("GET", c.storage_url() + "/readyz").status == 200);

  REQUIRE(testing::FillDisk(disk.filler()) > 0);
  const std::string refused = RandomBytes(200000, 2);
  auto full = put(refused);
  CHECK(full.status == 507);
  CHECK(full.body.find("\"no_space\"") != std::string::npos);
  CHECK(full.body.find("nothing was kept") != std::string::npos);
  CHECK(get(refused).status == 404);
  // Known full: the next PUT is refused before its body is read.
  const std::string another = RandomBytes(100000, 3);
  auto again = put(another);
  CHECK(again.status == 507);
  CHECK(again.body.find("\"no_space\"") != std::string::npos);
  auto ready = Do("GET", c.storage_url() + "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body.find("disk full") != std::string::npos);
  // At once, not eventually: both read the one disk-full state.
  const std::string full_metrics = Do("GET", c.storage_url() + "/metrics").body;
  CHECK(Metric(full_metrics, "folio_storage_disk_full") == 1);
  CHECK(Metric(full_metrics, "folio_ready") == 0);
  CHECK(Metric(Do("GET", c.storage_url() + "/metrics").body, "folio_storage_write_failed") == 0);
  // Reads go on.
  auto read = get(before);
  CHECK(read.status == 200);
  CHECK(read.body == before);

  // Space returns: no restart needed.
  std::filesystem::remove(disk.filler());
  CHECK(Eventually([&] { return Do("GET", c.storage_url() + "/readyz").status == 200; }));
  CHECK(Metric(Do("GET", c.storage_url() + "/metrics").body, "folio_storage_disk_full") == 0);
  CHECK(put(refused).status == 201);
  auto back = get(refused);
  CHECK(back.status == 200);
  CHECK(back.body == refused);

  // Nothing of the failed writes stayed behind: a restart reads exactly
  // what was acknowledged, with no torn record to cut.
  c.StopStorage(9);
  c.StartStorage();
  CHECK(get(before).body == before);
  CHECK(get(refused).body == refused);
  CHECK(get(another).status == 404);
  const std::string logs = c.Logs();
  const size_t opened = logs.rfind("journal opened");
  REQUIRE(opened != std::string::npos);
  const std::string line = logs.substr(opened, logs.find('\n', opened) - opened);
  CHECK(line.find("truncated_bytes=0") != std::string::npos);
  CHECK(line.find("corrupt_records=0") != std::string::npos);
}

TEST_CASE("faults: ingest on a full disk answers 507, publishes nothing, and recovers by itself") {
  SmallDisk disk(32u << 20);
  if (!disk.Usable()) return;
  Cluster c({}, /*start_services=*/false);
  disk.LinkAs(c.ingest_data_dir());
  c.StartIngest();
  c.StartEdge();
  INFO(c.Logs());
  REQUIRE(c.Push(PushBody({{"A.md", "# A\n\nFirst version.\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/a", 200, "First version.").status == 200);
  REQUIRE(Eventually([&] { return Do("GET", c.ingest_url() + "/readyz").status == 200; }));
  const std::string manifest = c.Manifest().body;

  REQUIRE(testing::FillDisk(disk.filler()) > 0);
  // Megabytes of new text: more than SQLite's write-ahead log has room for.
  std::vector<std::pair<std::string, std::string>> big;
  for (int i = 0; i < 3; ++i) big.push_back({"B" + std::to_string(i) + ".md", NoteText("B" + std::to_string(i), 1 << 20, i)});
  big.push_back({"A.md", "# A\n\nSecond version.\n"});
  auto full = c.Push(PushBody(big));
  CHECK(full.status == 507);
  CHECK(full.body.find("\"no_space\"") != std::string::npos);
  CHECK(full.body.find("nothing was changed") != std::string::npos);
  CHECK(c.Manifest().body == manifest);  // ingest did not take the push for done
  auto ready = Do("GET", c.ingest_url() + "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body.find("disk full") != std::string::npos);
  CHECK(Metric(Do("GET", c.ingest_url() + "/metrics").body, "folio_ingest_disk_full") == 1);  // at once
  // Nothing was published: the edge serves what it served.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(c.EdgeGet("/a").body.find("First version.") != std::string::npos);
  CHECK(c.EdgeGet("/b0").status == 404);

  // Space returns: no restart needed.
  std::filesystem::remove(disk.filler());
  CHECK(Eventually([&] { return Do("GET", c.ingest_url() + "/readyz").status == 200; }));
  CHECK(Metric(Do("GET", c.ingest_url() + "/metrics").body, "folio_ingest_disk_full") == 0);  // at once
  auto ok = c.Push(PushBody(big));
  CHECK(ok.status == 200);
  CHECK(c.WaitForPage("/a", 200, "Second version.").status == 200);
  CHECK(c.WaitForPage("/b2", 200).status == 200);
}
