// `folio push` with its local index (.folio/index) and manifest deltas
// against real nats-server + ingest processes: a second push reads only the
// changed file, a push from another copy of the vault is seen, --full and a
// corrupt index take the full path, and the manifest's ?since is checked.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cluster.h"
#include "test_util.h"
#include "folio/http/client.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;
namespace fs = std::filesystem;

namespace {

// An mtime far from "now", so the index's racy-mtime rule (a file changed
// within a second of the walk is hashed again) does not blur the counts.
void Age(const fs::path& path, time_t mtime = 1'600'000'000) {
  timespec ts[2] = {{mtime, 0}, {mtime, 0}};
  if (fs::is_regular_file(path)) {
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), ts, 0) == 0);
    return;
  }
  for (const auto& e : fs::recursive_directory_iterator(path)) {
    if (e.is_regular_file()) REQUIRE(::utimensat(AT_FDCWD, e.path().c_str(), ts, 0) == 0);
  }
}

// The --json summary line of a push's output ("" if none).
std::string Summary(const std::string& out) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("{\"sent\"")) return line;
  }
  return "";
}

std::string JsonStr(const std::string& body, const char* key) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  std::string_view v;
  if (p.parse(body).get(doc) || doc[key].get_string().get(v)) return "";
  return std::string(v);
}

struct Pushed {
  int rc;
  std::string out, summary;
};

Pushed Push(Cluster& c, const fs::path& vault, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"push", vault.string(), "--server", c.ingest_url(), "--token", kToken, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  Pushed p;
  p.rc = c.RunCli(args, &p.out);
  p.summary = Summary(p.out);
  return p;
}

}  // namespace

TEST_CASE("CLI index: the second push hashes only the changed file; another copy's push is seen") {
  Cluster c;
  testing::TempDir tmp;
  const fs::path a = fs::path(tmp.path()) / "a", b = fs::path(tmp.path()) / "b";
  for (int i = 0; i < 5; ++i) WriteFile(a / ("n" + std::to_string(i) + ".md"), "# Note " + std::to_string(i) + "\n");
  WriteFile(a / "Media" / "p.png", "not really a png");
  Age(a);

  Pushed first = Push(c, a);
  INFO(first.out);
  REQUIRE(first.rc == 0);
  CHECK(JsonInt(first.summary, "hashed") == 6);
  CHECK(JsonInt(first.summary, "files") == 6);
  CHECK(JsonStr(first.summary, "manifest") == "full");
  // The index names the server and the site the token selected.
  std::string index = ReadFile(a / ".folio" / "index");
  std::string site = JsonStr(c.Manifest().body, "site");
  CHECK_FALSE(site.empty());
  CHECK(index.find("server\t" + c.ingest_url() + "\n") != std::string::npos);
  CHECK(index.find("site\t" + site + "\n") != std::string::npos);

  WriteFile(a / "n1.md", "# Note 1, edited\n");
  Age(a / "n1.md", 1'600'000'100);
  Pushed second = Push(c, a);
  INFO(second.out);
  REQUIRE(second.rc == 0);
  CHECK(JsonInt(second.summary, "hashed") == 1);
  CHECK(JsonStr(second.summary, "manifest") == "delta");
  CHECK(JsonInt(second.summary, "sent") == 1);
  CHECK(c.WaitForPage("/n1", 200, "Note 1, edited").status == 200);

  // Another client (a copy of the vault, no index) edits n2 and deletes n3.
  fs::copy(a, b, fs::copy_options::recursive);
  fs::remove_all(b / ".folio");
  WriteFile(b / "n2.md", "# Note 2, by b\n");
  fs::remove(b / "n3.md");
  Pushed other = Push(c, b);
  INFO(other.out);
  REQUIRE(other.rc == 0);
  CHECK(JsonInt(other.summary, "sent") == 1);
  CHECK(JsonInt(other.summary, "deleted") == 1);
  CHECK(c.WaitForPage("/n2", 200, "by b").status == 200);

  // a's next push learns that from the delta: it puts its n2 and n3 back,
  // without hashing a file (nothing changed locally).
  Pushed third = Push(c, a);
  INFO(third.out);
  REQUIRE(third.rc == 0);
  CHECK(JsonStr(third.summary, "manifest") == "delta");
  CHECK(JsonInt(third.summary, "hashed") == 0);
  CHECK(JsonInt(third.summary, "sent") == 2);
  CHECK(c.WaitForPage("/n2", 200, "Note 2</h1>").status == 200);
  CHECK(c.WaitForPage("/n3", 200).status == 200);

  // Nothing changed anywhere: nothing sent, nothing hashed.
  Pushed idle = Push(c, a);
  INFO(idle.out);
  CHECK(idle.rc == 0);
  CHECK(JsonInt(idle.summary, "sent") == 0);
  CHECK(JsonInt(idle.summary, "hashed") == 0);
}

// Issue 26: a push changing one file of a vault does not rewrite its index.
TEST_CASE("CLI index: a one-change push records a journal, not a new index; the next push trusts both") {
  Cluster c;
  testing::TempDir tmp;
  const fs::path a = fs::path(tmp.path()) / "a";
  for (int i = 0; i < 200; ++i) {
    WriteFile(a / ("d" + std::to_string(i % 4)) / ("n" + std::to_string(i) + ".md"), "# Note " + std::to_string(i) + "\n");
  }
  Age(a);
  REQUIRE(Push(c, a).rc == 0);
  struct stat first;
  REQUIRE(::stat((a / ".folio" / "index").c_str(), &first) == 0);

  for (int round = 0; round < 3; ++round) {
    INFO("round ", round);
    const std::string rel = "d1/n" + std::to_string(5 + round * 4) + ".md";
    WriteFile(a / rel, "# Edited in round " + std::to_string(round) + "\n");
    Age(a / rel, 1'600'000'100 + round);
    Pushed p = Push(c, a);
    INFO(p.out);
    REQUIRE(p.rc == 0);
    CHECK(JsonInt(p.summary, "hashed") == 1);  // the journal's entries are trusted like the index's
    CHECK(JsonInt(p.summary, "sent") == 1);
    CHECK(JsonStr(p.summary, "manifest") == "delta");
    CHECK(c.WaitForPage("/d1/n" + std::to_string(5 + round * 4), 200, "Edited in round").status == 200);
    struct stat now;
    REQUIRE(::stat((a / ".folio" / "index").c_str(), &now) == 0);
    CHECK(now.st_ino == first.st_ino);  // the index file was not rewritten
    CHECK(fs::exists(a / ".folio" / "index.log"));
  }
  // Nothing changed since: nothing hashed, nothing sent.
  Pushed idle = Push(c, a);
  CHECK(idle.rc == 0);
  CHECK(JsonInt(idle.summary, "hashed") == 0);
  CHECK(JsonInt(idle.summary, "sent") == 0);
  // --full rewrites the index and drops the journal.
  REQUIRE(Push(c, a, {"--full"}).rc == 0);
  CHECK_FALSE(fs::exists(a / ".folio" / "index.log"));
}

TEST_CASE("CLI index: --full and a corrupt index take the full path; a corrupt one is only a note") {
  Cluster c;
  testing::TempDir tmp;
  const fs::path a = fs::path(tmp.path()) / "a";
  for (int i = 0; i < 3; ++i) WriteFile(a / ("n" + std::to_string(i) + ".md"), "# Note " + std::to_string(i) + "\n");
  Age(a);
  REQUIRE(Push(c, a).rc == 0);

  Pushed full = Push(c, a, {"--full"});
  INFO(full.out);
  CHECK(full.rc == 0);
  CHECK(JsonInt(full.summary, "hashed") == 3);
  CHECK(JsonStr(full.summary, "manifest") == "full");

  WriteFile(a / ".folio" / "index", "folio-index 1\nserver\tgarbage");
  Pushed corrupt = Push(c, a);
  INFO(corrupt.out);
  CHECK(corrupt.rc == 0);
  CHECK(corrupt.out.find("folio: .folio/index: truncated") != std::string::npos);
  CHECK(JsonInt(corrupt.summary, "hashed") == 3);
  Pushed after = Push(c, a);  // the push rewrote it
  CHECK(after.rc == 0);
  CHECK(JsonInt(after.summary, "hashed") == 0);
  CHECK(JsonStr(after.summary, "manifest") == "delta");
}

TEST_CASE("manifest ?since: a delta since a version; a bad since is a 400 naming it") {
  Cluster c;
  auto get = [&](const std::string& query) {
    http::ClientRequest req;
    req.url = c.ingest_url() + "/api/v1/manifest" + query;
    req.headers = {{"Authorization", std::string("Bearer ") + kToken}};
    auto r = http::Fetch(req);
    REQUIRE(r.ok());
    return *r;
  };
  REQUIRE(c.Push(PushBody({{"a.md", "# A\n"}, {"b.md", "# B\n"}})).status == 200);
  REQUIRE(c.Push(PushBody({{"b.md", "# B2\n"}}, {"a.md"})).status == 200);
  http::ClientResponse d = get("?since=1");
  INFO(d.body);
  CHECK(d.status == 200);
  CHECK(JsonInt(d.body, "version") == 2);
  CHECK(JsonInt(d.body, "since") == 1);
  CHECK(JsonInt(d.body, "note_count") == 1);
  CHECK(d.body.find("\"b.md\"") != std::string::npos);
  CHECK(d.body.find("\"deleted\":[\"a.md\"]") != std::string::npos);
  CHECK_FALSE(JsonStr(d.body, "epoch").empty());
  CHECK(JsonStr(d.body, "epoch") == JsonStr(c.Manifest().body, "epoch"));
  for (const char* bad : {"?since=abc", "?since=-1", "?since=3", "?since=", "?since=1e3"}) {
    http::ClientResponse r = get(bad);
    INFO(bad, " ", r.body);
    CHECK(r.status == 400);
    CHECK(JsonErrorCode(r.body) == "invalid_argument");
    CHECK(JsonErrorField(r.body, "message").find("since") != std::string::npos);
  }
}
