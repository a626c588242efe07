// Search end to end: nats-server, folio-ingest, folio-edge and folio-search
// as real processes. A vault is pushed; search indexes it from the "notes"
// stream, answers queries in every mode (Latin and non-Latin scripts),
// computes related lists that ingest bakes into pages, survives a restart
// without embedding again, catches up on what it missed, and reports an
// unreachable embedding endpoint in /readyz and metrics.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <chrono>
#include <thread>

#include "cluster.h"
#include "folio/http/client.h"
#include "folio/testing/embedding_server.h"
#include "test_util.h"

namespace folio::it {
namespace {

using Notes = std::vector<std::pair<std::string, std::string>>;

Notes Vault() {
  return {
      {"cats/siamese.md",
       "---\ntitle: Siamese cats\n---\n# Siamese cats\n\nSiamese cats are vocal, social cats with blue eyes. A siamese cat likes company, "
       "purrs loudly and follows its owner. Cats groom their fur and chase mice.\n"},
      {"cats/persian.md",
       "---\ntitle: Persian cats\n---\n# Persian cats\n\nPersian cats have long fur and need grooming every day. A persian cat is calm; "
       "these cats purr, sleep and chase a toy mouse now and then.\n"},
      {"cats/kittens.md",
       "---\ntitle: Kittens\n---\n# Kittens\n\nKittens are young cats. A kitten sleeps, plays and purrs; kittens chase toy mice "
       "and learn to groom their fur from older cats.\n"},
      {"db/sqlite.md",
       "---\ntitle: SQLite\n---\n# SQLite\n\nSQLite is an embedded SQL database engine. Write-ahead logging (WAL) lets readers "
       "run while one writer commits transactions to the database file.\n"},
      {"db/postgres.md",
       "---\ntitle: PostgreSQL\n---\n# PostgreSQL\n\nPostgreSQL is a client-server SQL database. Transactions, indexes, the query "
       "planner and write-ahead logging keep the database consistent.\n"},
      {"db/indexes.md",
       "---\ntitle: Database indexes\n---\n# Database indexes\n\nA B-tree index lets the database find rows without scanning the table. "
       "SQL databases such as SQLite and PostgreSQL build indexes on columns.\n"},
      {"travel/tokyo.md",
       "---\ntitle: 東京旅行\n---\n# 東京旅行\n\n東京都庁の展望室から富士山が見えます。浅草寺と東京タワーも訪れました。東京の地下鉄は便利です。\n"},
      {"travel/moscow.md",
       "---\ntitle: Москва\n---\n# Москва\n\nКрасная площадь и Кремль — сердце Москвы. Метро Москвы красивое и быстрое.\n"},
  };
}

struct Hit {
  std::string path, url, title, snippet;
  double score = 0;
};

struct Reply {
  int status = 0;
  std::vector<Hit> hits;
  std::string body;
};

Reply Query(const Cluster& c, const std::string& endpoint, const std::string& query_string) {
  Reply out;
  auto r = http::Get(c.search_url() + endpoint + "?" + query_string);
  if (!r.ok()) return out;
  out.status = r->status;
  out.body = r->body;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(r->body).get(root) != simdjson::SUCCESS) return out;
  simdjson::dom::array hits;
  if (root["hits"].get(hits) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element h : hits) {
    Hit hit;
    std::string_view sv;
    if (h["path"].get(sv) == simdjson::SUCCESS) hit.path = sv;
    if (h["url"].get(sv) == simdjson::SUCCESS) hit.url = sv;
    if (h["title"].get(sv) == simdjson::SUCCESS) hit.title = sv;
    if (h["snippet"].get(sv) == simdjson::SUCCESS) hit.snippet = sv;
    double d = 0;
    if (h["score"].get(d) == simdjson::SUCCESS) hit.score = d;
    out.hits.push_back(std::move(hit));
  }
  return out;
}

std::string Enc(const std::string& s) {
  std::string out;
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char ch : s) {
    if (isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '/') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

Reply Search(const Cluster& c, const std::string& q, const std::string& mode, int k = 5) {
  return Query(c, "/api/v1/search", "site=default&q=" + Enc(q) + "&mode=" + mode + "&k=" + std::to_string(k));
}

Reply Related(const Cluster& c, const std::string& path) {
  return Query(c, "/api/v1/related", "site=default&path=" + Enc(path));
}

// The value of a series of the service at base_url (its /metrics), or -1.
double ServiceMetric(const std::string& base_url, const std::string& series) {
  auto r = http::Get(base_url + "/metrics");
  return r.ok() ? Metric(r->body, series) : -1;
}

bool Contains(const std::vector<Hit>& hits, const std::string& path) {
  for (const Hit& h : hits) {
    if (h.path == path) return true;
  }
  return false;
}

std::string Paths(const std::vector<Hit>& hits) {
  std::string s;
  for (const Hit& h : hits) s += h.path + " ";
  return s;
}

void PushVault(Cluster& c) {
  auto r = c.Push(PushBody(Vault()));
  REQUIRE(r.status == 200);
}

void WaitIndexed(Cluster& c, size_t notes) {
  bool ok = Eventually([&] { return ServiceMetric(c.search_url(), "folio_search_notes") == static_cast<double>(notes); });
  if (!ok) FAIL("search did not index " << notes << " notes:\n" << c.Logs());
}

}  // namespace

TEST_CASE("search: every mode finds the expected notes, in any script") {
  // Exact indexes (the default for small sites), and HNSW from the first vectors on.
  std::vector<std::string> args;
  SUBCASE("exact") {}
  SUBCASE("hnsw") { args = {"--hnsw-threshold", "2"}; }
  Cluster c;
  c.StartSearch(args);
  PushVault(c);
  WaitIndexed(c, Vault().size());

  SUBCASE("full text (BM25) ranks the note about the term first, with marked snippets") {
    Reply r = Search(c, "sqlite", "text");
    REQUIRE(r.status == 200);
    REQUIRE(!r.hits.empty());
    CHECK(r.hits[0].path == "db/sqlite.md");
    CHECK(r.hits[0].url == "/db/sqlite");
    CHECK(r.hits[0].title == "SQLite");
    CHECK(r.hits[0].snippet.find("<mark>") != std::string::npos);
    CHECK(!Contains(r.hits, "cats/siamese.md"));
  }
  SUBCASE("vector mode finds notes by meaning-bearing words without an exact phrase") {
    Reply r = Search(c, "cat purrs groom fur", "vector");
    REQUIRE(r.status == 200);
    REQUIRE(r.hits.size() >= 3);
    for (int i = 0; i < 3; ++i) CHECK_MESSAGE(r.hits[i].path.rfind("cats/", 0) == 0, Paths(r.hits));
  }
  SUBCASE("hybrid fuses both rankings") {
    Reply r = Search(c, "database transactions", "hybrid");
    REQUIRE(r.status == 200);
    REQUIRE(r.hits.size() >= 2);
    CHECK_MESSAGE(r.hits[0].path.rfind("db/", 0) == 0, Paths(r.hits));
    CHECK_MESSAGE(r.hits[1].path.rfind("db/", 0) == 0, Paths(r.hits));
  }
  SUBCASE("a Japanese query matches inside a longer run of kanji, in all modes") {
    for (const char* mode : {"text", "vector", "hybrid"}) {
      Reply r = Search(c, "東京", mode);
      REQUIRE(r.status == 200);
      REQUIRE_MESSAGE(!r.hits.empty(), mode);
      CHECK_MESSAGE(r.hits[0].path == "travel/tokyo.md", mode);
    }
    Reply r = Search(c, "富士山", "text");
    REQUIRE(!r.hits.empty());
    CHECK(r.hits[0].snippet.find("<mark>") != std::string::npos);
  }
  SUBCASE("a Cyrillic query") {
    Reply r = Search(c, "метро Москвы", "hybrid");
    REQUIRE(!r.hits.empty());
    CHECK(r.hits[0].path == "travel/moscow.md");
  }
  SUBCASE("the edge's /search page shows results from search over NATS") {
    auto page = c.WaitForPage("/_/search?q=sqlite", 200, "db/sqlite");
    CHECK(page.body.find("SQLite") != std::string::npos);
    CHECK(page.body.find("<mark>") != std::string::npos);
  }
  SUBCASE("bad queries get 4xx with a JSON error naming the problem") {
    Reply r = Query(c, "/api/v1/search", "site=default&q=");
    CHECK(r.status == 400);
    CHECK(r.body.find("\"error\"") != std::string::npos);
    CHECK(Query(c, "/api/v1/search", "site=default&q=x&k=0").status == 400);
    CHECK(Query(c, "/api/v1/search", "site=default&q=x&k=1000").status == 400);
    r = Query(c, "/api/v1/search", "site=default&q=x&mode=fuzzy");
    CHECK(r.status == 400);
    CHECK(r.body.find("mode") != std::string::npos);
    CHECK(Query(c, "/api/v1/search", "site=Bad_Site&q=x").status == 400);
    CHECK(Query(c, "/api/v1/search", "site=default&q=" + std::string(2000, 'a')).status == 400);
    CHECK(Query(c, "/api/v1/related", "site=default&path=nope.md").status == 404);
    // An unknown site has no notes: an empty answer, not an error.
    r = Query(c, "/api/v1/search", "site=other&q=cats");
    CHECK(r.status == 200);
    CHECK(r.hits.empty());
  }
}

TEST_CASE("search: what a reader means, end to end: aliases, link texts, stems, a note's language, typos, sections") {
  Cluster c;
  c.StartSearch();
  Notes notes = {
      {"features/Graph view.md",
       "---\naliases: [Network map]\n---\n# Graph view\n\nAn interactive picture of the vault.\n\n"
       "## Local graph\n\nThe local graph shows one note and its neighbours.\n"},
      {"Home.md", "---\ntitle: Home\n---\n# Home\n\nSee how your notes relate: [[Graph view|connections]].\n"},
      {"Kitchen sink.md", "---\ntitle: Kitchen sink\n---\n# Kitchen sink\n\nEvery feature in one place.\n"},
      {"Zeitung.md", "---\nlang: de\n---\n# Zeitung\n\nDie Zeitungen liegen auf dem Tisch.\n"},
      {"Garden.md", "---\ntitle: Garden\n---\n# Garden\n\nPlanting tomatoes in spring.\n"},
  };
  REQUIRE(c.Push(PushBody(notes)).status == 200);
  WaitIndexed(c, notes.size());
  CHECK(Eventually([&] { return ServiceMetric(c.search_url(), "folio_search_vocabulary_words") >= 20; }));
  CHECK(ServiceMetric(c.search_url(), "folio_search_vocabulary_bytes") > 0);
  // The words another note links with, and the note's aliases, name it
  // (the linking note holds the words too).
  Reply r = Search(c, "connections", "hybrid");
  CHECK_MESSAGE(Contains(r.hits, "features/Graph view.md"), r.body);
  r = Search(c, "network map", "text");
  REQUIRE(!r.hits.empty());
  CHECK(r.hits[0].path == "features/Graph view.md");
  // A typo of 5+ characters finds the word; a hit in a section links to its heading.
  r = Search(c, "kitchn", "hybrid");
  REQUIRE(!r.hits.empty());
  CHECK(r.hits[0].path == "Kitchen sink.md");
  r = Search(c, "neighbours local", "text");
  REQUIRE(!r.hits.empty());
  CHECK(r.hits[0].url == "/features/graph-view#local-graph");
  // Stems: in English by default, in the note's own language when it says so.
  r = Search(c, "neighbour", "text");
  REQUIRE(!r.hits.empty());
  CHECK(r.hits[0].path == "features/Graph view.md");
  r = Search(c, "zeitung", "text");
  REQUIRE(!r.hits.empty());
  CHECK(r.hits[0].path == "Zeitung.md");
  // The link goes: so does the name it taught.
  REQUIRE(c.Push(PushBody({{"Home.md", "---\ntitle: Home\n---\n# Home\n\nNothing links here.\n"}})).status == 200);
  CHECK(Eventually([&] { return !Contains(Search(c, "connections", "text").hits, "features/Graph view.md"); }));
}

TEST_CASE("search: related notes reach the pages, follow changes and survive a restart") {
  Cluster c;
  c.StartSearch();
  PushVault(c);
  WaitIndexed(c, Vault().size());

  // Related lists are computed when notes change, published, and baked into pages.
  Reply rel = Related(c, "cats/siamese.md");
  REQUIRE(rel.status == 200);
  REQUIRE(rel.hits.size() >= 2);
  CHECK_MESSAGE(rel.hits[0].path.rfind("cats/", 0) == 0, Paths(rel.hits));
  CHECK_MESSAGE(rel.hits[1].path.rfind("cats/", 0) == 0, Paths(rel.hits));
  auto page = c.WaitForPage("/cats/siamese", 200, "Related notes");
  REQUIRE(page.body.find("Related notes") != std::string::npos);
  CHECK(page.body.find("Persian cats") != std::string::npos);
  auto db_page = c.WaitForPage("/db/sqlite", 200, "Related notes");
  CHECK(db_page.body.find("PostgreSQL") != std::string::npos);

  // A note that changes topic moves between lists.
  auto r = c.Push(PushBody({{"db/indexes.md",
                             "---\ntitle: Cat trees\n---\n# Cat trees\n\nCat trees give cats a place to climb, groom their fur, purr and "
                             "sleep. Kittens and siamese cats love them.\n"}}));
  REQUIRE(r.status == 200);
  CHECK(Eventually([&] { return Contains(Related(c, "cats/siamese.md").hits, "db/indexes.md"); }));
  CHECK(Eventually([&] { return !Contains(Related(c, "db/sqlite.md").hits, "db/indexes.md"); }));
  CHECK(c.WaitForPage("/cats/siamese", 200, "Cat trees").body.find("Cat trees") != std::string::npos);

  // A deleted note leaves every list.
  r = c.Push(PushBody({}, {"cats/kittens.md"}));
  REQUIRE(r.status == 200);
  CHECK(Eventually([&] { return !Contains(Related(c, "cats/persian.md").hits, "cats/kittens.md"); }));
  WaitIndexed(c, Vault().size() - 1);

  // Restart: nothing is embedded again, answers are the same.
  double embedded_before = ServiceMetric(c.search_url(), "folio_search_embedded_texts_total");
  CHECK(embedded_before > 0);
  Reply before = Related(c, "cats/siamese.md");
  c.StopSearch();
  // Changes made while search is down are picked up from the durable consumer.
  r = c.Push(PushBody({{"travel/lisbon.md", "---\ntitle: Lisbon\n---\n# Lisbon\n\nTrams climb the hills of Lisbon; pastel de nata.\n"}}));
  REQUIRE(r.status == 200);
  c.StartSearch();
  CHECK(Eventually([&] { return Search(c, "lisbon trams", "text").hits.size() == 1; }));
  double embedded_after = ServiceMetric(c.search_url(), "folio_search_embedded_texts_total");
  CHECK_MESSAGE(embedded_after == 1.0, "re-embedded after restart: " << embedded_after);
  // The same lists as before (the new note may only have joined at the end).
  Reply after = Related(c, "cats/siamese.md");
  REQUIRE(after.hits.size() >= before.hits.size());
  after.hits.resize(before.hits.size());
  CHECK(Paths(after.hits) == Paths(before.hits));
  CHECK(Search(c, "sqlite", "text").hits.at(0).path == "db/sqlite.md");

  // Another embedder (here: another dimension) makes the stored vectors
  // useless: every note is embedded again once, from the stored texts.
  c.StopSearch();
  c.StartSearch({"--embed-dim", "128"});
  CHECK(Eventually([&] { return ServiceMetric(c.search_url(), "folio_search_vectors") >= Vault().size(); }));
  Reply r128 = Search(c, "cat purrs groom fur", "vector");
  REQUIRE(!r128.hits.empty());
  CHECK(r128.hits[0].path.rfind("cats/", 0) == 0);
  CHECK(c.Logs().find("the embedder changed") != std::string::npos);
}

TEST_CASE("search: an OpenAI-compatible embedding endpoint, and what happens when it is down") {
  testing::EmbeddingTestServer embed(256);
  Cluster c;
  c.StartSearch({"--embed-url", embed.url(), "--embed-model", "bge-test", "--embed-dim", "256",
                 "--embed-api-key-env", "FOLIO_TEST_KEY_UNSET"});
  PushVault(c);
  WaitIndexed(c, Vault().size());
  CHECK(embed.requests() >= 1);
  for (const std::string& m : embed.models()) CHECK(m == "bge-test");
  Reply r = Search(c, "cat purrs groom fur", "vector");
  REQUIRE(!r.hits.empty());
  CHECK(r.hits[0].path.rfind("cats/", 0) == 0);
  CHECK(http::Get(c.search_url() + "/readyz")->status == 200);

  // The endpoint goes down: indexing stops (nothing lost), /readyz and metrics say why.
  embed.SetFailing(503);
  REQUIRE(c.Push(PushBody({{"notes/new.md", "---\ntitle: New\n---\n# New\n\nA new note about lighthouses.\n"}})).status == 200);
  CHECK(Eventually([&] { return http::Get(c.search_url() + "/readyz")->status == 503; }));
  auto ready = http::Get(c.search_url() + "/readyz");
  CHECK(ready->body.find("embed") != std::string::npos);
  CHECK(ServiceMetric(c.search_url(), "folio_search_embedder_up") == 0.0);
  // Queries in text mode still work; vector queries report the embedder.
  CHECK(Search(c, "sqlite", "text").hits.at(0).path == "db/sqlite.md");
  CHECK(Search(c, "sqlite", "vector").status == 503);

  // It comes back: the waiting note is indexed, readiness returns.
  embed.SetFailing(0);
  CHECK(Eventually([&] { return Search(c, "lighthouses", "text").hits.size() == 1; }, 40000));
  CHECK(Eventually([&] { return http::Get(c.search_url() + "/readyz")->status == 200; }));
  CHECK(ServiceMetric(c.search_url(), "folio_search_embedder_up") == 1.0);
}

}  // namespace folio::it
