// The reader's site around the notes (issue 13): the explorer's JSON per
// folder, the link graph's chunks and page, the site script, and the vault's
// publish.css, as the edge serves them after real pushes. What a push costs:
// a new note rewrites its folder's JSON, not its siblings' pages.
// Real nats-server, folio-ingest and folio-edge.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "cluster.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/site/layout.h"

using namespace folio;
using namespace folio::it;

namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// {"attachments":[{"path":path,"data":base64(bytes)}],"delete":[...]}
std::string AttachmentPush(const std::string& path, const std::string& bytes, bool remove = false) {
  JsonWriter w;
  w.BeginObject();
  if (remove) {
    w.Key("delete").BeginArray().String(path).EndArray();
  } else {
    w.Key("attachments").BeginArray();
    w.BeginObject().Key("path").String(path).Key("data").String(Base64Encode(bytes)).EndObject();
    w.EndArray();
  }
  w.EndObject();
  return w.Take();
}

}  // namespace

TEST_CASE("reader site: explorer JSON, graph data and page, and the site script are served") {
  Cluster c;
  auto push = c.Push(PushBody({
      {"Docs/Guide.md", "# Guide\n\nSee [[Other]] and [[Start]].\n"},
      {"Docs/Other.md", "# Other\n\nBack to [[Guide]].\n"},
      {"Start.md", "# Start\n\nHello.\n"},
  }));
  INFO(push.body, c.Logs());
  REQUIRE(push.status == 200);
  auto page = c.WaitForPage("/docs/guide", 200);
  REQUIRE(page.status == 200);
  CHECK(Has(page.body, "<ul class=\"tree nav-view\" data-tree=\"/_/tree/\">"));
  CHECK(Has(page.body, "data-tree=\"/_/tree/docs/\"><summary class=\"tree-item-self mod-collapsible\" data-path=\"Docs\">"
                       "<a class=\"tree-item-inner\" href=\"/docs/\">Docs</a>"));
  CHECK(Has(page.body, "<a class=\"tree-item-self mod-active\" data-path=\"Docs/Guide.md\" href=\"/docs/guide\" "
                       "aria-current=\"page\"><span class=\"tree-item-inner\">Guide</span></a>"));
  CHECK(Has(page.body, "<section class=\"local-graph\" data-graph=\"/_/graph.json\" data-url=\"/docs/guide\" hidden>"));

  // The site's empty listings exist before the push, and each edge worker
  // applies updates on its own loop: wait for this push's version of them.
  auto root = c.WaitForPage("/_/tree/", 200, "\"name\":\"Docs\"");
  CHECK(root.Header("Content-Type") == "application/json");
  CHECK(Has(root.body, "{\"name\":\"Docs\",\"path\":\"Docs\",\"tree\":\"/_/tree/docs/\",\"url\":\"/docs/\",\"notes\":2}"));
  CHECK(Has(root.body, "\"notes\":[{\"title\":\"Start\",\"url\":\"/start\"}]"));
  auto docs = c.WaitForPage("/_/tree/docs/", 200);
  CHECK(Has(docs.body, "\"notes\":[{\"title\":\"Guide\",\"url\":\"/docs/guide\"},{\"title\":\"Other\",\"url\":\"/docs/other\"}]"));
  // gzip like every page, and revalidated by ETag.
  auto gz = c.EdgeGet("/_/tree/docs/", {{"Accept-Encoding", "gzip"}});
  CHECK(gz.Header("Content-Encoding") == "gzip");
  CHECK(c.EdgeGet("/_/tree/docs/", {{"If-None-Match", docs.Header("ETag")}}).status == 304);

  auto index = c.WaitForPage("/_/graph.json", 200, "\"notes\":3");
  CHECK(index.body == "{\"notes\":3,\"chunks\":[\"/_/graph/0.json\"]}");
  auto chunk = c.WaitForPage("/_/graph/0.json", 200, "/docs/guide");
  CHECK(Has(chunk.body, "[\"/docs/guide\",\"Guide\",[\"/docs/other\",\"/start\"]]"));
  CHECK(Has(chunk.body, "[\"/docs/other\",\"Other\",[\"/docs/guide\"]]"));
  auto graph = c.WaitForPage("/_/graph", 200);
  CHECK(Has(graph.body, "<div class=\"global-graph\" data-graph=\"/_/graph.json\"></div>"));

  auto script = c.WaitForPage(site::SiteScriptUrl(), 200);
  CHECK(script.Header("Content-Type") == "text/javascript; charset=utf-8");
  CHECK(Has(script.Header("Cache-Control"), "immutable"));
  CHECK(script.body == site::SiteScript());
  CHECK(Has(page.body, "<script src=\"" + site::SiteScriptUrl() + "\" defer></script>"));

  // A new note: its folder's JSON (and the root's counts) change; the pages
  // of its siblings are not rendered again (their ETags stay).
  const std::string other_etag = c.EdgeGet("/docs/other").Header("ETag");
  REQUIRE(c.Push(PushBody({{"Docs/New.md", "# New\n\nText.\n"}})).status == 200);
  CHECK(c.WaitForPage("/_/tree/docs/", 200, "\"title\":\"New\"").status == 200);
  CHECK(c.WaitForPage("/_/tree/", 200, "\"notes\":3}").status == 200);
  CHECK(c.EdgeGet("/docs/other").Header("ETag") == other_etag);
  // A new link: the graph chunk shows the edge.
  REQUIRE(c.Push(PushBody({{"Start.md", "# Start\n\nHello [[New]].\n"}})).status == 200);
  CHECK(c.WaitForPage("/_/graph/0.json", 200, "[\"/start\",\"Start\",[\"/docs/new\"]]").status == 200);
  // A deleted folder's JSON goes with it.
  REQUIRE(c.Push(PushBody({}, {"Docs/Guide.md", "Docs/Other.md", "Docs/New.md"})).status == 200);
  CHECK(c.WaitForPage("/_/tree/docs/", 404).status == 404);
}

TEST_CASE("reader site: the vault's publish.css loads after folio's stylesheet; editing it rewrites no page") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Note.md", "# Note\n\nText.\n"}})).status == 200);
  auto plain = c.WaitForPage("/note", 200);
  REQUIRE(plain.status == 200);
  CHECK(!Has(plain.body, "publish.css"));
  CHECK(c.EdgeGet("/publish.css").status == 404);

  const std::string v1 = "body{color:#c00}\n";
  REQUIRE(c.Push(AttachmentPush("publish.css", v1)).status == 200);
  auto styled = c.WaitForPage("/note", 200, "href=\"/publish.css\"");
  REQUIRE(Has(styled.body, "href=\"/publish.css\""));
  CHECK(styled.body.find(site::StyleSheetUrl()) < styled.body.find("href=\"/publish.css\""));
  CHECK(c.WaitForPage("/_/recent", 200, "href=\"/publish.css\"").status == 200);  // every page
  // The 404 page too (written again when publish.css arrives), and a deleted note's 410 page.
  auto missing = c.WaitForPage("/no/such/page", 404, "href=\"/publish.css\"");
  CHECK(missing.status == 404);
  CHECK(Has(missing.body, "href=\"/publish.css\""));
  REQUIRE(c.Push(PushBody({{"Gone.md", "# Gone\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/gone", 200).status == 200);
  REQUIRE(c.Push(PushBody({}, {"Gone.md"})).status == 200);
  auto gone = c.WaitForPage("/gone", 410);
  CHECK(gone.status == 410);
  CHECK(Has(gone.body, "href=\"/publish.css\""));
  auto redirect = c.EdgeGet("/publish.css");
  REQUIRE(redirect.status == 301);
  const std::string asset1 = "/assets/" + Sha256Hex(v1).substr(0, 16) + "/publish.css";
  CHECK(redirect.Header("Location") == asset1);
  auto css = c.WaitForPage(asset1, 200);
  CHECK(css.body == v1);
  CHECK(css.Header("Content-Type") == "text/css; charset=utf-8");

  // Editing it moves the redirect; the note page stays as it was.
  const std::string etag = styled.Header("ETag");
  const std::string v2 = "body{color:#00c}\n";
  REQUIRE(c.Push(AttachmentPush("publish.css", v2)).status == 200);
  const std::string asset2 = "/assets/" + Sha256Hex(v2).substr(0, 16) + "/publish.css";
  CHECK(c.WaitForPage(asset2, 200).body == v2);
  bool moved = false;
  for (int i = 0; i < 100 && !moved; ++i) {
    moved = c.EdgeGet("/publish.css").Header("Location") == asset2;
    if (!moved) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(moved);
  CHECK(c.EdgeGet("/note").Header("ETag") == etag);

  // Removing it: pages stop linking it and the redirect goes.
  REQUIRE(c.Push(AttachmentPush("publish.css", "", /*remove=*/true)).status == 200);
  auto after = c.WaitForPage("/publish.css", 404);
  CHECK(after.status == 404);
  bool unlinked = false;
  for (int i = 0; i < 100 && !unlinked; ++i) {
    unlinked = !Has(c.EdgeGet("/note").body, "publish.css");
    if (!unlinked) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(unlinked);
}
