// KvLease against a real nats-server -js: one holder at a time, a released
// lease passes at once, a silent holder's lease only after the TTL, a holder
// cut off from NATS stops leading before the TTL and takes the lease back at
// the same revision when NATS returns (issue 23).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "folio/bus/bus.h"
#include "folio/bus/kv_lease.h"
#include "folio/testing/testing.h"

namespace folio::bus {
namespace {

using Clock = std::chrono::steady_clock;

template <typename Pred>
bool Within(int timeout_ms, Pred pred) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

LeaseOptions Opts(const std::string& holder) {
  LeaseOptions o;
  o.bucket = "test_lease";
  o.holder = holder;
  o.ttl_ms = 1'500;
  o.renew_ms = 250;
  return o;
}

std::unique_ptr<KvLease> StartLease(const std::string& url, const std::string& holder) {
  BusOptions bo;
  bo.url = url;
  auto l = KvLease::Start(bo, Opts(holder), nullptr);
  REQUIRE(l.ok());
  return std::move(*l);
}

}  // namespace

TEST_CASE("kv lease: rejects bad options") {
  BusOptions bo;
  LeaseOptions o = Opts("");
  CHECK(KvLease::Start(bo, o, nullptr).status().code() == Code::kInvalidArgument);
  o = Opts("a");
  o.ttl_ms = 2 * o.renew_ms;
  CHECK(KvLease::Start(bo, o, nullptr).status().code() == Code::kInvalidArgument);
}

TEST_CASE("kv lease: one holder; a release passes it at once; a silent holder's only after the TTL") {
  testing::NatsServer nats;
  auto a = StartLease(nats.url(), "a");
  REQUIRE(Within(3'000, [&] { return a->leading(); }));
  auto b = StartLease(nats.url(), "b");
  REQUIRE(Within(3'000, [&] { return b->holder() == "a"; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(2'000));  // past a TTL: a renews, so b waits
  CHECK(a->leading());
  CHECK(!b->leading());

  a.reset();  // releases
  CHECK(Within(1'000, [&] { return b->leading(); }));

  // "b" goes silent without releasing: its key as a dead holder left it.
  {
    auto bus = Bus::Connect(BusOptions{nats.url()});
    REQUIRE(bus.ok());
    b.reset();
    REQUIRE((*bus)->KvPutAsync("test_lease", "leader", "dead").ok());
    REQUIRE((*bus)->WaitForAcks(5'000).ok());
  }
  auto c = StartLease(nats.url(), "c");
  const auto started = Clock::now();
  REQUIRE(Within(5'000, [&] { return c->leading(); }));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  CAPTURE(took);
  CHECK(took >= 1'500);  // never before the TTL
  CHECK(took <= 1'500 + 2 * 250 + 1'000);
}

TEST_CASE("kv lease: cut off from NATS the holder stops leading before the TTL, and resumes at its revision") {
  testing::NatsServer nats;
  std::atomic<int> lost{0}, gained{0};
  BusOptions bo;
  bo.url = nats.url();
  auto l = KvLease::Start(bo, Opts("a"), [&](bool leading, const std::string&) { (leading ? gained : lost)++; });
  REQUIRE(l.ok());
  KvLease& a = **l;
  REQUIRE(Within(3'000, [&] { return a.leading(); }));
  nats.Stop();
  const auto stopped = Clock::now();
  REQUIRE(Within(3'000, [&] { return !a.leading(); }));
  auto after = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - stopped).count();
  CAPTURE(after);
  CHECK(after <= 1'500 - 2 * 250 + 100);  // the safe window, well inside the TTL
  nats.Start();
  CHECK(Within(10'000, [&] { return a.leading(); }));
  CHECK(lost.load() >= 1);
  CHECK(gained.load() >= 2);
}

TEST_CASE("bus: a fenced Bus sends nothing until the fence lifts") {
  testing::NatsServer nats;
  auto bus = Bus::Connect(BusOptions{nats.url()});
  REQUIRE(bus.ok());
  REQUIRE((*bus)->EnsureSchema().ok());
  std::atomic<bool> may{false};
  (*bus)->SetWriteFence([&] { return may.load(); });
  Status fenced = (*bus)->KvPutAsync("pages", "fence.k", "v");
  CHECK(fenced.code() == Code::kUnavailable);
  CHECK(fenced.message().find("fenced") != std::string::npos);
  CHECK((*bus)->PublishAsync("notes.fence", "x").code() == Code::kUnavailable);
  REQUIRE((*bus)->WaitForAcks(5'000).ok());
  CHECK((*bus)->KvGet("pages", "fence.k").status().code() == Code::kNotFound);
  may = true;
  REQUIRE((*bus)->KvPutAsync("pages", "fence.k", "v").ok());
  REQUIRE((*bus)->WaitForAcks(5'000).ok());
  CHECK((*bus)->KvGet("pages", "fence.k").ok());
}

}  // namespace folio::bus
