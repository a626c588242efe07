// Staged imports (issue 12: "a first import that renders each page once"):
// batches uploaded with POST /api/v1/push?stage=ID&batch=N and applied by
// one POST /api/v1/push/commit?stage=ID, against real nats-server, ingest,
// edge and the CLI.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "cluster.h"
#include "folio/sqlite/db.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;

namespace {

constexpr int kNotes = 30;

// Note i links to note_0, to a note of a later batch (unresolved until it
// arrives) and carries a tag; a few live in a folder.
std::pair<std::string, std::string> Note(int i) {
  std::string path = (i % 7 == 3 ? "folder/note_" : "note_") + std::to_string(i) + ".md";
  std::string body = "---\ntags: [t" + std::to_string(i % 3) + "]\n---\n# Note " + std::to_string(i) +
                     "\n\nSee [[note_0]] and [[note_" + std::to_string((i + 11) % kNotes) + "]].\n";
  return {path, body};
}

std::vector<std::pair<std::string, std::string>> Notes(int from, int to) {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = from; i < to; ++i) out.push_back(Note(i));
  return out;
}

// Every URL ingest holds a page for (the pages table), sorted.
std::vector<std::string> PageUrls(const Cluster& c) {
  auto db = sqlite::Db::Open(c.ingest_data_dir() + "/ingest.db");
  REQUIRE(db.ok());
  auto q = (*db)->Prepare("SELECT url FROM pages WHERE site='default' ORDER BY url");
  REQUIRE(q.ok());
  std::vector<std::string> urls;
  while (*q->Step()) urls.emplace_back(q->Text(0));
  return urls;
}

// A page body without the instants it was rendered at (feeds and sitemaps
// carry the commit's time, which differs between two deployments).
std::string WithoutInstants(const std::string& body) {
  static const std::regex instants("<((atom:)?updated|pubDate|lastmod|lastBuildDate)>[^<]*</\\1>");
  static const std::regex json_instants("\"date_(published|modified)\":\"[^\"]*\"");  // /feed.json
  return std::regex_replace(std::regex_replace(body, instants, ""), json_instants, "");
}

// The number of "push committed" lines in ingest's log.
int CommittedPushes(const Cluster& c) {
  std::ifstream in(c.dir() + "/ingest.log");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find("push committed") != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("a 3-batch staged import publishes the same site as one push, rendering each note once") {
  Cluster one;
  auto single = one.Push(PushBody(Notes(0, kNotes)));
  INFO(single.body);
  REQUIRE(single.status == 200);
  CHECK(JsonInt(single.body, "rendered") == kNotes);

  Cluster staged;
  for (int b = 0; b < 3; ++b) {
    auto r = Stage(staged, "import1", b, PushBody(Notes(b * 10, b * 10 + 10)));
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(JsonInt(r.body, "batches") == b + 1);
  }
  // A retried upload replaces its batch: harmless.
  auto again = Stage(staged, "import1", 1, PushBody(Notes(10, 20)));
  REQUIRE(again.status == 200);
  CHECK(JsonInt(again.body, "batches") == 3);
  // Nothing is applied before the commit.
  CHECK(JsonInt(staged.Manifest().body, "version") == 0);

  auto commit = CommitStage(staged, "import1", "commit-key-1");
  INFO(commit.body);
  INFO(staged.Logs());
  REQUIRE(commit.status == 200);
  CHECK(JsonInt(commit.body, "version") == 1);
  CHECK(JsonInt(commit.body, "received") == kNotes);
  CHECK(JsonInt(commit.body, "changed") == kNotes);
  CHECK(JsonInt(commit.body, "rendered") == kNotes);  // each note once: no re-render of earlier batches
  CHECK(CommittedPushes(staged) == 1);

  // A retried commit (same key) gets the same reply; nothing is applied again.
  auto retry = CommitStage(staged, "import1", "commit-key-1");
  REQUIRE(retry.status == 200);
  CHECK(retry.Header("Idempotent-Replayed") == "true");
  for (const char* k : {"version", "received", "changed", "rendered", "deleted"}) {
    CHECK_MESSAGE(JsonInt(retry.body, k) == JsonInt(commit.body, k), k);
  }
  CHECK(CommittedPushes(staged) == 1);
  // The key of another stage's commit is refused; the stage is gone once committed.
  CHECK(CommitStage(staged, "import2", "commit-key-1").status == 422);
  auto gone = CommitStage(staged, "import1");
  CHECK(gone.status == 404);
  CHECK(JsonErrorCode(gone.body) == "stage_not_found");

  // The same site, page for page.
  REQUIRE(one.WaitForPage("/note-29", 200).status == 200);
  REQUIRE(staged.WaitForPage("/note-29", 200).status == 200);
  std::vector<std::string> urls = PageUrls(one);
  CHECK(urls == PageUrls(staged));
  CHECK(urls.size() > static_cast<size_t>(kNotes));
  for (const std::string& url : urls) {
    if (url.rfind("/assets/", 0) == 0) continue;  // the stylesheet: the same build
    auto a = one.EdgeGet(url), b = staged.EdgeGet(url);
    CHECK_MESSAGE(a.status == b.status, url);
    CHECK_MESSAGE(WithoutInstants(a.body) == WithoutInstants(b.body), url);
  }
  // Links of the first batch to notes of the last resolved, and backlinks.
  auto first = staged.EdgeGet("/note-1");
  CHECK(first.body.find("href=\"/note-12\"") != std::string::npos);
  CHECK(first.body.find("link-dead") == std::string::npos);
  auto hub = staged.EdgeGet("/note-0");
  CHECK(hub.body.find("Backlinks") != std::string::npos);
  CHECK(hub.body.find("href=\"/note-29\"") != std::string::npos);
}

TEST_CASE("staged batches: malformed and over-limit ones get 4xx JSON and change nothing") {
  Cluster c({"--stage-max-bytes", "3000"});
  struct Bad {
    std::string path, body;
    int status;
    std::string code;
  };
  for (const Bad& b : std::vector<Bad>{
           {"/api/v1/push?stage=s1&batch=0", "{not json", 400, ""},
           {"/api/v1/push?stage=s1&batch=0", PushBody({{"../up.md", "x"}}), 400, ""},
           {"/api/v1/push?stage=bad%20id&batch=0", PushBody(Notes(0, 1)), 400, ""},
           {"/api/v1/push?stage=s1&batch=x", PushBody(Notes(0, 1)), 400, ""},
           {"/api/v1/push?stage=s1", PushBody(Notes(0, 1)), 400, ""},
           {"/api/v1/push/commit?stage=", "", 400, ""},
           {"/api/v1/push/commit?stage=s1", "{bad", 400, ""},
       }) {
    auto r = IngestPost(c, b.path, b.body);
    INFO(b.path << " " << b.body << " -> " << r.body);
    CHECK(r.status == b.status);
    CHECK(!JsonErrorCode(r.body).empty());
  }
  // Nothing was staged by them: committing s1 finds no batch.
  auto none = CommitStage(c, "s1");
  CHECK(none.status == 404);
  CHECK(JsonErrorCode(none.body) == "stage_not_found");

  REQUIRE(Stage(c, "s1", 0, PushBody(Notes(0, 10))).status == 200);  // ~1.3 KB
  auto big = Stage(c, "s1", 1, PushBody(Notes(10, 30)));           // ~2.7 KB: over 3000 together
  INFO(big.body);
  CHECK(big.status == 413);
  CHECK(JsonErrorField(big.body, "message").find("--stage-max-bytes") != std::string::npos);
  auto commit = CommitStage(c, "s1");
  INFO(commit.body);
  REQUIRE(commit.status == 200);
  CHECK(JsonInt(commit.body, "received") == 10);  // the refused batch left nothing behind
  CHECK(JsonInt(c.Manifest().body, "version") == 1);
}

TEST_CASE("an abandoned stage expires: its commit finds nothing and its bytes are free again") {
  Cluster c({"--stage-max-bytes", "3000", "--stage-ttl", "1s"});
  REQUIRE(Stage(c, "old", 0, PushBody(Notes(0, 15))).status == 200);
  // The writer's round drops it after the TTL without any other request.
  bool dropped = false;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       !dropped && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ifstream in(c.dir() + "/ingest.log");
    std::stringstream log;
    log << in.rdbuf();
    dropped = log.str().find("stale stages dropped") != std::string::npos;
  }
  auto m = http::Get(c.ingest_url() + "/metrics");
  REQUIRE(m.ok());
  CHECK(m->body.find("\nfolio_ingest_staged_bytes 0\n") != std::string::npos);
  INFO(c.Logs());
  CHECK(dropped);
  // The expired stage no longer counts against the bound: this fits only without it.
  auto fresh = Stage(c, "new", 0, PushBody(Notes(15, 30)));
  INFO(fresh.body);
  CHECK(fresh.status == 200);
  auto old = CommitStage(c, "old");
  CHECK(old.status == 404);
  CHECK(JsonErrorCode(old.body) == "stage_not_found");
  CHECK(JsonInt(c.Manifest().body, "version") == 0);
}

TEST_CASE("staged batches survive a SIGKILL of ingest; the commit after the restart applies them all") {
  Cluster c;
  REQUIRE(Stage(c, "crash", 0, PushBody(Notes(0, 15))).status == 200);
  REQUIRE(Stage(c, "crash", 1, PushBody(Notes(15, 30))).status == 200);
  c.StopIngest(9);
  c.StartIngest();
  auto commit = CommitStage(c, "crash", "k-crash");
  INFO(commit.body);
  INFO(c.Logs());
  REQUIRE(commit.status == 200);
  CHECK(JsonInt(commit.body, "rendered") == kNotes);
  CHECK(c.WaitForPage("/note-14", 200, "href=\"/note-25\"").status == 200);
}

TEST_CASE("a push committed between the uploads and the commit: the commit applies on top of it") {
  Cluster c;
  REQUIRE(Stage(c, "late", 0, PushBody({{"a.md", "# A staged\n"}, {"b.md", "# B staged\n"}})).status == 200);
  auto first = c.Push(PushBody({{"a.md", "# A pushed\n"}, {"c.md", "# C pushed\n"}}));
  REQUIRE(first.status == 200);
  CHECK(JsonInt(first.body, "version") == 1);
  auto commit = CommitStage(c, "late");
  INFO(commit.body);
  REQUIRE(commit.status == 200);
  CHECK(JsonInt(commit.body, "version") == 2);
  CHECK(JsonInt(commit.body, "changed") == 2);  // a.md (differs from the push's) and b.md
  CHECK(c.WaitForPage("/a", 200, "A staged").status == 200);   // the later write wins
  CHECK(c.WaitForPage("/b", 200, "B staged").status == 200);
  CHECK(c.WaitForPage("/c", 200, "C pushed").status == 200);   // the other push's note stays
}

TEST_CASE("folio push of a multi-batch vault stages its batches and commits them as one push") {
  Cluster c;
  testing::TempDir vault;
  for (int i = 0; i < kNotes; ++i) {
    auto [path, body] = Note(i);
    std::filesystem::create_directories(std::filesystem::path(vault.path() + "/" + path).parent_path());
    std::ofstream(vault.path() + "/" + path) << body;
  }
  std::string out;
  int rc = c.RunCli({"push", vault.path(), "--server", c.ingest_url(), "--token", kToken, "--batch-notes", "10"},
                    &out);
  INFO(out);
  INFO(c.Logs());
  REQUIRE(rc == 0);
  CHECK(CommittedPushes(c) == 1);
  CHECK(JsonInt(c.Manifest().body, "version") == 1);
  CHECK(c.WaitForPage("/note-1", 200, "href=\"/note-12\"").status == 200);
  // A second push with nothing changed sends nothing.
  rc = c.RunCli({"push", vault.path(), "--server", c.ingest_url(), "--token", kToken, "--batch-notes", "10"}, &out);
  CHECK(rc == 0);
  CHECK(CommittedPushes(c) == 1);
}
