// Search replicas (issue 23), as real processes: nats-server -js,
// folio-ingest, folio-edge and two folio-search replicas, each with its own
// --replica-id (its own durable notes consumer) and its own --data.
//  - One note change: both replicas compute and publish the same related
//    lists, JetStream keeps one copy (Nats-Msg-Id), ingest applies it once.
//  - A replica that has not indexed the stream answers no query: the edge
//    gets no responders (503) rather than an incomplete answer.
//  - A steady query loop through the edge survives SIGKILL of one replica
//    with no failed search (the edge retries once within its deadline); the
//    replica restarted on its data catches up on what it missed, then joins
//    the queue group again.
#include <doctest/doctest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "folio/bus/bus.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"
#include "test_util.h"

using namespace folio;
using namespace folio::it;

namespace {

using Notes = std::vector<std::pair<std::string, std::string>>;

Notes Vault() {
  return {
      {"cats/siamese.md", "# Siamese cats\n\nSiamese cats are vocal, social cats with blue eyes; they purr.\n"},
      {"cats/persian.md", "# Persian cats\n\nPersian cats have long fur and need grooming; these cats purr.\n"},
      {"cats/kittens.md", "# Kittens\n\nKittens are young cats. A kitten sleeps, plays and purrs.\n"},
      {"db/sqlite.md", "# SQLite\n\nSQLite is an embedded SQL database engine with write-ahead logging.\n"},
      {"db/postgres.md", "# PostgreSQL\n\nPostgreSQL is a client-server SQL database with transactions.\n"},
      {"db/indexes.md", "# Database indexes\n\nA B-tree index lets an SQL database find rows fast.\n"},
  };
}

// One folio-search replica: its own port, --data and --replica-id.
class Replica {
 public:
  Replica(Cluster* c, std::string id, std::vector<std::string> extra = {})
      : c_(c), id_(std::move(id)), extra_(std::move(extra)) {}
  void Start() {
    std::vector<std::string> argv{testing::BinPath("folio-search"), "--listen", "127.0.0.1:" + std::to_string(port_),
                                  "--nats", c_->nats().url(), "--data", c_->dir() + "/search-" + id_,
                                  "--replica-id", id_};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    proc_ = std::make_unique<testing::Process>(argv, std::vector<std::string>{}, log());
    if (!testing::WaitForHttp(url() + "/livez", 200, 10000)) FAIL("replica " << id_ << " did not start\n" << Log());
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return c_->dir() + "/search-" + id_ + ".log"; }
  std::string Log() const { return ReadFile(log()); }
  double Metric(const std::string& series) const {
    auto r = http::Get(url() + "/metrics");
    return r.ok() ? it::Metric(r->body, series) : -1;
  }
  pid_t pid() const { return proc_ ? proc_->pid() : -1; }
  bool Ready() const {
    auto r = http::Get(url() + "/readyz");
    return r.ok() && r->status == 200;
  }
  void Stop(int signum) {
    if (proc_) proc_->Stop(signum);
    proc_.reset();
  }

 private:
  Cluster* c_;
  std::string id_;
  std::vector<std::string> extra_;
  int port_ = testing::FreePort();
  std::unique_ptr<testing::Process> proc_;
};

double IngestMetric(const Cluster& c, const std::string& series) {
  auto r = http::Get(c.ingest_url() + "/metrics");
  return r.ok() ? Metric(r->body, series) : -1;
}

const std::string kApplied = "folio_ingest_related_updates_total{result=\"applied\"}";
const std::string kMessages = "folio_search_related_messages_published_total";

uint64_t RelatedStreamLastSeq(Cluster& c) {
  bus::BusOptions o;
  o.url = c.nats().url();
  o.name = "search-replicas-test";
  auto b = bus::Bus::Connect(o);
  REQUIRE(b.ok());
  auto st = (*b)->GetStreamState("related");
  REQUIRE(st.ok());
  return st->last_seq;
}

// Both replicas indexed `notes` notes and answer queries.
void WaitServing(Cluster& c, std::vector<Replica*> replicas, double notes) {
  for (Replica* r : replicas) {
    bool ok = Eventually([&] {
      return r->Metric("folio_search_notes") == notes && r->Metric("folio_search_serving") == 1 && r->Ready();
    });
    if (!ok) FAIL("a replica did not index " << notes << " notes and serve:\n" << r->Log() << c.Logs());
  }
}

// Waits until the related stream, ingest and both replicas stop moving.
void WaitQuiet(Cluster& c, Replica& a, Replica& b) {
  auto snapshot = [&] {
    return std::to_string(RelatedStreamLastSeq(c)) + "/" + std::to_string(IngestMetric(c, kApplied)) + "/" +
           std::to_string(a.Metric(kMessages)) + "/" + std::to_string(b.Metric(kMessages));
  };
  std::string last = snapshot();
  int still = 0;
  for (int i = 0; i < 100 && still < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    std::string now = snapshot();
    still = now == last ? still + 1 : 0;
    last = now;
  }
}

}  // namespace

TEST_CASE("search replicas: one note change is published to the related stream and applied by ingest once") {
  Cluster c;
  Replica a(&c, "a"), b(&c, "b");
  a.Start();
  b.Start();
  REQUIRE(c.Push(PushBody(Vault())).status == 200);
  WaitServing(c, {&a, &b}, static_cast<double>(Vault().size()));
  WaitQuiet(c, a, b);

  uint64_t seq0 = RelatedStreamLastSeq(c);
  double applied0 = IngestMetric(c, kApplied);
  double a0 = a.Metric(kMessages), b0 = b.Metric(kMessages);
  REQUIRE(seq0 > 0);  // the vault's lists went out

  // The kitten note becomes one about databases: lists of both groups change.
  Notes change = {{"cats/kittens.md", "# Kittens\n\nKittens, an SQL database engine, with write-ahead logging "
                                      "and a B-tree index to find rows.\n"}};
  REQUIRE(c.Push(PushBody(change)).status == 200);
  bool published = Eventually([&] { return a.Metric(kMessages) > a0 && b.Metric(kMessages) > b0; });
  REQUIRE_MESSAGE(published, a.Log() << b.Log());
  WaitQuiet(c, a, b);

  double da = a.Metric(kMessages) - a0, db = b.Metric(kMessages) - b0;
  CHECK(da == db);  // both replicas published the same lists...
  uint64_t stored = RelatedStreamLastSeq(c) - seq0;
  CHECK(static_cast<double>(stored) == da);                 // ...the stream kept one copy...
  CHECK(IngestMetric(c, kApplied) - applied0 == da);        // ...and ingest applied it once
  // The page shows the new list.
  c.WaitForPage("/cats/kittens", 200, "db/");
}

TEST_CASE("search replicas: SIGKILL of one under query load fails no search; restarted, it catches up and rejoins") {
  Cluster c;
  Replica a(&c, "a"), b(&c, "b");
  a.Start();
  b.Start();
  REQUIRE(c.Push(PushBody(Vault())).status == 200);
  WaitServing(c, {&a, &b}, static_cast<double>(Vault().size()));

  // Four readers searching without pause through the edge. b is frozen
  // (SIGSTOP) for 300 ms, so that it surely holds requests when SIGKILL
  // comes, and they die with it. Their retries come a second after they were
  // sent (the edge's first attempt: half of --search-timeout-ms 2000), when
  // NATS has long dropped b, so they reach a. (A replica that hangs for
  // longer than an attempt is another matter: a retry may reach it again.)
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0}, failed{0};
  std::mutex mu;
  std::string first_failure;
  auto reader = [&] {
    while (!stop) {
      auto r = c.EdgeGet("/_/search?q=sqlite");
      ++sent;
      if (r.status != 200 || r.body.find("db/sqlite") == std::string::npos) {
        std::lock_guard l(mu);
        if (failed++ == 0) first_failure = std::to_string(r.status) + " " + r.body.substr(0, 300);
      }
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i) readers.emplace_back(reader);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  double b_answered = b.Metric("folio_search_queries_total{kind=\"search\"}");
  REQUIRE(kill(b.pid(), SIGSTOP) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  b.Stop(SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  stop = true;
  for (std::thread& t : readers) t.join();
  auto edge_metrics = http::Get(c.edge_url() + "/metrics");
  REQUIRE(edge_metrics.ok());
  double retries = Metric(edge_metrics->body, "folio_edge_search_retries_total");
  MESSAGE("searches " << sent.load() << ", failed " << failed.load() << ", retried " << retries);
  INFO("first failure: " << first_failure);
  CHECK(b_answered > 0);  // b took its share before it hung
  CHECK(sent.load() > 100);
  CHECK(retries > 0);     // requests b swallowed were sent again...
  CHECK(failed.load() == 0);  // ...and every search was answered

  // A note arrives while b is down; b, restarted on its data, catches up
  // (its consumer resumes) before it answers again.
  Notes more = {{"db/redis.md", "# Redis\n\nRedis is an in-memory key-value database.\n"}};
  REQUIRE(c.Push(PushBody(more)).status == 200);
  b.Start();
  WaitServing(c, {&a, &b}, static_cast<double>(Vault().size() + 1));
  CHECK(b.Log().find("caught up with the notes stream") != std::string::npos);
  bool rejoined = Eventually([&] {
    auto r = c.EdgeGet("/_/search?q=redis");
    CHECK(r.status == 200);
    return b.Metric("folio_search_queries_total{kind=\"search\"}") > 0;
  });
  CHECK_MESSAGE(rejoined, b.Log());
}

TEST_CASE("search replicas: a replica that has not caught up answers no query and says why in /readyz") {
  Cluster c;
  REQUIRE(c.Push(PushBody(Vault())).status == 200);
  // Its embeddings endpoint is down: it cannot index what is in the stream.
  Replica stuck(&c, "stuck", {"--embed-url", "http://127.0.0.1:" + std::to_string(testing::FreePort()) +
                                                 "/v1/embeddings"});
  stuck.Start();
  CHECK(Eventually([&] { return stuck.Metric("folio_search_embed_failures_total") >= 1; }));
  auto ready = http::Get(stuck.url() + "/readyz");
  REQUIRE(ready.ok());
  CHECK(ready->status == 503);
  CHECK(stuck.Metric("folio_search_serving") == 0);
  auto r = c.EdgeGet("/_/search?q=sqlite");
  CHECK(r.status == 503);  // no responders: not an empty result from a half-built index
  CHECK(stuck.Metric("folio_search_queries_total{kind=\"search\"}") == 0);

  // A healthy replica catches up and answers; the stuck one still does not.
  Replica a(&c, "a");
  a.Start();
  WaitServing(c, {&a}, static_cast<double>(Vault().size()));
  for (int i = 0; i < 10; ++i) {
    r = c.EdgeGet("/_/search?q=sqlite");
    CHECK(r.status == 200);
    CHECK(r.body.find("db/sqlite") != std::string::npos);
  }
  // It went back to the top of its loop (where it would join) since.
  CHECK(Eventually([&] { return stuck.Metric("folio_search_embed_failures_total") >= 2; }, 30000));
  INFO(stuck.Log());
  CHECK(stuck.Metric("folio_search_serving") == 0);
  CHECK(stuck.Metric("folio_search_queries_total{kind=\"search\"}") == 0);
  ready = http::Get(stuck.url() + "/readyz");
  REQUIRE(ready.ok());
  CHECK(ready->status == 503);
  CHECK(ready->body.find("indexing failed (notes wait in the stream)") != std::string::npos);
}
