#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>

#include "bus_internal.h"
#include "folio/bus/bus.h"
#include "folio/bus/page_schema.h"
#include "folio/testing/testing.h"

namespace folio::bus {
namespace {

// Collects what a watcher delivers, from its thread, for the test thread.
class Recorder {
 public:
  KvWatcher::OnEntry OnEntry() {
    return [this](KvEntry&& e) {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back((e.deleted ? "del " : "put ") + e.key + (e.deleted ? "" : "=" + e.value));
      if (!replayed_) ++initial_;
      cv_.notify_all();
    };
  }
  KvWatcher::OnReplayed OnReplayed() {
    return [this] {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back("replayed");
      replayed_ = true;
      cv_.notify_all();
    };
  }
  // Waits until `line` has been recorded.
  bool WaitFor(const std::string& line, int timeout_ms = 5000) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
      return std::find(log_.begin(), log_.end(), line) != log_.end();
    });
  }
  std::vector<std::string> log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> log_;  // GUARDED_BY(mu_)
  bool replayed_ = false;         // GUARDED_BY(mu_)
  int initial_ = 0;               // GUARDED_BY(mu_)
};

std::unique_ptr<Bus> ConnectTo(const testing::NatsServer& server) {
  BusOptions o;
  o.url = server.url();
  o.reconnect_wait_ms = 50;
  Result<std::unique_ptr<Bus>> bus = Bus::Connect(o);
  REQUIRE_MESSAGE(bus.ok(), bus.status().ToString());
  REQUIRE(bus.value()->EnsureSchema().ok());
  return std::move(bus).value();
}

void Put(Bus* bus, const std::string& key, const std::string& value) {
  REQUIRE(bus->KvPutAsync(kPagesBucket, key, value).ok());
  Status st = bus->WaitForAcks(5000);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
}

void Delete(Bus* bus, const std::string& key) {
  REQUIRE(bus->KvDeleteAsync(kPagesBucket, key).ok());
  REQUIRE(bus->WaitForAcks(5000).ok());
}

std::unique_ptr<KvWatcher> Watch(Bus* bus, Recorder* rec) {
  Result<std::unique_ptr<KvWatcher>> w = KvWatcher::Start(bus, kPagesBucket, rec->OnEntry(), rec->OnReplayed());
  REQUIRE_MESSAGE(w.ok(), w.status().ToString());
  return std::move(w).value();
}

// Restarts the server and waits until the bus has reconnected.
void RestartAndReconnect(testing::NatsServer* server, Bus* bus) {
  server->Restart();
  for (int i = 0; i < 200 && !bus->connected(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(bus->connected());
}

// Deletes every consumer of the pages stream on the server, as the loss of
// the server holding an ephemeral consumer does. Returns how many.
int DeleteConsumers(Bus* bus) {
  jsConsumerNamesList* names = nullptr;
  REQUIRE(js_ConsumerNames(&names, bus->impl()->js, "KV_pages", nullptr, nullptr) == NATS_OK);
  int n = names->Count;
  for (int i = 0; i < n; ++i) {
    CHECK(js_DeleteConsumer(bus->impl()->js, "KV_pages", names->List[i], nullptr, nullptr) == NATS_OK);
  }
  jsConsumerNamesList_Destroy(names);
  return n;
}

}  // namespace

TEST_CASE("watcher delivers current values, then replayed, then live changes") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  Put(bus.get(), "docs.a", "1");
  Put(bus.get(), "docs.a", "2");  // history 1: only the latest is replayed
  Put(bus.get(), "docs.b", "x");
  Put(bus.get(), "docs.c", "y");
  Delete(bus.get(), "docs.c");

  Recorder rec;
  auto watcher = Watch(bus.get(), &rec);
  REQUIRE(rec.WaitFor("replayed"));
  Put(bus.get(), "docs.d", "new");
  Delete(bus.get(), "docs.a");
  REQUIRE(rec.WaitFor("del docs.a"));
  std::vector<std::string> want = {"put docs.a=2", "put docs.b=x", "del docs.c", "replayed",
                                   "put docs.d=new", "del docs.a"};
  CHECK(rec.log() == want);
}

TEST_CASE("watcher on an empty bucket still reports replayed") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  Recorder rec;
  auto watcher = Watch(bus.get(), &rec);
  REQUIRE(rec.WaitFor("replayed"));
  Put(bus.get(), "docs.a", "1");
  REQUIRE(rec.WaitFor("put docs.a=1"));
  CHECK(rec.log() == std::vector<std::string>{"replayed", "put docs.a=1"});
}

TEST_CASE("watcher on a missing bucket fails with kNotFound") {
  testing::NatsServer server;
  BusOptions o;
  o.url = server.url();
  auto bus = Bus::Connect(o);
  REQUIRE(bus.ok());
  Recorder rec;
  auto w = KvWatcher::Start(bus.value().get(), kPagesBucket, rec.OnEntry(), rec.OnReplayed());
  CHECK(w.status().code() == Code::kNotFound);
}

TEST_CASE("watcher survives a nats-server restart") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  Put(bus.get(), "docs.before", "1");
  Recorder rec;
  auto watcher = Watch(bus.get(), &rec);
  REQUIRE(rec.WaitFor("replayed"));

  RestartAndReconnect(&server, bus.get());
  Put(bus.get(), "docs.after", "2");
  CHECK(bus->KvGet(kPagesBucket, "docs.before").ok());  // the store survived
  REQUIRE(rec.WaitFor("put docs.after=2", 10000));
  CHECK(rec.log() == std::vector<std::string>{"put docs.before=1", "replayed", "put docs.after=2"});
}

// Destroying a watcher must not race NATS.c's own re-creation of the
// ordered consumer after a reconnect (3.4.1 frees the consumer's name on
// its reset thread while an Unsubscribe from another thread still formats
// it: ASan saw a use-after-free here). The watcher stops without
// unsubscribing from another thread, promptly.
TEST_CASE("watcher destroyed right after a server restart stops promptly and cleanly") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  Put(bus.get(), "docs.a", "1");
  for (int round = 0; round < 3; ++round) {
    Recorder rec;
    auto watcher = Watch(bus.get(), &rec);
    REQUIRE(rec.WaitFor("replayed"));
    RestartAndReconnect(&server, bus.get());
    Put(bus.get(), "docs.r" + std::to_string(round), "x");
    auto t0 = std::chrono::steady_clock::now();
    watcher.reset();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    CHECK(ms.count() < 1000);
  }
}

// The watchdog alone (NATS.c's heartbeat check is pushed out to 60 s):
// once nothing arrives while the stream is ahead, a new consumer starts
// right after the last applied revision. Nothing is replayed or lost.
TEST_CASE("watcher whose consumer is lost resumes after the last applied revision") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  Put(bus.get(), "docs.a", "1");
  Recorder rec;
  KvWatchOptions wo;
  wo.heartbeat_ms = 30'000;
  wo.stall_ms = 300;
  auto w = KvWatcher::Start(bus.get(), kPagesBucket, rec.OnEntry(), rec.OnReplayed(), {}, wo);
  REQUIRE(w.ok());
  REQUIRE(rec.WaitFor("replayed"));
  Put(bus.get(), "docs.b", "2");
  REQUIRE(rec.WaitFor("put docs.b=2"));

  REQUIRE(DeleteConsumers(bus.get()) == 1);
  Put(bus.get(), "docs.c", "3");
  Delete(bus.get(), "docs.a");
  REQUIRE(rec.WaitFor("del docs.a", 10000));
  CHECK((*w)->resubscribes() >= 1);
  CHECK(rec.log() == std::vector<std::string>{"put docs.a=1", "replayed", "put docs.b=2", "put docs.c=3", "del docs.a"});
}

// A quiet bucket is not a stall: no consumer is replaced while the watcher
// has applied everything.
TEST_CASE("watcher on a quiet bucket keeps its consumer") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  Put(bus.get(), "docs.a", "1");
  Recorder rec;
  KvWatchOptions wo;
  wo.stall_ms = 100;
  auto w = KvWatcher::Start(bus.get(), kPagesBucket, rec.OnEntry(), rec.OnReplayed(), {}, wo);
  REQUIRE(w.ok());
  REQUIRE(rec.WaitFor("replayed"));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  CHECK((*w)->resubscribes() == 0);
}

// start_after: an edge that already holds the site up to a revision (a
// snapshot) receives only what came after it.
TEST_CASE("watcher started after a revision receives only later entries") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  Put(bus.get(), "docs.a", "1");
  Put(bus.get(), "docs.b", "2");
  Put(bus.get(), "docs.c", "3");
  Recorder rec;
  KvWatchOptions wo;
  wo.start_after = 2;
  auto w = KvWatcher::Start(bus.get(), kPagesBucket, rec.OnEntry(), rec.OnReplayed(), {}, wo);
  REQUIRE(w.ok());
  REQUIRE(rec.WaitFor("replayed"));
  Put(bus.get(), "docs.d", "4");
  REQUIRE(rec.WaitFor("put docs.d=4"));
  CHECK(rec.log() == std::vector<std::string>{"put docs.c=3", "replayed", "put docs.d=4"});

  // Already at the tip: replayed at once.
  Recorder tip;
  wo.start_after = 4;
  auto w2 = KvWatcher::Start(bus.get(), kPagesBucket, tip.OnEntry(), tip.OnReplayed(), {}, wo);
  REQUIRE(w2.ok());
  REQUIRE(tip.WaitFor("replayed"));
  CHECK(tip.log() == std::vector<std::string>{"replayed"});
}

}  // namespace folio::bus
