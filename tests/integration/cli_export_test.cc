// `folio export DIR` (issue 15) against real nats-server + ingest + edge and
// the real `folio` binary: every URL the site publishes is written, HTML
// pages at <url>.html, other files at <url>; each .gz twin is exactly the
// edge's gzip body and inflates to the identity file, which is the edge's
// identity body; a non-empty DIR is refused (unchanged) unless --force; a
// wrong token writes nothing; bad input exits 2 with a message.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cluster.h"
#include "test_util.h"
#include "folio/core/gzip.h"

using namespace folio;
using namespace folio::it;
namespace fs = std::filesystem;

namespace {

bool Has(const std::string& out, const std::string& needle) { return out.find(needle) != std::string::npos; }

int Export(Cluster& c, const fs::path& dir, std::string* out, std::vector<std::string> extra = {},
           const std::string& token = kToken) {
  std::vector<std::string> args{"export", dir.string(), "--server", c.ingest_url(), "--token", token,
                                "--edge", c.edge_url()};
  args.insert(args.end(), extra.begin(), extra.end());
  return c.RunCli(args, out);
}

}  // namespace

TEST_CASE("export: the site as the edge serves it, .gz twins included") {
  Cluster c;
  const fs::path vault = fs::path(c.dir()) / "vault";
  WriteFile(vault / "Home.md", "# Home\n\nSee [[Notes/Deep note]] and ![[pic.png]].\n\n#tag/one\n");
  std::string long_text = "# Deep note\n\n";
  for (int i = 0; i < 300; ++i) long_text += "Paragraph " + std::to_string(i) + " about gzip and nginx.\n\n";
  WriteFile(vault / "Notes/Deep note.md", long_text);
  WriteFile(vault / "pic.png", std::string("\x89PNG\r\n\x1a\n", 8) + std::string(300, 'p'));
  std::string out;
  REQUIRE(c.RunCli({"push", vault.string(), "--server", c.ingest_url(), "--token", kToken}, &out) == 0);
  REQUIRE(c.WaitForPage("/notes/deep-note", 200, "Paragraph 299").status == 200);
  REQUIRE(c.WaitForPage("/home", 200, "pic.png").status == 200);

  const fs::path dir = fs::path(c.dir()) / "export";
  int rc = Export(c, dir, &out);
  INFO(out);
  INFO(c.Logs());
  REQUIRE(rc == 0);
  CHECK(Has(out, "exported "));

  // A note page: identity and gzip bodies exactly as the edge serves them.
  auto id = c.EdgeGet("/notes/deep-note");
  auto gz = c.EdgeGet("/notes/deep-note", {{"Accept-Encoding", "gzip"}});
  REQUIRE(gz.Header("Content-Encoding") == "gzip");
  CHECK(ReadFile(dir / "notes/deep-note.html") == id.body);
  CHECK(ReadFile(dir / "notes/deep-note.html.gz") == gz.body);
  CHECK(ReadFile(dir / "index.html") == c.EdgeGet("/").body);
  CHECK(fs::exists(dir / "home.html"));
  CHECK(fs::exists(dir / "_folio/404.html"));

  // Every .gz inflates to its twin; nothing is left half-written.
  size_t twins = 0, css = 0, files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::string name = e.path().string();
    CHECK_MESSAGE(!Has(name, ".folio-tmp"), name);
    if (name.ends_with(".css")) ++css;
    if (!name.ends_with(".gz")) continue;
    ++twins;
    std::string inflated;
    REQUIRE(GzipDecompress(ReadFile(e.path()), &inflated).ok());
    CHECK_MESSAGE(inflated == ReadFile(name.substr(0, name.size() - 3)), name);
  }
  CHECK(twins >= 3);
  CHECK(css >= 1);  // the /_/ stylesheet
  // The attachment, under the URL the page links to.
  bool pic = false;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename() == "pic.png") pic = ReadFile(e.path()).starts_with("\x89PNG");
  }
  CHECK(pic);

  // A non-empty DIR is refused and left as it was; --force writes into it.
  WriteFile(dir / "notes/deep-note.html", "local edit");
  CHECK(Export(c, dir, &out) == 2);
  CHECK(Has(out, "is not empty"));
  CHECK(ReadFile(dir / "notes/deep-note.html") == "local edit");
  CHECK(Export(c, dir, &out, {"--force"}) == 0);
  CHECK(ReadFile(dir / "notes/deep-note.html") == id.body);
  CHECK(fs::recursive_directory_iterator(dir) != fs::recursive_directory_iterator());
  size_t again = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) again += e.is_regular_file();
  CHECK(again == files);
}

TEST_CASE("export: a wrong token, a file as DIR, no edge address: exit 2, nothing written") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"A.md", "# A\n"}})).status == 200);
  const fs::path dir = fs::path(c.dir()) / "out";
  std::string out;
  CHECK(Export(c, dir, &out, {}, "wrong-token") == 2);
  CHECK(Has(out, "token"));
  CHECK(!fs::exists(dir));

  WriteFile(dir, "a file");
  CHECK(Export(c, dir, &out) == 2);
  CHECK(Has(out, "not a directory"));

  // No --edge and no --base-url on the server: the address is unknown.
  const fs::path fresh = fs::path(c.dir()) / "fresh";
  CHECK(c.RunCli({"export", fresh.string(), "--server", c.ingest_url(), "--token", kToken}, &out) == 2);
  CHECK(Has(out, "--edge"));
  CHECK(!fs::exists(fresh));
}
