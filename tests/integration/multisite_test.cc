// Several sites in one deployment: `folio-ingest site add|list|remove`
// (before ingest starts and while it runs), per-site tokens that reach only
// their own site, Host-based routing and per-site 404s on the edge.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "cluster.h"
#include "folio/core/hash.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;

namespace {

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a shell command, returning its stdout.
std::string Shell(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// Adds a site and returns its token ("" on failure, with the output in INFO).
std::string AddSite(Cluster& c, const std::vector<std::string>& args) {
  std::string out, err;
  std::vector<std::string> argv{"site", "add"};
  argv.insert(argv.end(), args.begin(), args.end());
  int rc = c.RunIngest(argv, &out, &err);
  INFO("stdout: ", out, "\nstderr: ", err);
  CHECK(rc == 0);
  CHECK(err.find("token") != std::string::npos);  // the hint goes to stderr
  std::string token = FirstLine(out);
  CHECK(token.size() == 64);
  CHECK(out == token + "\n");  // stdout is the token alone
  return rc == 0 ? token : "";
}

// Polls until pushing with `token` answers `status`.
http::ClientResponse PushUntil(Cluster& c, const std::string& body, const std::string& token, int status,
                               int timeout_ms = 10000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  http::ClientResponse r;
  do {
    r = c.Push(body, token);
    if (r.status == status) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  return r;
}

}  // namespace

TEST_CASE("sites: the token picks the site, the Host header picks what the edge serves") {
  Cluster c({}, /*start_services=*/false);
  // Site a exists before ingest starts; site b is added while it runs.
  std::string token_a = AddSite(c, {"a", "--host", "a.example", "--title", "Site A"});
  REQUIRE(!token_a.empty());
  c.StartIngest();
  c.StartEdge();
  std::string token_b = AddSite(c, {"b", "--host", "b.example,WWW.B.example:8081", "--title", "Site B"});
  REQUIRE(!token_b.empty());
  CHECK(token_a != token_b);

  // A push with b's token right after `site add` works: the unknown token
  // makes ingest reload the sites table before answering.
  auto rb = c.Push(PushBody({{"Beta.md", "# Beta on B\n"}}), token_b);
  INFO(c.Logs());
  REQUIRE(rb.status == 200);
  REQUIRE(c.Push(PushBody({{"Alpha.md", "---\ntitle: Alpha on A\n---\n"}}), token_a).status == 200);
  REQUIRE(c.Push(PushBody({{"Gamma.md", "# Gamma on default\n"}})).status == 200);  // the --token site

  auto alpha = c.WaitForPageAt("a.example", "/alpha", 200, "Alpha on A");
  REQUIRE(alpha.status == 200);
  CHECK(alpha.body.find("Site A") != std::string::npos);
  auto beta = c.WaitForPageAt("b.example:8081", "/beta", 200, "Beta on B");
  REQUIRE(beta.status == 200);
  CHECK(beta.body.find("Site B") != std::string::npos);
  CHECK(c.WaitForPageAt("www.b.example", "/beta", 200, "Beta on B").status == 200);
  CHECK(c.WaitForPageAt("B.EXAMPLE", "/beta", 200, "Beta on B").status == 200);
  REQUIRE(c.WaitForPage("/gamma", 200, "Gamma on default").status == 200);

  // Each site's pages exist on that site only.
  CHECK(c.EdgeGetAt("a.example", "/beta").status == 404);
  CHECK(c.EdgeGetAt("a.example", "/gamma").status == 404);
  CHECK(c.EdgeGetAt("b.example:8081", "/alpha").status == 404);
  CHECK(c.EdgeGetAt("b.example", "/gamma").status == 404);
  // Unknown hosts (and the edge's own address) get the default site.
  CHECK(c.EdgeGetAt("unknown.example", "/gamma").status == 200);
  CHECK(c.EdgeGetAt("unknown.example", "/alpha").status == 404);
  CHECK(c.EdgeGet("/alpha").status == 404);
  // The 404 page is the site's own.
  auto nf_a = c.EdgeGetAt("a.example", "/no-such-page");
  CHECK(nf_a.status == 404);
  CHECK(nf_a.body.find("Site A") != std::string::npos);
  auto nf_b = c.EdgeGetAt("b.example", "/no-such-page");
  CHECK(nf_b.status == 404);
  CHECK(nf_b.body.find("Site B") != std::string::npos);
  CHECK(nf_b.body.find("Site A") == std::string::npos);

  // a's token cannot write b: the same path pushed with a's token lands on a.
  REQUIRE(c.Push(PushBody({{"Beta.md", "# Beta written with the A token\n"}}), token_a).status == 200);
  CHECK(c.WaitForPageAt("a.example", "/beta", 200, "written with the A token").status == 200);
  auto still_b = c.EdgeGetAt("b.example", "/beta");
  CHECK(still_b.status == 200);
  CHECK(still_b.body.find("Beta on B") != std::string::npos);
  CHECK(still_b.body.find("A token") == std::string::npos);
  // Manifests are per site too.
  auto mb = c.Manifest(token_b);
  REQUIRE(mb.status == 200);
  CHECK(mb.body.find("Beta.md") != std::string::npos);
  CHECK(mb.body.find("Alpha.md") == std::string::npos);
  auto ma = c.Manifest(token_a);
  CHECK(ma.body.find("Gamma.md") == std::string::npos);

  // A token no site has: 401 (after one reload of the sites table).
  auto bad = c.Push(PushBody({{"Evil.md", "# no\n"}}), std::string(64, 'f'));
  CHECK(bad.status == 401);
  CHECK(JsonErrorCode(bad.body) == "unauthenticated");
  CHECK(c.Manifest("wrong").status == 401);
  CHECK(c.Push(PushBody({{"Evil.md", "# no\n"}}), "").status == 401);

  // Duplicates and bad input are refused with a message, changing nothing.
  std::string out, err;
  CHECK(c.RunIngest({"site", "add", "a", "--host", "other.example"}, &out, &err) == 1);
  CHECK(err.find("already exists") != std::string::npos);
  CHECK(out.empty());
  CHECK(c.RunIngest({"site", "add", "c", "--host", "new.example,b.example"}, &out, &err) == 1);
  CHECK(err.find("b.example is already served by site \"b\"") != std::string::npos);
  CHECK(c.RunIngest({"site", "add", "Bad_Name", "--host", "x.example"}, &out, &err) != 0);
  CHECK(err.find("[a-z0-9-]") != std::string::npos);
  CHECK(c.RunIngest({"site", "add", "d"}, &out, &err) != 0);
  CHECK(err.find("--host") != std::string::npos);
  CHECK(c.RunIngest({"site", "add", "d", "--host", "bad host/"}, &out, &err) != 0);
  CHECK(c.RunIngest({"site", "frobnicate"}, &out, &err) == 2);

  // `site list` shows both sites: name, hosts, title.
  REQUIRE(c.RunIngest({"site", "list"}, &out, &err) == 0);
  CHECK(out == "a\ta.example\tSite A\nb\tb.example,www.b.example\tSite B\n");

  // Tokens are stored hashed: never in the database files' bytes.
  for (const char* f : {"/ingest.db", "/ingest.db-wal"}) {
    std::string bytes = ReadFile(c.ingest_data_dir() + f);
    CHECK_MESSAGE(bytes.find(token_a) == std::string::npos, f);
    CHECK_MESSAGE(bytes.find(token_b) == std::string::npos, f);
  }
  std::string stored = Shell("sqlite3 '" + c.ingest_data_dir() +
                             "/ingest.db' \"SELECT token_sha256 FROM sites WHERE name='a'\"");
  CHECK(FirstLine(stored) == Sha256Hex(token_a));
}

TEST_CASE("sites: removing a site revokes its token and withdraws its hosts") {
  Cluster c({}, /*start_services=*/false);
  std::string token_a = AddSite(c, {"a", "--host", "a.example", "--title", "Site A"});
  REQUIRE(!token_a.empty());
  c.StartIngest();
  c.StartEdge();
  INFO(c.Logs());
  REQUIRE(c.Push(PushBody({{"Alpha.md", "---\ntitle: Alpha on A\n---\n"}}), token_a).status == 200);
  REQUIRE(c.Push(PushBody({{"Gamma.md", "# Gamma on default\n"}})).status == 200);
  REQUIRE(c.WaitForPageAt("a.example", "/alpha", 200, "Alpha on A").status == 200);

  std::string out, err;
  REQUIRE(c.RunIngest({"site", "remove", "a"}, &out, &err) == 0);
  CHECK(c.RunIngest({"site", "remove", "a"}, &out, &err) == 1);
  CHECK(err.find("no site \"a\"") != std::string::npos);
  // The running ingest notices within a second or so.
  CHECK(PushUntil(c, PushBody({{"Late.md", "# late\n"}}), token_a, 401).status == 401);
  // The edge maps a.example to the default site again.
  CHECK(c.WaitForPageAt("a.example", "/gamma", 200, "Gamma on default").status == 200);
  CHECK(c.EdgeGetAt("a.example", "/alpha").status == 404);
  REQUIRE(c.RunIngest({"site", "list"}, &out, &err) == 0);
  CHECK(out.empty());

  // A restarted ingest (and a new edge) agree.
  c.StopIngest();
  c.StopEdge();
  c.StartIngest();
  c.StartEdge();
  CHECK(c.Push(PushBody({{"Late.md", "# late\n"}}), token_a).status == 401);
  REQUIRE(testing::WaitForHttp(c.edge_url() + "/readyz", 200, 10000));
  CHECK(c.EdgeGetAt("a.example", "/gamma").status == 200);
}

TEST_CASE("sites: a restarted edge learns hosts from the bucket") {
  Cluster c({}, /*start_services=*/false);
  std::string token_a = AddSite(c, {"a", "--host", "a.example"});
  REQUIRE(!token_a.empty());
  c.StartIngest();
  c.StartEdge();
  INFO(c.Logs());
  REQUIRE(c.Push(PushBody({{"Alpha.md", "---\ntitle: Alpha on A\n---\n"}}), token_a).status == 200);
  REQUIRE(c.WaitForPageAt("a.example", "/alpha", 200, "Alpha on A").status == 200);
  // No --title: the pages carry the site name.
  CHECK(c.EdgeGetAt("a.example", "/alpha").body.find("<title>Alpha on A") != std::string::npos);
  c.StopEdge();
  c.StartEdge();
  REQUIRE(testing::WaitForHttp(c.edge_url() + "/readyz", 200, 10000));
  CHECK(c.EdgeGetAt("a.example", "/alpha").status == 200);
}
