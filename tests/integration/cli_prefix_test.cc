// `folio push DIR --prefix P` against real nats-server + ingest processes:
// two folders pushed under two prefixes coexist, a re-push deletes only
// inside its prefix (and its deletion guard counts only the prefix's
// notes), a bad prefix changes nothing, the index is per prefix; the
// summary counts notes and attachments apart, and a frontmatter warning
// prints once.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cluster.h"
#include "test_util.h"
#include "folio/core/json.h"
#include "folio/http/client.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;
namespace fs = std::filesystem;

namespace {

// An mtime far from "now", so the index's racy-mtime rule does not blur the
// "hashed" counts.
void Age(const fs::path& dir) {
  timespec ts[2] = {{1'600'000'000, 0}, {1'600'000'000, 0}};
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) REQUIRE(::utimensat(AT_FDCWD, e.path().c_str(), ts, 0) == 0);
  }
}

// The line of `out` starting with `start` ("" if none).
std::string Line(const std::string& out, const std::string& start) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(start)) return line;
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

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// The paths the server holds (notes and attachments), sorted.
std::vector<std::string> ServerPaths(Cluster& c) {
  auto m = c.Manifest();
  REQUIRE(m.status == 200);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE(!p.parse(m.body).get(doc));
  std::vector<std::string> out;
  for (const char* list : {"notes", "attachments"}) {
    simdjson::dom::array a;
    if (doc[list].get_array().get(a)) continue;
    for (simdjson::dom::element f : a) out.emplace_back(std::string_view(f["path"]));
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Pushed {
  int rc;
  std::string out;
};

Pushed Push(Cluster& c, const fs::path& vault, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"push", vault.string(), "--server", c.ingest_url(), "--token", kToken};
  args.insert(args.end(), extra.begin(), extra.end());
  Pushed p;
  p.rc = c.RunCli(args, &p.out);
  return p;
}

}  // namespace

TEST_CASE("CLI --prefix: two folders under two prefixes coexist; a re-push deletes only inside its prefix") {
  Cluster c;
  testing::TempDir tmp;
  const fs::path a = fs::path(tmp.path()) / "team-a", b = fs::path(tmp.path()) / "team-b";
  // A note outside both prefixes, pushed by someone else.
  REQUIRE(c.Push(PushBody({{"Home.md", "# Home\n\nSee [[Team A/Plan]].\n"}})).status == 200);
  WriteFile(a / "Plan.md", "# Plan A\n\nSee [[Team B/Plan]] and ![[chart.png]].\n");
  WriteFile(a / "Notes" / "Old.md", "# Old A\n");
  WriteFile(a / "chart.png", "not really a png");
  WriteFile(b / "Plan.md", "# Plan B\n");
  WriteFile(b / "Notes" / "Old.md", "# Old B\n");
  Age(a);
  Age(b);

  Pushed pa = Push(c, a, {"--prefix", "Team A"});
  INFO(pa.out);
  REQUIRE(pa.rc == 0);
  Pushed pb = Push(c, b, {"--prefix", "Team B/"});
  INFO(pb.out);
  REQUIRE(pb.rc == 0);
  // Team B's push deleted nothing of Team A's or of the top level.
  CHECK(pb.out.find("nothing deleted") != std::string::npos);
  CHECK(ServerPaths(c) == std::vector<std::string>{"Home.md", "Team A/Notes/Old.md", "Team A/Plan.md",
                                                   "Team A/chart.png", "Team B/Notes/Old.md", "Team B/Plan.md"});
  // Links resolve site-wide: Team A's plan links to Team B's, Home to Team A's.
  auto plan_a = c.WaitForPage("/team-a/plan", 200, "Plan A");
  CHECK(plan_a.body.find("href=\"/team-b/plan\"") != std::string::npos);
  CHECK(plan_a.body.find("/assets/") != std::string::npos);
  CHECK(c.WaitForPage("/home", 200).body.find("href=\"/team-a/plan\"") != std::string::npos);

  // Team A deletes a note and pushes again: only that note goes.
  fs::remove(a / "Notes" / "Old.md");
  Pushed again = Push(c, a, {"--prefix", "Team A", "--json"});
  INFO(again.out);
  REQUIRE(again.rc == 0);
  std::string summary = Line(again.out, "{\"sent\"");
  CHECK(JsonInt(summary, "deleted") == 1);
  CHECK(JsonInt(summary, "sent") == 0);
  CHECK(JsonStr(summary, "manifest") == "delta");
  CHECK(JsonInt(summary, "hashed") == 0);  // the index is the prefix's: nothing changed locally
  CHECK(ServerPaths(c) == std::vector<std::string>{"Home.md", "Team A/Plan.md", "Team A/chart.png",
                                                   "Team B/Notes/Old.md", "Team B/Plan.md"});
  CHECK(c.WaitForPage("/team-b/notes/old", 200).status == 200);

  // The dry run of the same folder under another prefix lists only that
  // prefix's paths, and it trusts no stat data of Team A's (the index is per
  // prefix): every file is hashed again.
  Pushed other = Push(c, a, {"--prefix", "Team C", "--dry-run"});
  INFO(other.out);
  REQUIRE(other.rc == 0);
  CHECK(other.out.find("would send Team C/Plan.md (new,") != std::string::npos);
  CHECK(other.out.find("would send Team C/chart.png (attachment, new,") != std::string::npos);
  CHECK(other.out.find("would delete") == std::string::npos);
  Pushed c_json = Push(c, a, {"--prefix", "Team C", "--json"});
  INFO(c_json.out);
  REQUIRE(c_json.rc == 0);
  CHECK(JsonInt(Line(c_json.out, "{\"sent\""), "hashed") == 2);
  CHECK(JsonInt(Line(c_json.out, "{\"sent\""), "deleted") == 0);
  CHECK(ServerPaths(c).size() == 7);
}

TEST_CASE("CLI --prefix: a bad prefix is a clear usage error and changes nothing") {
  Cluster c;
  testing::TempDir tmp;
  const fs::path a = fs::path(tmp.path()) / "a";
  WriteFile(a / "x.md", "# X\n");
  REQUIRE(c.Push(PushBody({{"Keep.md", "# Keep\n"}})).status == 200);
  int64_t version = JsonInt(c.Manifest().body, "version");
  for (const char* bad : {"../up", "/abs", "a//b", "a/./b", ".hidden"}) {
    Pushed p = Push(c, a, {"--prefix", bad});
    INFO(bad, p.out);
    CHECK(p.rc == 2);
    CHECK(p.out.find(std::string("folio: --prefix '") + bad + "': ") != std::string::npos);
  }
  CHECK(Push(c, a, {"--prefix", "../up"}).out.find("path contains '..'") != std::string::npos);
  CHECK(JsonInt(c.Manifest().body, "version") == version);
  CHECK(ServerPaths(c) == std::vector<std::string>{"Keep.md"});
  CHECK_FALSE(fs::exists(a / ".folio"));
}

TEST_CASE("CLI --prefix: the deletion guard counts only the prefix's notes") {
  Cluster c;
  testing::TempDir tmp;
  std::vector<std::pair<std::string, std::string>> notes;
  for (int i = 0; i < 200; ++i) notes.push_back({"Big/n" + std::to_string(i) + ".md", "# n\n"});
  for (int i = 0; i < 24; ++i) notes.push_back({"Small/n" + std::to_string(i) + ".md", "# s\n"});
  REQUIRE(c.Push(PushBody(notes)).status == 200);
  const fs::path small = fs::path(tmp.path()) / "small";
  WriteFile(small / "n0.md", "# s\n");
  // 23 of Small's 24 notes would go: more than 20 and more than a quarter of
  // the prefix's notes (not of the site's 224).
  Pushed p = Push(c, small, {"--prefix", "Small"});
  INFO(p.out);
  CHECK(p.rc == 1);
  CHECK(p.out.find("this push would delete 23 of the 24 notes under 'Small/' on the server") != std::string::npos);
  CHECK(ServerPaths(c).size() == 224);
  Pushed dry = Push(c, small, {"--prefix", "Small", "--dry-run"});
  CHECK(dry.out.find("folio: this push would DELETE 23 notes from the server (under 'Small/')") != std::string::npos);
  Pushed yes = Push(c, small, {"--prefix", "Small", "--yes"});
  INFO(yes.out);
  REQUIRE(yes.rc == 0);
  CHECK(yes.out.find("deleted 23 notes;") != std::string::npos);
  CHECK(ServerPaths(c).size() == 201);
}

TEST_CASE("CLI output: the summary counts notes and attachments apart; a frontmatter warning prints once") {
  Cluster c;
  testing::TempDir tmp;
  const fs::path v = fs::path(tmp.path()) / "v";
  WriteFile(v / "A.md", "# A\n\n![[pic.png]]\n");
  WriteFile(v / "B.md", "# B\n");
  WriteFile(v / "Broken.md", "---\ntitle: [unclosed\n---\n# Broken\n");
  WriteFile(v / "pic.png", "png one");
  WriteFile(v / "old.png", "png two");
  Pushed first = Push(c, v);
  INFO(first.out);
  REQUIRE(first.rc == 0);
  std::string line = Line(first.out, "folio: ");
  CHECK(line.starts_with("folio: 3 notes sent (3 changed, "));
  CHECK(line.find("; 2 attachments sent (2 changed), 0 unchanged; nothing deleted; version ") != std::string::npos);
  CHECK(Count(first.out, "frontmatter line") == 1);
  CHECK(first.out.find("warning: Broken.md: frontmatter line 3: ") != std::string::npos);

  fs::remove(v / "B.md");
  fs::remove(v / "old.png");
  WriteFile(v / "pic.png", "png one, edited");
  Pushed second = Push(c, v);
  INFO(second.out);
  REQUIRE(second.rc == 0);
  line = Line(second.out, "folio: ");
  CHECK(line.starts_with("folio: 0 notes sent (0 changed, "));
  CHECK(line.find(" 2 unchanged; 1 attachment sent (1 changed), 0 unchanged; deleted 1 note and 1 attachment;") !=
        std::string::npos);

  // The server's reply splits its counts too (what the CLI reads).
  JsonWriter w;
  w.BeginObject().Key("notes").BeginArray().EndArray();
  w.Key("attachments").BeginArray().BeginObject().Key("path").String("new.png").Key("data").String("aGVsbG8=");
  w.EndObject().EndArray().Key("delete").BeginArray().String("A.md").String("pic.png").EndArray().EndObject();
  auto reply = c.Push(w.Take());
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  CHECK(JsonInt(reply.body, "received") == 1);
  CHECK(JsonInt(reply.body, "attachments_received") == 1);
  CHECK(JsonInt(reply.body, "attachments_changed") == 1);
  CHECK(JsonInt(reply.body, "deleted") == 2);
  CHECK(JsonInt(reply.body, "attachments_deleted") == 1);
}
