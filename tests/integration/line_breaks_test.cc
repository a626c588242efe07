// Issue 13: Obsidian's "Strict line breaks" is a setting of each vault,
// hence of each site. `folio push` (the real binary) sends the vault's
// .obsidian/app.json "strictLineBreaks" (or --[no-]strict-line-breaks);
// ingest stores it per site, re-renders every note page when it changes
// (new ETags, nothing else in the vault changed), keeps it across a
// restart with another --strict-line-breaks default, and renders sites
// that never said with that default. Real nats-server, ingest and edge.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cluster.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;
namespace fs = std::filesystem;

namespace {

constexpr const char* kNote = "# Note\n\nline one\nline two\n";
constexpr const char* kJoined = "line one\nline two";    // strict: a soft break stays a newline
constexpr const char* kBroken = "line one<br>\nline two";  // Obsidian's default: a <br>

void Write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

void AppJson(const fs::path& vault, const std::string& json) { Write(vault / ".obsidian" / "app.json", json); }

struct Pushed {
  int rc;
  std::string out;
};

Pushed Push(Cluster& c, const fs::path& vault, const std::string& token = kToken,
            std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"push", vault.string(), "--server", c.ingest_url(), "--token", token};
  args.insert(args.end(), extra.begin(), extra.end());
  Pushed p;
  p.rc = c.RunCli(args, &p.out);
  return p;
}

int64_t ManifestVersion(Cluster& c, const std::string& token = kToken) {
  auto m = c.Manifest(token);
  REQUIRE(m.status == 200);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE(!p.parse(m.body).get(doc));
  int64_t v = -1;
  REQUIRE(!doc["version"].get_int64().get(v));
  return v;
}

bool Has(const std::string& body, const std::string& needle) { return body.find(needle) != std::string::npos; }

// The page once it holds `needle` (WaitForPage returns its last try
// otherwise: the check fails then). host "" = the default site.
http::ClientResponse Page(Cluster& c, const std::string& path, const std::string& needle,
                          const std::string& host = "") {
  auto r = host.empty() ? c.WaitForPage(path, 200, needle) : c.WaitForPageAt(host, path, 200, needle);
  INFO("GET ", host, path, " wants ", needle, "; got ", r.status, ": ", r.body);
  CHECK(r.status == 200);
  CHECK(Has(r.body, needle));
  return r;
}

}  // namespace

TEST_CASE("issue 13: the vault's Strict line breaks is the site's; a change re-renders every note page") {
  Cluster c;
  testing::TempDir tmp;
  const fs::path vault = fs::path(tmp.path()) / "vault";
  Write(vault / "Note.md", kNote);
  Write(vault / "Folder" / "Other.md", "# Other\n\nfirst\nsecond\n");
  AppJson(vault, R"({"alwaysUpdateLinks":true,"strictLineBreaks":true})");

  // One note per batch: a staged push, the setting in its commit.
  Pushed first = Push(c, vault, kToken, {"--batch-notes", "1"});
  INFO(first.out, c.Logs());
  REQUIRE(first.rc == 0);
  CHECK(Has(c.Logs(), "batch staged"));
  CHECK(Has(first.out, "strict line breaks now on"));
  auto note = Page(c, "/note", kJoined);
  CHECK(!Has(note.body, "line one<br>"));
  auto other = Page(c, "/folder/other", "first\nsecond");
  const std::string note_etag = note.Header("ETag"), other_etag = other.Header("ETag");
  REQUIRE(!note_etag.empty());

  // The manifest says the site's setting.
  CHECK(Has(c.Manifest().body, R"("settings":{"strict_line_breaks":true})"));
  // The same setting again, nothing changed: no new version, no re-render.
  const int64_t v1 = ManifestVersion(c);
  Pushed same = Push(c, vault);
  INFO(same.out);
  REQUIRE(same.rc == 0);
  CHECK(!Has(same.out, "line breaks now"));
  CHECK(!Has(Push(c, vault, kToken, {"--dry-run"}).out, "would turn"));
  CHECK(ManifestVersion(c) == v1);

  // app.json now says false; no note changed: the push re-renders every page.
  AppJson(vault, R"({"strictLineBreaks":false})");
  Pushed dry = Push(c, vault, kToken, {"--dry-run"});
  INFO(dry.out);
  REQUIRE(dry.rc == 0);
  CHECK(Has(dry.out, "would turn strict line breaks off"));
  CHECK(ManifestVersion(c) == v1);
  Pushed off = Push(c, vault);
  INFO(off.out);
  REQUIRE(off.rc == 0);
  CHECK(Has(off.out, "strict line breaks now off"));
  CHECK(Has(off.out, "0 notes sent"));
  CHECK(ManifestVersion(c) == v1 + 1);
  auto note2 = Page(c, "/note", kBroken);
  CHECK(note2.Header("ETag") != note_etag);
  auto other2 = Page(c, "/folder/other", "first<br>\nsecond");
  CHECK(other2.Header("ETag") != other_etag);

  // The flag beats app.json.
  Pushed flag = Push(c, vault, kToken, {"--strict-line-breaks"});
  INFO(flag.out);
  REQUIRE(flag.rc == 0);
  CHECK(Has(flag.out, "strict line breaks now on"));
  Page(c, "/note", kJoined);
  Pushed back = Push(c, vault, kToken, {"--no-strict-line-breaks", "--json"});
  INFO(back.out);
  REQUIRE(back.rc == 0);
  CHECK(Has(back.out, "\"strict_line_breaks\":false"));
  auto note3 = Page(c, "/note", kBroken);

  // A restart whose default is strict keeps the site's own setting: no page
  // changes, and a note pushed now renders with the site's setting too.
  const int64_t v_before = ManifestVersion(c);
  c.StopIngest();
  c.AddIngestArgs({"--strict-line-breaks"});
  c.StartIngest();
  CHECK(ManifestVersion(c) == v_before);
  CHECK(c.EdgeGet("/note").Header("ETag") == note3.Header("ETag"));
  fs::remove(vault / ".obsidian" / "app.json");  // the vault says nothing now: the site keeps its setting
  Write(vault / "New.md", "# New\n\nalpha\nbeta\n");
  Pushed after = Push(c, vault);
  INFO(after.out);
  REQUIRE(after.rc == 0);
  CHECK(!Has(after.out, "line breaks now"));
  Page(c, "/new", "alpha<br>\nbeta");
  CHECK(c.EdgeGet("/note").Header("ETag") == note3.Header("ETag"));
}

TEST_CASE("issue 13: two sites on one ingest render with their own settings; silent ones take the default") {
  // The ingest default is strict: the default site never says, site b's
  // vault says false.
  Cluster c({"--strict-line-breaks"}, /*start_services=*/false);
  std::string token_b, err;
  REQUIRE(c.RunIngest({"site", "add", "b", "--host", "b.example", "--title", "Site B"}, &token_b, &err) == 0);
  token_b = token_b.substr(0, token_b.find('\n'));
  REQUIRE(token_b.size() == 64);
  c.StartIngest();
  c.StartEdge();
  testing::TempDir tmp;
  const fs::path a = fs::path(tmp.path()) / "a", b = fs::path(tmp.path()) / "b";
  Write(a / "Note.md", kNote);
  Write(b / "Note.md", kNote);
  AppJson(b, R"({"strictLineBreaks":false})");

  Pushed pa = Push(c, a);
  INFO(pa.out, c.Logs());
  REQUIRE(pa.rc == 0);
  Pushed pb = Push(c, b, token_b);
  INFO(pb.out);
  REQUIRE(pb.rc == 0);
  auto on_a = Page(c, "/note", kJoined);
  CHECK(!Has(on_a.body, "line one<br>"));
  auto on_b = Page(c, "/note", kBroken, "b.example");
  CHECK(on_a.Header("ETag") != on_b.Header("ETag"));

  // The push API answers with the site's effective setting; bad settings change nothing.
  auto bad = c.Push(R"({"notes":[{"path":"X.md","content":"x\ny\n"}],"settings":{"strictLineBreaks":false}})", token_b);
  CHECK(bad.status == 400);
  CHECK(Has(bad.body, "strictLineBreaks"));
  auto bad_type = c.Push(R"({"settings":{"strict_line_breaks":"no"}})", token_b);
  CHECK(bad_type.status == 400);
  auto manifest_b = c.Manifest(token_b);
  CHECK(!Has(manifest_b.body, "X.md"));
  auto api = c.Push(R"({"notes":[{"path":"Y.md","content":"# Y\n\nc\nd\n"}]})", token_b);
  REQUIRE(api.status == 200);
  CHECK(Has(api.body, R"("settings":{"strict_line_breaks":false})"));
  CHECK(!Has(api.body, "settings_changed"));
  Page(c, "/y", "c<br>\nd", "b.example");
  auto api_a = c.Push(R"({"notes":[]})");
  REQUIRE(api_a.status == 200);
  CHECK(Has(api_a.body, R"("settings":{"strict_line_breaks":true})"));  // the default
  // Site b's pages did not move when site a pushed, and vice versa.
  CHECK(c.EdgeGetAt("b.example", "/note").Header("ETag") == on_b.Header("ETag"));
  CHECK(c.EdgeGet("/note").Header("ETag") == on_a.Header("ETag"));
}
