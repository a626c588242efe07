// Fault test: NATS stopped and restarted under reader traffic. Readers must
// not notice (the edge serves every page from memory: 0 failed requests, all
// 200), and once NATS is back, pushes made during and after the outage
// reach the edge without restarting anything.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "../integration/cluster.h"
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
