// Fault test: NATS stopped and restarted under reader traffic. Readers must
// not notice (the edge serves every page from memory: 0 failed requests, all
// 200), and once NATS is back, pushes made during (its first seconds: see the
// lease below) and after the outage reach the edge without restarting anything.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "../integration/cluster.h"
#include "../integration/test_util.h"
#include "folio/testing/load.h"

using namespace folio;
using namespace folio::it;

TEST_CASE("faults: a NATS outage under read load costs readers nothing; updates arrive after it") {
  Cluster c;
  constexpr int kNotes = 60;
  std::vector<std::pair<std::string, std::string>> notes;
  std::vector<std::string> paths;
  for (int i = 0; i < kNotes; ++i) {
    notes.push_back({"Outage/n" + std::to_string(i) + ".md", "# Page " + std::to_string(i) + "\n\nbefore\n"});
    paths.push_back("/outage/n" + std::to_string(i));
  }
  REQUIRE(c.Push(PushBody(notes)).status == 200);
  for (const std::string& p : paths) REQUIRE(c.WaitForPage(p, 200, "before").status == 200);

  testing::LoadOptions o;
  o.port = std::stoi(c.edge_url().substr(c.edge_url().rfind(':') + 1));
  o.paths = paths;
  o.connections = 4;
  o.pause_us = 500;
  o.accept_gzip = true;
  testing::HttpLoad load(o);
  load.Start();
  REQUIRE(load.WaitForResponses(200, 20000));

  c.nats().Stop();
  auto outage_start = std::chrono::steady_clock::now();
  // Readers keep being answered during the outage (at least 3 s of it)...
  CHECK(load.WaitForResponses(500, 20000));
  // ...and an author's push is committed (published later).
  http::ClientResponse during = c.Push(PushBody({{"Outage/n0.md", "# Page 0\n\nduring the outage\n"}}));
  CHECK(during.status == 200);
  CHECK(load.WaitForResponses(200, 20000));
  std::this_thread::sleep_until(outage_start + std::chrono::seconds(3));
  c.nats().Start();

  REQUIRE(c.Push(PushBody({{"Outage/n1.md", "# Page 1\n\nafter the outage\n"}})).status == 200);
  CHECK(c.WaitForPage("/outage/n0", 200, "during the outage", 30000).status == 200);
  CHECK(c.WaitForPage("/outage/n1", 200, "after the outage", 30000).status == 200);
  CHECK(load.WaitForResponses(200, 20000));
  testing::LoadStats s = load.Stop();
  INFO(s.Describe());
  INFO(c.Logs());
  MESSAGE("readers during the NATS outage: " << s.Describe());
  CHECK(s.errors == 0);
  CHECK(s.connect_errors == 0);
  CHECK(s.Count(200) == s.requests);
}

// One writer (issue 23): a leader that cannot renew its lease stops writing
// --lease-ttl − 2 × --lease-renew (6 s) after its last good renew, since
// another ingest may take over. A push in a longer outage gets 503 naming the
// lease and commits nothing; once NATS is back the lease is renewed and
// pushes go through.
TEST_CASE("faults: past the lease's margin in a NATS outage, pushes get 503 and commit nothing; they resume after it") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Lease/a.md", "# A\n\nbefore\n"}})).status == 200);
  const std::string manifest = c.Manifest().body;
  c.nats().Stop();
  std::this_thread::sleep_for(std::chrono::seconds(8));
  http::ClientResponse refused = c.Push(PushBody({{"Lease/a.md", "# A\n\nduring a long outage\n"}}));
  INFO(refused.body);
  INFO(c.Logs());
  CHECK(refused.status == 503);
  CHECK(refused.body.find("not_leader") != std::string::npos);
  CHECK(c.Manifest().body == manifest);  // nothing committed: the same version and hashes
  c.nats().Start();
  http::ClientResponse after;
  CHECK(Eventually([&] {
    after = c.Push(PushBody({{"Lease/a.md", "# A\n\nafter the outage\n"}}));
    return after.status == 200;
  }, 30000));
  CHECK(c.WaitForPage("/lease/a", 200, "after the outage", 30000).status == 200);
}
