// Every page carries a Content-Security-Policy (issue 9 item 3): ingest
// decides each page's policy (libs/site csp.h) and puts it in the page
// record; the edge sends it, with X-Content-Type-Options: nosniff and
// X-Frame-Options: SAMEORIGIN, on every page kind, every status and
// encoding. A remote mermaid script without an integrity is a startup error.
// Real nats-server, folio-ingest and folio-edge.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cluster.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"

using namespace folio;
using namespace folio::it;

namespace {

void CheckHeaders(const http::ClientResponse& r, const std::string& csp) {
  CHECK(r.Header("Content-Security-Policy") == csp);
  CHECK(r.Header("X-Content-Type-Options") == "nosniff");
  CHECK(r.Header("X-Frame-Options") == "SAMEORIGIN");
}

}  // namespace

TEST_CASE("csp: every page kind carries its policy, nosniff and SAMEORIGIN") {
  Cluster c;
  auto push = c.Push(PushBody({
      {"Docs/Guide.md", "---\naliases: [Old name]\n---\n# Guide\n\nText with a #csp tag.\n"},
      {"Docs/Other.md", "# Other\n\n[[Guide]]\n"},
      {"Diagram.md", "# Diagram\n\n```mermaid\ngraph TD; A-->B\n```\n"},
  }));
  INFO(push.body, c.Logs());
  REQUIRE(push.status == 200);
  REQUIRE(c.WaitForPage("/diagram", 200).status == 200);

  site::NotePage diagram;
  diagram.has_mermaid = true;
  diagram.site.mermaid_url = std::string(site::kMermaidUrl);  // ingest's default, pinned
  diagram.site.mermaid_integrity = std::string(site::kMermaidIntegrity);
  const std::string diagram_csp = site::NotePageCsp(diagram);
  REQUIRE(diagram_csp != site::PageCsp());

  struct Case {
    std::string path;
    int status;
    std::string csp;
  };
  const std::vector<Case> cases = {
      {"/docs/guide", 200, site::PageCsp()},      // note
      {"/diagram", 200, diagram_csp},             // note with a diagram: mermaid allowed
      {"/docs/", 200, site::PageCsp()},           // folder listing
      {"/_/tags/csp", 200, site::PageCsp()},        // tag page
      {"/_/recent", 200, site::PageCsp()},          // recent notes
      {"/", 200, site::PageCsp()},                // home
      {"/no/such/page", 404, site::PageCsp()},    // the site's 404 page
      {"/old-name", 301, site::PageCsp()},        // an alias: ingest's redirect page
      {"/Docs/Guide", 301, site::PageCsp()},      // another spelling: the edge's redirect
      {site::StyleSheetUrl(), 200, site::PageCsp()},
      {"/rss.xml", 200, site::PageCsp()},
  };
  for (const Case& k : cases) {
    INFO(k.path);
    auto r = c.WaitForPage(k.path, k.status);
    CHECK(r.status == k.status);
    CheckHeaders(r, k.csp);
    CheckHeaders(c.EdgeGet(k.path, {{"Accept-Encoding", "gzip"}}), k.csp);
    CheckHeaders(c.EdgeGet(k.path, {}, "HEAD"), k.csp);
    if (k.status == 200) {
      auto again = c.EdgeGet(k.path, {{"If-None-Match", r.Header("ETag")}});
      CHECK(again.status == 304);
      CheckHeaders(again, k.csp);
    }
  }
  // The diagram page loads exactly the pinned build, with its integrity.
  auto page = c.EdgeGet("/diagram");
  CHECK(page.body.find("<script src=\"" + std::string(site::kMermaidUrl) + "\" integrity=\"" +
                       std::string(site::kMermaidIntegrity) + "\" crossorigin=\"anonymous\" defer></script>") !=
        std::string::npos);
}

TEST_CASE("csp: a remote --mermaid-url without --mermaid-integrity is a startup error") {
  Cluster c({}, /*start_services=*/false);
  const std::string listen = "127.0.0.1:" + std::to_string(testing::FreePort());
  std::string out, err;
  int rc = c.RunIngest({"--listen", listen, "--nats", c.nats().url(), "--mermaid-url",
                        "https://cdn.example.org/mermaid.min.js"},
                       &out, &err);
  CHECK(rc == 1);
  CHECK(err.find("--mermaid-integrity") != std::string::npos);
  CHECK(err.find("https://cdn.example.org/mermaid.min.js") != std::string::npos);
  rc = c.RunIngest({"--listen", listen, "--nats", c.nats().url(), "--mermaid-url", "https://cdn.example.org/m.js",
                    "--mermaid-integrity", "sha384-nope"},
                   &out, &err);
  CHECK(rc == 1);
  CHECK(err.find("--mermaid-integrity 'sha384-nope'") != std::string::npos);
}
