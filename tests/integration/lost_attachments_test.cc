// Issue 23: storage lost an attachment's bytes (wiped, restored from an old
// disk) while ingest's manifest still lists its hash. `folio status` must
// not say "in sync" and `folio push` must send exactly the lost attachments
// again; then the edge serves them. And the check stays cheap at 10,000
// attachments.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cluster.h"
#include "folio/core/hash.h"
#include "test_util.h"

using namespace folio;
using namespace folio::it;

namespace {

Cluster* WithStorage(Cluster* c) {
  c->StartStorage();
  c->AddIngestArgs(c->IngestStorageArgs());
  c->AddIngestArgs({"--mermaid-url="});
  c->AddEdgeArgs(c->EdgeStorageArgs());
  c->StartIngest();
  c->StartEdge();
  return c;
}

}  // namespace

TEST_CASE("issue 23: attachments storage lost: folio status says so, folio push re-sends exactly those") {
  Cluster c({}, /*start_services=*/false);
  WithStorage(&c);
  const std::string small = RandomBytes(6'000, 1), big = RandomBytes(1'500'000, 2), kept = RandomBytes(5'000, 3);
  const std::string vault = c.dir() + "/vault";
  std::filesystem::create_directories(vault + "/media");
  WriteFile(vault + "/media/small.png", small);
  WriteFile(vault + "/media/big.pdf", big);  // over 1 MiB
  WriteFile(vault + "/media/kept.png", kept);
  WriteFile(vault + "/Note.md", "# Note\n\n![[small.png]]\n\n![[big.pdf]]\n\n![[kept.png]]\n");
  const std::vector<std::string> server{"--server", c.ingest_url(), "--token", kToken};
  auto cli = [&](std::vector<std::string> args, std::string* out) {
    args.insert(args.end(), server.begin(), server.end());
    return c.RunCli(args, out);
  };
  std::string out;
  INFO(c.Logs());
  REQUIRE(cli({"push", vault}, &out) == 0);
  CHECK(cli({"status", vault}, &out) == 0);
  CHECK(out.find("in sync") != std::string::npos);

  // Storage loses everything (killed, its data deleted, started empty);
  // one blob comes back by other means, so two are lost.
  c.StopStorage(9);
  std::filesystem::remove_all(c.dir() + "/storage");
  c.StartStorage();
  REQUIRE(c.StorageDo("PUT", "/blobs/sha256/" + Sha256Hex(kept), kept).status == 201);
  CHECK(c.EdgeGet(AssetPath(small, "small.png")).status != 200);

  // Within the census' listing age (5 s) status sees the loss.
  CHECK(Eventually([&] { return cli({"status", vault, "--json"}, &out) == 1; }, 15000));
  INFO(out);
  CHECK(out.find(R"("in_sync":false)") != std::string::npos);
  CHECK(out.find(R"("lost":["media/big.pdf","media/small.png"])") != std::string::npos);
  CHECK(out.find(R"("lost_count":2)") != std::string::npos);
  CHECK(cli({"status", vault}, &out) == 1);
  CHECK(out.find("2 lost by the server's storage: re-sent") != std::string::npos);

  // push sends the two, and only them.
  REQUIRE(cli({"push", vault, "--json"}, &out) == 0);
  CHECK(out.find(R"("attachments_sent":2)") != std::string::npos);
  CHECK(c.StorageDo("HEAD", "/blobs/sha256/" + Sha256Hex(small)).status == 200);
  CHECK(c.StorageDo("HEAD", "/blobs/sha256/" + Sha256Hex(big)).status == 200);
  // In sync at once (a blob the cached listing lacks is confirmed by a HEAD).
  CHECK(cli({"status", vault}, &out) == 0);
  CHECK(out.find("in sync") != std::string::npos);
  // And a second push has nothing to send.
  REQUIRE(cli({"push", vault, "--json"}, &out) == 0);
  CHECK(out.find(R"("attachments_sent":0)") != std::string::npos);
  for (const auto& [bytes, name] : std::vector<std::pair<std::string, std::string>>{
           {small, "small.png"}, {big, "big.pdf"}, {kept, "kept.png"}}) {
    auto served = c.WaitForPage(AssetPath(bytes, name), 200);
    CHECK(served.status == 200);
    CHECK(served.body == bytes);
  }
}

TEST_CASE("issue 23: the storage check of the manifest stays cheap at 10,000 attachments") {
  Cluster c({}, /*start_services=*/false);
  WithStorage(&c);
  const std::string vault = c.dir() + "/vault";
  std::filesystem::create_directories(vault + "/a");
  constexpr int kFiles = 10'000;
  for (int i = 0; i < kFiles; ++i) WriteFile(vault + "/a/f" + std::to_string(i) + ".png", RandomBytes(64, 1000 + i));
  std::string out;
  INFO(c.Logs());
  REQUIRE(c.RunCli({"push", vault, "--server", c.ingest_url(), "--token", kToken}, &out) == 0);

  auto timed = [&] {
    auto t0 = std::chrono::steady_clock::now();
    auto m = c.Manifest();
    REQUIRE(m.status == 200);
    CHECK(m.body.find(R"("missing_attachments":[])") != std::string::npos);
    CHECK(m.body.find("a/f9999.png") != std::string::npos);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(5'100));  // past the listing's age: the next one lists
  const double cold = timed(), warm = timed();
  MESSAGE("full manifest of " << kFiles << " attachments: " << cold << " ms with a fresh listing of storage, "
                              << warm << " ms with the cached one");
  CHECK(cold < 3'000);
  CHECK(warm < 1'500);

  // Storage wiped: every one of them is missing; one new listing says so, not 10,000 HEADs.
  c.StopStorage(9);
  std::filesystem::remove_all(c.dir() + "/storage");
  c.StartStorage();
  // Seen once the listing made before the wipe is older than its 5 s.
  CHECK(Eventually([&] { return c.Manifest().body.find(R"("missing_attachments":[")") != std::string::npos; }));
  auto t0 = std::chrono::steady_clock::now();
  auto m = c.Manifest();
  const double lost_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(m.status == 200);
  const size_t at = m.body.find(R"("missing_attachments":[")");
  REQUIRE(at != std::string::npos);
  CHECK(m.body.find("a/f9999.png", at) != std::string::npos);
  MESSAGE("the same manifest with all " << kFiles << " blobs lost: " << lost_ms << " ms");
  CHECK(lost_ms < 3'000);
}
