// Restarts and crashes: the edge comes back with every page; pages committed
// while NATS was away are published once it returns, even across an ingest crash.
#include <doctest/doctest.h>

#include "cluster.h"
#include "folio/sqlite/db.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;

TEST_CASE("an edge restart comes back with every page") {
  Cluster c;
  std::vector<std::pair<std::string, std::string>> notes;
  for (int i = 0; i < 50; ++i) notes.push_back({"n/note " + std::to_string(i) + ".md", "# Note " + std::to_string(i) + "\n"});
  REQUIRE(c.Push(PushBody(notes)).status == 200);
  REQUIRE(c.WaitForPage("/n/note-49", 200).status == 200);
  c.StopEdge();
  c.StartEdge();
  REQUIRE(testing::WaitForHttp(c.edge_url() + "/readyz", 200, 10000));
  // Ready means replayed: every page is there at once, no polling.
  for (int i = 0; i < 50; ++i) {
    CAPTURE(i);
    CHECK(c.EdgeGet("/n/note-" + std::to_string(i)).status == 200);
  }
}

TEST_CASE("pages committed while NATS is down are published after an ingest crash and restart") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Before.md", "# Before\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/before", 200).status == 200);

  c.nats().Stop();
  auto r = c.Push(PushBody({{"During.md", "# During the outage\n"}}));
  INFO(c.Logs());
  REQUIRE(r.status == 200);  // committed to SQLite
  CHECK(r.body.find("\"published\":false") != std::string::npos);
  c.StopIngest(9);  // crash before it could publish

  c.nats().Start();
  c.StartIngest();
  CHECK(c.WaitForPage("/during", 200, "During the outage", 15000).status == 200);
  CHECK(c.EdgeGet("/before").status == 200);
}

TEST_CASE("a wiped NATS gets every page republished by ingest") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Kept.md", "# Kept\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/kept", 200).status == 200);
  c.StopEdge();
  c.StopIngest();
  c.nats().Wipe();  // a new, empty JetStream store
  c.StartIngest();
  c.StartEdge();
  CHECK(c.WaitForPage("/kept", 200, "Kept", 15000).status == 200);
}

TEST_CASE("an ingest built with a new page layout re-renders every note page on start") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"A.md", "# A\n\nalpha\n"}, {"B.md", "# B\n\nbeta\n"}, {"Draft.md", "---\npublish: false\n---\n# D\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/a", 200, "alpha").status == 200);
  c.StopIngest();
  // Pretend the stored pages came from an older layout: another fingerprint,
  // and page bodies the old layout would have made.
  {
    auto db = sqlite::Db::Open(c.ingest_data_dir() + "/ingest.db");
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("UPDATE site_layout SET fingerprint = 'old-layout'").ok());
    auto rec = (*db)->Prepare("SELECT record FROM pages WHERE url = '/b'");
    REQUIRE(rec.ok());
    REQUIRE(*rec->Step());
    std::string record(rec->Blob(0));
    rec->Reset();
    auto put = (*db)->Prepare("UPDATE pages SET record = ? WHERE url = '/a'");
    REQUIRE(put.ok());
    REQUIRE(put->BindBlob(1, record).Run().ok());  // "/a" now holds B's old page
  }
  c.StartIngest();
  // The re-rendered page for /a is A again (and carries today's layout).
  auto page = c.WaitForPage("/a", 200, "alpha");
  CHECK(page.body.find("alpha") != std::string::npos);
  CHECK(page.body.find("role=\"search\"") != std::string::npos);
  // Drafts stay unpublished.
  CHECK(c.EdgeGet("/draft").status == 404);
  // The next start finds the current layout recorded: nothing to redo.
  c.StopIngest();
  c.StartIngest();
  REQUIRE(testing::WaitForHttp(c.ingest_url() + "/readyz", 200, 10000));
  std::string logs = c.Logs();
  size_t n = 0;
  for (size_t pos = 0; (pos = logs.find("layout changed", pos)) != std::string::npos; pos += 14) ++n;
  CHECK(n == 1);
}
