// Issue 23: --storage takes a list of storage replicas and every client
// (libs/storage_client: ingest's uploads, the edge's asset reads) fails
// over between them. Real folio-storage processes: one on a closed port,
// one stopped (SIGSTOP: it times out), one whose upload budget is taken (it
// answers 503), one killed while the edge serves its blobs.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "cluster.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/storage_client/storage_client.h"
#include "storage_process.h"
#include "test_util.h"

using namespace folio;
using namespace folio::it;
using storage_client::Client;
using storage_client::FaultPolicy;
using storage_client::TokenRole;

namespace {

int64_t MsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t).count();
}

std::string ClosedUrl() { return "http://127.0.0.1:" + std::to_string(testing::FreePort()); }

}  // namespace

TEST_CASE("issue 23: a client fails over past a closed port, a replica that times out, and one answering 503") {
  Storage good;
  const std::string blob = RandomBytes(200'000, 23);
  const std::string sha = Sha256Hex(blob);

  SUBCASE("the first URL is a closed port: every call works, and sticks to the replica that answered") {
    Client c({ClosedUrl() + "," + good.url(), kWrite}, TokenRole::kWrite, FaultPolicy::kRetryable);
    auto put = c.PutBlob(sha, blob, "application/octet-stream", 10'000);
    REQUIRE(put.ok());
    CHECK(put->status == 201);
    CHECK(c.preferred_url() == good.url());
    auto head = c.HeadBlob(sha, 10'000);
    REQUIRE(head.ok());
    CHECK(head->status == 200);
    auto got = c.GetBlob(sha, 10'000);
    REQUIRE(got.ok());
    CHECK(got->body == blob);
    // A streamed upload from a file, and its read back into one.
    testing::TempDir dir;
    const std::string backup = RandomBytes(3'000'000, 7);
    WriteFile(dir.path() + "/in", backup);
    auto up = c.PutObjectFile("backups/x.db", 2, "application/octet-stream", dir.path() + "/in", 10'000);
    REQUIRE(up.ok());
    CHECK(up->status / 100 == 2);
    auto down = c.GetObjectFile("backups/x.db", dir.path() + "/out", 10'000);
    REQUIRE(down.ok());
    CHECK(ReadFile(dir.path() + "/out") == backup);
    auto all = c.ListAllBlobs(10'000);
    REQUIRE(all.ok());
    CHECK(*all == std::vector<std::string>{sha});
  }

  SUBCASE("the first replica hangs (SIGSTOP): one timeout, then the next answers; the call stays bounded") {
    Storage hung;
    REQUIRE(good.Put(blob).status == 201);
    REQUIRE(kill(hung.pid(), SIGSTOP) == 0);
    Client c({hung.url() + "," + good.url(), kRead}, TokenRole::kRead, FaultPolicy::kClassify);
    auto t0 = std::chrono::steady_clock::now();
    auto got = c.GetBlob(sha, 1000);
    const int64_t took = MsSince(t0);
    kill(hung.pid(), SIGCONT);
    REQUIRE(got.ok());
    CHECK(got->status == 200);
    CHECK(got->body == blob);
    CHECK(took >= 900);
    CHECK(took < 2 * 1000 + 500);
    // Sticky: the next call goes to the replica that answered, at once.
    t0 = std::chrono::steady_clock::now();
    REQUIRE(c.HeadBlob(sha, 1000).ok());
    CHECK(MsSince(t0) < 500);
  }

  SUBCASE("the first replica answers 503 (its upload budget is held): the PUT goes to the next") {
    Storage busy({"--max-inflight-body-bytes", "2176KiB"});  // one upload's hold (storage's UploadHoldBytes)
    // An upload that never finishes holds the whole budget.
    int held = Connect(busy.port());
    REQUIRE(held >= 0);
    const std::string head = "PUT /blobs/sha256/" + std::string(64, 'a') + " HTTP/1.1\r\nHost: x\r\nAuthorization: "
                             "Bearer " + std::string(kWrite) + "\r\nContent-Length: 10000000\r\n\r\n" +
                             std::string(4096, 'x');
    REQUIRE(send(held, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size()));
    REQUIRE(Eventually([&] { return busy.Put(blob).status == 503; }, 5000));
    Client c({busy.url() + "," + good.url(), kWrite}, TokenRole::kWrite, FaultPolicy::kRetryable);
    auto put = c.PutBlob(sha, blob, "image/png", 10'000);
    close(held);
    REQUIRE(put.ok());
    CHECK(put->status == 201);
    CHECK(good.Do("HEAD", "/blobs/sha256/" + sha).status == 200);
    CHECK(busy.Do("HEAD", "/blobs/sha256/" + sha).status == 404);
  }

  SUBCASE("no replica answers: kUnavailable naming how many were tried") {
    Client c({ClosedUrl() + "," + ClosedUrl(), kRead}, TokenRole::kRead, FaultPolicy::kClassify);
    auto r = c.HeadBlob(sha, 1000);
    REQUIRE(!r.ok());
    CHECK(r.status().message().find("tried 2 of 2 storage replicas") != std::string::npos);
  }
}

namespace {

// A note embedding every attachment, and the attachments.
std::string NoteWithAttachments(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string note = "# Media\n\n";
  for (const auto& f : files) note += "![[" + f.first + "]]\n\n";
  return AttachmentsPushBody(files, "Media.md", note);
}

}  // namespace

TEST_CASE("issue 23: the edge and ingest on two storage replicas: killing the first costs readers nothing") {
  Storage s1, s2;
  const std::string list = s1.url() + "," + s2.url();
  Cluster c({}, /*start_services=*/false);
  c.AddIngestArgs({"--storage", list, "--storage-token", kWrite, "--mermaid-url="});
  // A 1 MiB cache keeps assets up to 128 KiB: big.bin is streamed, every read of it goes to storage.
  c.AddEdgeArgs({"--storage", list, "--storage-token", kRead, "--asset-cache", "1MiB"});
  c.StartIngest();
  c.StartEdge();

  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 0; i < 5; ++i) files.emplace_back("pic" + std::to_string(i) + ".png", RandomBytes(20'000, 100 + i));
  files.emplace_back("big.bin", RandomBytes(600'000, 200));
  auto pushed = c.Push(NoteWithAttachments(files));
  INFO(c.Logs());
  REQUIRE(pushed.status == 200);
  // Replication is storage's business: here both hold every blob because the test PUTs them to the second too.
  for (const auto& f : files) {
    CHECK(s1.Do("HEAD", "/blobs/sha256/" + Sha256Hex(f.second)).status == 200);
    CHECK(s2.Put(f.second, "application/octet-stream").status == 201);
  }
  REQUIRE(c.WaitForPage("/media", 200, "pic0.png").status == 200);
  auto first = c.EdgeGet(AssetPath(files[0].second, files[0].first));
  CHECK(first.status == 200);
  CHECK(first.body == files[0].second);

  s1.Kill();
  int errors = 0;
  for (int round = 0; round < 3; ++round) {
    for (const auto& [name, bytes] : files) {
      auto r = c.EdgeGet(AssetPath(bytes, name));
      if (r.status != 200 || r.body != bytes) ++errors;
    }
    auto part = c.EdgeGet(AssetPath(files[5].second, "big.bin"), {{"Range", "bytes=300000-300099"}});
    if (part.status != 206 || part.body != files[5].second.substr(300'000, 100)) ++errors;
  }
  CHECK(errors == 0);
  CHECK(Metric(c.EdgeGet("/metrics").body, "folio_edge_asset_fetch_errors_total") == 0);

  // Ingest uploads to the replica left, and stays ready (not degraded).
  const std::string late = RandomBytes(30'000, 300);
  auto again = c.Push(PushWithAttachment("late.md", "late.png", late));
  CHECK(again.status == 200);
  CHECK(s2.Do("HEAD", "/blobs/sha256/" + Sha256Hex(late)).status == 200);
  CHECK(c.WaitForPage(AssetPath(late, "late.png"), 200, "").body == late);
  CHECK(Eventually([&] {
    auto ready = http::Get(c.ingest_url() + "/readyz");
    return ready.ok() && ready->status == 200 && ready->body.find("degraded") == std::string::npos;
  }, 10000));
}

TEST_CASE("issue 23: backup and restore take the list; a malformed list is refused naming --storage") {
  Storage st;
  Cluster c;
  REQUIRE(c.Push(PushBody({{"kept.md", "# Kept\n\nbacked up through the second replica"}})).status == 200);
  const std::vector<std::string> storage{"--storage", ClosedUrl() + "," + st.url(), "--storage-token", kWrite};
  std::string out, err;
  std::vector<std::string> backup{"backup"};
  backup.insert(backup.end(), storage.begin(), storage.end());
  int rc = c.RunIngest(backup, &out, &err);
  INFO("stderr: " << err);
  REQUIRE(rc == 0);
  CHECK(out.rfind("backups/ingest/", 0) == 0);

  c.StopIngest();
  std::vector<std::string> restore{"restore"};
  restore.insert(restore.end(), storage.begin(), storage.end());
  CHECK(c.RunIngest(restore, &out, &err) == 0);
  c.StartIngest();
  CHECK(c.Manifest().body.find("kept.md") != std::string::npos);

  // A malformed entry: ingest's commands and the edge refuse to start, naming the flag and the entry.
  backup = {"backup", "--storage", st.url() + ",,http://b:1", "--storage-token", kWrite};
  CHECK(c.RunIngest(backup, &out, &err) != 0);
  CHECK(err.find("--storage: entry 2 (\"\") is empty") != std::string::npos);
  rc = testing::RunShell("'" + testing::BinPath("folio-edge") + "' --listen 127.0.0.1:0 --nats " + c.nats().url() +
                             " --storage '" + st.url() + ",storage-1:8083' --storage-token x",
                         &out);
  CHECK(rc == 1);
  CHECK(out.find("--storage: entry 2 (") != std::string::npos);  // the log quotes the entry's quotes
  CHECK(out.find("storage-1:8083") != std::string::npos);
  CHECK(out.find("does not start with http://") != std::string::npos);
}
