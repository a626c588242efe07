// `folio status DIR` (issue 14) against real nats-server + ingest + edge and
// the real `folio` binary: an empty site lists everything to add; after a
// push it is in sync; edits, additions, deletions and attachments are
// listed; the server's warnings (dangling links) and local files over its
// limits are shown; a wrong token and a server that is down exit 2 with a
// message; status changes nothing (no push, no index). Also the manifest's
// "site_url" and per-note "warnings" that status reads.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cluster.h"
#include "test_util.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;
namespace fs = std::filesystem;

namespace {

struct Ran {
  int rc;
  std::string out;
};

Ran Cli(Cluster& c, const std::string& command, const fs::path& vault, std::vector<std::string> extra = {},
        const std::string& token = kToken) {
  std::vector<std::string> args{command, vault.string(), "--server", c.ingest_url(), "--token", token};
  args.insert(args.end(), extra.begin(), extra.end());
  Ran r;
  r.rc = c.RunCli(args, &r.out);
  return r;
}

bool Has(const std::string& out, const std::string& needle) { return out.find(needle) != std::string::npos; }

// The note entry of `path` in the full manifest (an empty element if none).
std::string NoteWarnings(Cluster& c, const std::string& path) {
  auto m = c.Manifest();
  REQUIRE(m.status == 200);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE(!p.parse(m.body).get(doc));
  for (simdjson::dom::element n : doc["notes"].get_array()) {
    if (std::string_view(n["path"]) != path) continue;
    simdjson::dom::array w;
    if (n["warnings"].get_array().get(w)) return "(no key)";
    std::string all;
    for (std::string_view s : w) all += std::string(s) + ";";
    return all;
  }
  return "(no note)";
}

}  // namespace

TEST_CASE("manifest: site_url from --base-url; a note's warnings, gone once fixed") {
  Cluster c({"--base-url", "https://notes.example.com/"});
  REQUIRE(c.Push(PushBody({{"A.md", "# A\n\nSee [[Nowhere]].\n"}, {"B.md", "# B\n"}})).status == 200);
  auto m = c.Manifest();
  REQUIRE(m.status == 200);
  CHECK(Has(m.body, "\"site_url\":\"https://notes.example.com\""));  // trailing '/' dropped
  CHECK(NoteWarnings(c, "A.md") == "dangling link [[Nowhere]];");
  CHECK(NoteWarnings(c, "B.md") == "(no key)");
  REQUIRE(c.Push(PushBody({{"A.md", "# A\n\nSee [[B]].\n"}})).status == 200);
  CHECK(NoteWarnings(c, "A.md") == "(no key)");

  Cluster plain;  // no --base-url: ""
  auto pm = plain.Manifest();
  REQUIRE(pm.status == 200);
  CHECK(Has(pm.body, "\"site_url\":\"\""));
}

TEST_CASE("folio status: empty site, in sync after push, each kind of change, warnings, oversized") {
  Cluster c({"--base-url", "https://notes.example.com"});
  testing::TempDir tmp;
  const fs::path v = fs::path(tmp.path()) / "vault";
  WriteFile(v / "Home.md", "# Home\n\nSee [[Folder/Plan]] and ![[pic.png]].\n");
  WriteFile(v / "Folder" / "Plan.md", "# Plan\n");
  WriteFile(v / "Old.md", "# Old\n\nSee [[Missing note]].\n");
  WriteFile(v / "pic.png", "not really a png");

  Ran s = Cli(c, "status", v);
  INFO(s.out);
  CHECK(s.rc == 1);
  CHECK(Has(s.out, "version 0, https://notes.example.com\n"));
  CHECK(Has(s.out, "notes: 3 to add, 0 to change, 0 to delete, 0 unchanged\n"));
  CHECK(Has(s.out, "  + Folder/Plan.md\n"));
  CHECK(Has(s.out, "attachments: 1 to add, 0 to change, 0 to delete, 0 unchanged\n  + pic.png\n"));
  CHECK(Has(s.out, "not in sync: 3 notes and 1 attachment differ"));
  CHECK(!fs::exists(v / ".folio"));  // status writes no index
  CHECK(c.Manifest().body.find("Home.md") == std::string::npos);  // and pushes nothing

  Ran p = Cli(c, "push", v);
  INFO(p.out);
  REQUIRE((p.rc == 0 || p.rc == 3));
  s = Cli(c, "status", v);
  INFO(s.out);
  CHECK(s.rc == 0);
  CHECK(Has(s.out, "notes: 0 to add, 0 to change, 0 to delete, 3 unchanged\n"));
  CHECK(Has(s.out, "server warnings: 1\n  Old.md: dangling link [[Missing note]]\n"));
  CHECK(s.out.ends_with("in sync\n"));

  // Edit, add, delete, a changed attachment and one over the server's limit.
  WriteFile(v / "Folder" / "Plan.md", "# Plan v2\n");
  WriteFile(v / "New.md", "# New\n");
  fs::remove(v / "Old.md");
  WriteFile(v / "pic.png", "another picture");
  WriteFile(v / "huge.png", std::string(2 << 20, 'x'));  // over the default 1008 KiB
  s = Cli(c, "status", v);
  INFO(s.out);
  CHECK(s.rc == 1);
  CHECK(Has(s.out, "notes: 1 to add, 1 to change, 1 to delete, 1 unchanged\n  + New.md\n  ~ Folder/Plan.md\n"
                   "  - Old.md\n"));
  CHECK(Has(s.out, "attachments: 0 to add, 1 to change, 0 to delete, 0 unchanged\n  ~ pic.png\n"));
  CHECK(Has(s.out, "oversized (over the server's limits; push leaves them out): 1\n  huge.png: "));

  Ran j = Cli(c, "status", v, {"--json"});
  INFO(j.out);
  CHECK(j.rc == 1);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(!parser.parse(j.out).get(doc));
  CHECK(bool(doc["in_sync"]) == false);
  CHECK(std::string_view(doc["site_url"]) == "https://notes.example.com");
  CHECK(std::string_view(doc["notes"]["change"].at(0)) == "Folder/Plan.md");
  CHECK(std::string_view(doc["notes"]["delete"].at(0)) == "Old.md");
  CHECK(std::string_view(doc["warnings"].at(0)["path"]) == "Old.md");
  CHECK(std::string_view(doc["oversized"].at(0)["path"]) == "huge.png");

  // --prefix: the vault as the site's folder "Folder" sees only Folder/.
  s = Cli(c, "status", v / "Folder", {"--prefix", "Folder"});
  INFO(s.out);
  CHECK(s.rc == 1);
  CHECK(Has(s.out, "notes: 0 to add, 1 to change, 0 to delete, 0 unchanged\n  ~ Folder/Plan.md\n"));
}

TEST_CASE("issue 28: a note linking twice to a missing note warns of it once (manifest and folio status)") {
  Cluster c;
  testing::TempDir tmp;
  const fs::path v = fs::path(tmp.path()) / "vault";
  WriteFile(v / "Twice.md", "# Twice\n\nSee [[Missing]], and [[Missing|again]].\n\n- [[Missing]]\n");
  Ran p = Cli(c, "push", v);
  INFO(p.out);
  REQUIRE((p.rc == 0 || p.rc == 3));
  CHECK(NoteWarnings(c, "Twice.md") == "dangling link [[Missing]];");
  Ran s = Cli(c, "status", v);
  INFO(s.out);
  CHECK(Has(s.out, "server warnings: 1\n  Twice.md: dangling link [[Missing]]\n"));
}

TEST_CASE("folio status: a wrong token, a server that is down and a bad DIR exit 2 with a message") {
  Cluster c;
  testing::TempDir tmp;
  const fs::path v = fs::path(tmp.path()) / "vault";
  WriteFile(v / "A.md", "# A\n");
  Ran s = Cli(c, "status", v, {}, "wrong-token");
  INFO(s.out);
  CHECK(s.rc == 2);
  CHECK(Has(s.out, "folio: the server rejected the token"));
  s = Cli(c, "status", fs::path(tmp.path()) / "nope");
  CHECK(s.rc == 2);
  CHECK(Has(s.out, "no such directory"));
  c.StopIngest();
  s = Cli(c, "status", v);
  INFO(s.out);
  CHECK(s.rc == 2);
  CHECK(Has(s.out, "folio: cannot reach"));
}
