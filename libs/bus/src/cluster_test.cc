// The bus on a real 3-node JetStream cluster (testing::NatsCluster): a
// list of servers, replicas, scaling up, too many replicas, reconnects to
// another server, and the metrics that report them; a standalone server
// for the lag of a KvWatcher.
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "folio/bus/bus.h"
#include "folio/bus/page_schema.h"
#include "folio/testing/testing.h"

namespace folio::bus {
namespace {

std::unique_ptr<Bus> Connect(const std::string& urls, int replicas, BusMetrics* m = nullptr) {
  BusOptions o;
  o.url = urls;
  o.replicas = replicas;
  o.reconnect_wait_ms = 50;
  o.metrics = m;
  Result<std::unique_ptr<Bus>> bus = Bus::Connect(o);
  REQUIRE_MESSAGE(bus.ok(), bus.status().ToString());
  return std::move(*bus);
}

// Polls cond every 20 ms for up to timeout_ms.
template <typename Cond>
bool Eventually(Cond cond, int timeout_ms = 20000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

int ReplicasOf(Bus* bus, std::string_view stream) {
  auto st = bus->GetStreamState(stream);
  REQUIRE_MESSAGE(st.ok(), st.status().ToString());
  return st->replicas;
}

}  // namespace

TEST_CASE("bus cluster: replicas, scaling up, too many replicas, reconnects across servers") {
  testing::NatsCluster cluster(3);
  metrics::Registry registry;
  BusMetrics m(&registry);
  CHECK(m.connected.Value() == 0);

  // A dead server first in the list does not matter.
  std::string urls = "nats://127.0.0.1:" + std::to_string(testing::FreePort()) + "," + cluster.urls();
  auto bus = Connect(urls, 3, &m);
  CHECK(m.connected.Value() == 1);

  // More replicas than servers: a prompt, clear error, nothing created.
  {
    auto big = Connect(cluster.urls(), 5);
    auto t0 = std::chrono::steady_clock::now();
    Status s = big->EnsureSchema();
    CHECK(s.code() == Code::kUnavailable);
    CHECK_MESSAGE(s.message().find("insufficient resources") != std::string::npos, s.message());
    CHECK_MESSAGE(s.message().find("--nats-replicas") != std::string::npos, s.message());
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    CHECK(bus->GetStreamState("KV_pages").status().code() == Code::kNotFound);
  }

  // Created with 1, then a service asking 3 scales every asset up; one
  // asking 1 again leaves them at 3.
  {
    auto one = Connect(cluster.urls(), 1);
    REQUIRE(one->EnsureSchema().ok());
    for (std::string_view s : {"KV_pages", "notes", "related"}) CHECK(ReplicasOf(one.get(), s) == 1);
  }
  REQUIRE(bus->EnsureSchema().ok());
  for (std::string_view s : {"KV_pages", "notes", "related"}) CHECK(ReplicasOf(bus.get(), s) == 3);
  {
    auto one = Connect(cluster.urls(), 1);
    REQUIRE(one->EnsureSchema().ok());
    for (std::string_view s : {"KV_pages", "notes", "related"}) CHECK(ReplicasOf(one.get(), s) == 3);
  }

  // Just scaled up: the stream may elect a new leader before it takes writes.
  Status put;
  CHECK(Eventually([&] {
    put = bus->KvPutAsync(kPagesBucket, "k1", "v1");
    if (put.ok()) put = bus->WaitForAcks(3000);
    return put.ok();
  }, 30000));
  INFO(put.ToString());

  // Kill the server this client is on: it reconnects to another, counts
  // it, and the replicated bucket keeps its data and takes writes.
  int victim = -1;
  for (int i = 0; i < cluster.size(); ++i) {
    if (cluster.node(i).url() == bus->connected_url()) victim = i;
  }
  REQUIRE_MESSAGE(victim >= 0, bus->connected_url());
  cluster.node(victim).Kill();
  CHECK(Eventually([&] { return m.reconnects.Value() == 1; }));
  CHECK(bus->connected_url() != cluster.node(victim).url());
  CHECK(Eventually([&] { return bus->connected() && m.connected.Value() == 1; }));
  CHECK(Eventually([&] {
    if (!bus->KvPutAsync(kPagesBucket, "k2", "v2").ok()) return false;
    return bus->WaitForAcks(3000).ok();
  }, 30000));
  auto v1 = bus->KvGet(kPagesBucket, "k1");
  CHECK(v1.ok());
  if (v1.ok()) CHECK(*v1 == "v1");
  cluster.node(victim).Start();
  CHECK(cluster.WaitHealthy(60000));
}

TEST_CASE("bus cluster: connected and reconnects metrics follow the client's server") {
  testing::NatsServer server;
  metrics::Registry registry;
  BusMetrics m(&registry);
  auto bus = Connect(server.url(), 1, &m);
  CHECK(m.connected.Value() == 1);
  CHECK(m.reconnects.Value() == 0);
  server.Kill();
  CHECK(Eventually([&] { return m.connected.Value() == 0; }));
  server.Start();
  CHECK(Eventually([&] { return m.connected.Value() == 1 && m.reconnects.Value() == 1; }));
  std::string text = registry.Serialize();
  CHECK(text.find("folio_bus_connected 1") != std::string::npos);
  CHECK(text.find("folio_bus_reconnects_total 1") != std::string::npos);
  bus.reset();
  CHECK(m.connected.Value() == 0);
}

TEST_CASE("bus: a replica count a standalone server cannot hold fails clearly; bad URL lists are refused") {
  testing::NatsServer server;
  auto bus = Connect(server.url(), 3);
  Status s = bus->EnsureSchema();
  MESSAGE(s.ToString());
  CHECK_MESSAGE(s.code() == Code::kUnavailable, s.ToString());
  CHECK_MESSAGE(s.message().find("--nats-replicas") != std::string::npos, s.message());

  BusOptions o;
  o.url = server.url() + ",http://x";
  CHECK(Bus::Connect(o).status().code() == Code::kInvalidArgument);
  o.url = server.url();
  o.replicas = 0;
  CHECK(Bus::Connect(o).status().code() == Code::kInvalidArgument);
}

TEST_CASE("kv watcher lag: grows while entries are not applied, back to 0 once they are") {
  testing::NatsServer server;
  auto bus = Connect(server.url(), 1);
  REQUIRE(bus->EnsureSchema().ok());
  metrics::Registry registry;
  KvWatcherMetrics wm;
  wm.lag = &registry.NewGauge("lag", "l");
  wm.applied_revision = &registry.NewGauge("applied", "a");
  wm.poll_ms = 50;

  std::mutex mu;
  std::condition_variable cv;
  bool hold = false;  // GUARDED_BY(mu): on_entry blocks while set
  auto on_entry = [&](KvEntry&&) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !hold; });
  };
  auto w = KvWatcher::Start(bus.get(), kPagesBucket, on_entry, [] {}, wm);
  REQUIRE(w.ok());
  for (int i = 0; i < 3; ++i) REQUIRE(bus->KvPutAsync(kPagesBucket, "a" + std::to_string(i), "x").ok());
  REQUIRE(bus->WaitForAcks(10000).ok());
  CHECK(Eventually([&] { return wm.applied_revision->Value() == 3 && wm.lag->Value() == 0; }));

  {
    std::lock_guard<std::mutex> lock(mu);
    hold = true;
  }
  for (int i = 0; i < 10; ++i) REQUIRE(bus->KvPutAsync(kPagesBucket, "b" + std::to_string(i), "x").ok());
  REQUIRE(bus->WaitForAcks(10000).ok());
  // The first of them is held in on_entry: 10 not applied.
  CHECK(Eventually([&] { return wm.lag->Value() == 10; }));
  {
    std::lock_guard<std::mutex> lock(mu);
    hold = false;
  }
  cv.notify_all();
  CHECK(Eventually([&] { return wm.lag->Value() == 0 && wm.applied_revision->Value() == 13; }));

  // What the poller costs (reported, not asserted): one stream-info request.
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) REQUIRE(bus->GetStreamState("KV_pages").ok());
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("stream info request: " << us / 20 << " us each");
}

}  // namespace folio::bus
