// folio-storage replicated on NATS JetStream (issue 23): three real
// folio-storage processes with --replicated on a real 3-node nats-server -js
// cluster (--nats-replicas 3). A PUT on one replica is served by the
// others; a replica whose disk was wiped serves every blob at once
// (fetch-through) and fills its journal (missing-blobs gauge to 0); a
// DELETE on one is gone on all and not brought back by a refill; retention
// (keep=N) applies on every replica; listings agree; --nats-replicas 1 on
// a single server works.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "storage_process.h"
#include "test_util.h"

namespace folio::it {
namespace {

// --replicated with --nats: replicated.
std::vector<std::string> ReplicaArgs(const std::string& urls, int replicas) {
  return {"--replicated", "--nats", urls, "--nats-replicas", std::to_string(replicas)};
}

// The value of an unlabelled gauge in /metrics, -1 if absent.
double Gauge(Storage& s, const std::string& name) {
  auto r = s.Do("GET", "/metrics");
  size_t at = r.body.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(r.body.substr(at + name.size() + 2));
}

template <typename Pred>
bool WaitFor(Pred pred, int timeout_ms = 15000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

std::string Blob(const std::string& hex) { return "/blobs/sha256/" + hex; }

}  // namespace

TEST_CASE("storage replicated: 3 replicas on a 3-node JetStream cluster") {
  testing::NatsCluster nats(3);
  auto args = ReplicaArgs(nats.urls(), 3);
  Storage a(args), b(args), c(args);

  const std::string small = RandomBytes(4096, 11), big = RandomBytes((3 << 20) / 2 + 777, 12);
  const std::string hs = Sha256Hex(small), hb = Sha256Hex(big);
  REQUIRE(a.Put(small, "text/plain").status == 201);
  REQUIRE(a.Put(big).status == 201);
  // Present in the cluster: another replica says so without the body.
  CHECK(b.Put(small).status == 200);

  for (Storage* s : {&b, &c}) {
    auto g = s->Do("GET", Blob(hs));
    REQUIRE(g.status == 200);
    CHECK(g.body == small);
    CHECK(g.Header("content-type") == "text/plain");
    auto gb = s->Do("GET", Blob(hb));
    REQUIRE(gb.status == 200);
    CHECK(gb.body == big);
    // The 16-digit prefix lookup an edge makes.
    CHECK(s->Do("GET", Blob(hs.substr(0, 16))).body == small);
  }

  // Objects with retention: keep=2 of three backups, on every replica.
  for (int i = 1; i <= 3; ++i) {
    auto r = a.Do("PUT", "/objects/backups/b" + std::to_string(i) + "?keep=2", "backup " + std::to_string(i));
    REQUIRE(r.status == 201);
  }
  for (Storage* s : {&a, &b, &c}) {
    CHECK(WaitFor([&] { return s->Do("GET", "/objects/backups/b1").status == 404; }));
    CHECK(s->Do("GET", "/objects/backups/b3").body == "backup 3");
    CHECK(s->Do("GET", "/objects/backups/b2").body == "backup 2");
  }
  // An object overwritten on A: B and C answer the new version (their copy
  // of the old one is not current any more), with the same ETag.
  REQUIRE(a.Do("PUT", "/objects/notes/x", "version 1").status == 201);
  CHECK(WaitFor([&] { return b.Do("GET", "/objects/notes/x").body == "version 1"; }));
  REQUIRE(a.Do("PUT", "/objects/notes/x", "version 2").status == 201);
  for (Storage* s : {&b, &c}) {
    CHECK(WaitFor([&] { return s->Do("GET", "/objects/notes/x").body == "version 2"; }));
    CHECK(s->Do("GET", "/objects/notes/x").Header("etag") == a.Do("GET", "/objects/notes/x").Header("etag"));
  }
  // A body that does not match its hash is refused and known nowhere.
  const std::string liar = RandomBytes(2 << 20, 13);
  auto bad = a.Do("PUT", Blob(Sha256Hex("something else")), liar);
  CHECK(bad.status == 400);
  CHECK(b.Do("GET", Blob(Sha256Hex("something else"))).status == 404);

  // Listings: the cluster-wide view, the same on every replica.
  CHECK(WaitFor([&] { return a.Do("GET", "/blobs").body == c.Do("GET", "/blobs").body; }));
  auto listing = b.Do("GET", "/blobs");
  CHECK(listing.body.find(hs) != std::string::npos);
  CHECK(listing.body.find(hb) != std::string::npos);

  // C loses its disk: it serves every blob at once and fills its journal.
  c.Kill();
  std::filesystem::remove_all(c.data());
  c.Start();
  auto gc = c.Do("GET", Blob(hb));
  REQUIRE(gc.status == 200);
  CHECK(gc.body == big);
  CHECK(c.Do("GET", Blob(hs)).body == small);
  CHECK(WaitFor([&] { return Gauge(c, "folio_storage_replica_missing_blobs") == 0; }));
  CHECK(WaitFor([&] { return Gauge(c, "folio_storage_blobs") >= 5; }));
  CHECK(Gauge(c, "folio_bus_connected") == 1);
  CHECK(WaitFor([&] { return Gauge(c, "folio_storage_replica_watch_lag") == 0; }));
  CHECK(Gauge(c, "folio_storage_replica_fetch_failures_total") == 0);  // two blobs, two backups, one note in its own journal

  // DELETE on A (B down meanwhile, its disk kept): gone on C, gone on B once
  // it is back, and a refill of a wiped C does not bring it back.
  b.Stop();
  REQUIRE(a.Do("DELETE", Blob(hs)).status == 204);
  b.Start();
  for (Storage* s : {&b, &c}) {
    CHECK(WaitFor([&] { return s->Do("GET", Blob(hs)).status == 404; }));
  }
  c.Kill();
  std::filesystem::remove_all(c.data());
  c.Start();
  CHECK(WaitFor([&] { return Gauge(c, "folio_storage_replica_missing_blobs") == 0; }));
  CHECK(c.Do("GET", Blob(hs)).status == 404);
  CHECK(c.Do("GET", Blob(hb)).body == big);
  CHECK(c.Do("GET", "/blobs").body.find(hs) == std::string::npos);
  CHECK(b.Do("GET", "/blobs").body.find(hs) == std::string::npos);
}

TEST_CASE("storage replicated: --nats-replicas 1 on a single server") {
  testing::NatsServer nats;
  Storage a(ReplicaArgs(nats.url(), 1)), b(ReplicaArgs(nats.url(), 1));
  const std::string blob = RandomBytes(5000, 3);
  REQUIRE(a.Put(blob).status == 201);
  CHECK(WaitFor([&] { return b.Do("GET", Blob(Sha256Hex(blob))).body == blob; }));
}

TEST_CASE("storage replicated: needs both tokens") {
  testing::TempDir dir;
  std::string out;
  CHECK(RunToExit({"--replicated", "--data", dir.path() + "/j"}, &out) == 1);
  CHECK(out.find("needs --write-token and --read-token") != std::string::npos);
}

TEST_CASE("storage replicated: --nats alone (a shared FOLIO_NATS) is a single box that never talks to NATS") {
  // Nothing listens on port 1: a replicated storage could not start.
  Storage s({"--nats", "nats://127.0.0.1:1"});
  const std::string blob = RandomBytes(100, 4);
  CHECK(s.Put(blob).status == 201);
  CHECK(s.Do("GET", Blob(Sha256Hex(blob))).body == blob);
}

}  // namespace folio::it
