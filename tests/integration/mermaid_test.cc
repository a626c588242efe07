// The bundled mermaid (services/ingest/bundled_mermaid.h): with --storage,
// ingest puts build/bin/mermaid.min.js into folio-storage and pages with a
// diagram load it from the site itself; the edge serves exactly those bytes
// as JavaScript, immutable. Without storage or without the file, pages load
// the pinned CDN build; an explicit --mermaid-url wins. The tests that need
// the file skip (with a message) where npm did not install it.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "cluster.h"
#include "folio/bus/bus.h"
#include "folio/bus/page_schema.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/testing/feed.h"
#include "test_util.h"

using namespace folio;
using namespace folio::it;

namespace {

const std::string kDiagram = "# Diagram\n\n```mermaid\ngraph TD; A-->B\n```\n";

// The bundled file as the build put it next to the binaries; "" if absent.
std::string BundledBytes() {
  std::ifstream in(testing::BinPath("mermaid.min.js"), std::ios::binary);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of the first `attr="..."` of the first <script src=...> tag in
// the body (the <head> holds the site's own script and theme snippet).
std::string ScriptAttr(const std::string& page, const std::string& attr) {
  size_t tag = page.find("<script src=", page.find("</head>"));
  if (tag == std::string::npos) return "";
  size_t end = page.find('>', tag);
  size_t at = page.find(" " + attr + "=\"", tag - 1);
  if (at == std::string::npos || at > end) return "";
  at += attr.size() + 3;
  return page.substr(at, page.find('"', at) - at);
}

std::string Sri(const std::string& bytes) {
  Sha256Digest d = Sha256(bytes);
  return "sha256-" + Base64Encode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

// The policy ingest gives a diagram page that loads `url`.
std::string DiagramCsp(const std::string& url) {
  site::NotePage p;
  p.has_mermaid = true;
  p.site.mermaid_url = url;
  return site::NotePageCsp(p);
}

}  // namespace

TEST_CASE("mermaid: the bundled file is served by the site, same origin, immutable, exactly its bytes") {
  const std::string bundled = BundledBytes();
  if (bundled.empty()) {
    MESSAGE("skipped: " << testing::BinPath("mermaid.min.js") << " is absent (scripts/install-deps.sh installs it)");
    return;
  }
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.StartIngest();
  c.StartEdge();
  auto push = c.Push(PushBody({{"Diagram.md", kDiagram}, {"Plain.md", "# Plain\n\nNo diagram.\n"}}));
  INFO(push.body, c.Logs());
  REQUIRE(push.status == 200);

  const std::string sha = Sha256Hex(bundled);
  const std::string url = "/assets/" + sha.substr(0, 16) + "/mermaid.min.js";
  auto page = c.WaitForPage("/diagram", 200, "mermaid");
  REQUIRE(page.status == 200);
  CHECK(ScriptAttr(page.body, "src") == url);
  CHECK(ScriptAttr(page.body, "integrity") == Sri(bundled));
  CHECK(page.body.find("cdn.jsdelivr.net") == std::string::npos);
  // The policy: 'self' (the site script; the bundled path has no host to
  // name), the theme snippet's and the start-up script's hashes, nothing
  // from another origin.
  const std::string csp = page.Header("Content-Security-Policy");
  CHECK(csp == DiagramCsp(url));
  const size_t from = csp.find("script-src ");
  REQUIRE(from != std::string::npos);
  const std::string script_src = csp.substr(from, csp.find(';', from) - from);
  CHECK(script_src.starts_with("script-src 'self' 'sha256-"));
  CHECK(script_src.ends_with("='"));
  CHECK(std::count(script_src.begin(), script_src.end(), ' ') == 3);  // 'self' and two hashes
  auto plain = c.WaitForPage("/plain", 200);
  // No mermaid: after </head> the only script is the theme snippet, body's first child.
  const size_t body_script = plain.body.find("<script", plain.body.find("</head>"));
  REQUIRE(body_script != std::string::npos);
  CHECK(plain.body.compare(body_script - 1, 8, "><script") == 0);
  CHECK(plain.body.find("<script", body_script + 1) == std::string::npos);
  CHECK(plain.body.find("mermaid") == std::string::npos);

  // The edge streams the blob from storage as JavaScript, immutable.
  auto js = c.EdgeGet(url);
  REQUIRE(js.status == 200);
  CHECK(Sha256Hex(js.body) == sha);
  CHECK(js.Header("Content-Type") == "text/javascript; charset=utf-8");
  CHECK(js.Header("Cache-Control") == "public, max-age=31536000, immutable");
  CHECK(js.Header("X-Content-Type-Options") == "nosniff");
  CHECK(js.Header("Content-Disposition").empty());
  CHECK(js.Header("ETag") == "\"" + sha + "\"");
  CHECK(c.EdgeGet(url, {{"If-None-Match", "\"" + sha + "\""}}).status == 304);
  auto head = c.EdgeGet(url, {}, "HEAD");
  CHECK(head.status == 200);
  CHECK(head.Header("Content-Length") == std::to_string(bundled.size()));
  // Compressed once on fetch, served gzip to browsers: a page with a diagram
  // costs about 1 MB on the wire, not 3.6 MB (issue 28). Ranges stay identity.
  auto gz = c.EdgeGet(url, {{"Accept-Encoding", "gzip, deflate, br, zstd"}});
  REQUIRE(gz.status == 200);
  CHECK(gz.Header("Content-Encoding") == "gzip");
  CHECK(gz.Header("Vary") == "Accept-Encoding");
  CHECK(gz.Header("Content-Type") == "text/javascript; charset=utf-8");
  CHECK(gz.Header("ETag") == "\"" + sha + "-gz\"");
  MESSAGE("mermaid.min.js: " << bundled.size() << " bytes, " << gz.body.size() << " gzip");
  CHECK(gz.body.size() <= 1'100'000);
  std::string inflated;
  REQUIRE(GzipDecompress(gz.body, &inflated).ok());
  CHECK(inflated == bundled);
  auto part = c.EdgeGet(url, {{"Accept-Encoding", "gzip"}, {"Range", "bytes=0-99"}});
  CHECK(part.status == 206);
  CHECK(part.Header("Content-Encoding").empty());
  CHECK(part.body == bundled.substr(0, 100));
  // The site's own stylesheet and script are pages, gzip already; the whole
  // diagram page on the wire (the page, both of them, mermaid) is <= 1.1 MB.
  auto page_gz = c.EdgeGet("/diagram", {{"Accept-Encoding", "gzip"}});
  CHECK(page_gz.Header("Content-Encoding") == "gzip");
  size_t wire = page_gz.body.size() + gz.body.size();
  for (const char* kind : {"/assets/folio.", "/_/folio."}) {
    CAPTURE(kind);
    const size_t at = page.body.find(kind);
    REQUIRE(at != std::string::npos);
    const std::string own = page.body.substr(at, page.body.find('"', at) - at);
    auto r = c.EdgeGet(own, {{"Accept-Encoding", "gzip"}});
    CHECK(r.status == 200);
    CHECK(r.Header("Content-Encoding") == "gzip");
    wire += r.body.size();
  }
  MESSAGE("a page with a diagram: " << wire << " bytes on the wire (bodies, gzip)");
  CHECK(wire <= 1'100'000);
  // The same blob under another name is an attachment URL: bytes, never script.
  auto other = c.EdgeGet("/assets/" + sha.substr(0, 16) + "/other.js");
  CHECK(other.status == 200);
  CHECK(other.Header("Content-Type") == "application/octet-stream");
  CHECK(other.Header("Content-Disposition").find("attachment") == 0);

  // The page record is small: its body is the blob in storage.
  {
    bus::BusOptions o;
    o.url = c.nats().url();
    auto b = bus::Bus::Connect(o);
    REQUIRE(b.ok());
    auto feed = testing::ReadFeed(b->get(), "default");
    REQUIRE(feed.ok());
    REQUIRE(feed->records.count(url) == 1);
    const std::string& rec = feed->records[url];
    CHECK(rec.size() < 1024);
    bus::PageRecord r;
    REQUIRE(bus::DecodePageRecord(rec, &r).ok());
    CHECK(r.body_blob == sha);
    CHECK(r.body_gzip.empty());
  }
  auto blobs = c.StorageDo("GET", "/blobs?prefix=" + sha.substr(0, 8));
  CHECK(blobs.body.find(sha) != std::string::npos);

  // A restart finds the blob in storage and changes no page.
  const std::string etag = page.Header("ETag");
  c.StopIngest();
  c.StartIngest();
  CHECK(c.WaitForPage("/diagram", 200).Header("ETag") == etag);
  CHECK(c.Logs().find("serving the bundled mermaid") != std::string::npos);
}

TEST_CASE("mermaid: without storage or without the file, pages load the pinned CDN build") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddIngestArgs({"--mermaid-file", c.dir() + "/no-such-mermaid.js"});
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.StartIngest();
  c.StartEdge();
  REQUIRE(c.Push(PushBody({{"Diagram.md", kDiagram}})).status == 200);
  auto page = c.WaitForPage("/diagram", 200, "mermaid");
  INFO(c.Logs());
  CHECK(ScriptAttr(page.body, "src") == site::kMermaidUrl);
  CHECK(ScriptAttr(page.body, "integrity") == site::kMermaidIntegrity);
  CHECK(c.Logs().find("no bundled mermaid") != std::string::npos);
  CHECK(c.Logs().find("no-such-mermaid.js does not exist") != std::string::npos);

  Cluster plain;  // no --storage at all
  REQUIRE(plain.Push(PushBody({{"Diagram.md", kDiagram}})).status == 200);
  auto cdn = plain.WaitForPage("/diagram", 200, "mermaid");
  CHECK(ScriptAttr(cdn.body, "src") == site::kMermaidUrl);
  CHECK(cdn.Header("Content-Security-Policy") == DiagramCsp(std::string(site::kMermaidUrl)));
  if (!BundledBytes().empty()) CHECK(plain.Logs().find("no --storage: pages load mermaid from its CDN URL") != std::string::npos);
}

TEST_CASE("mermaid: an explicit --mermaid-url wins over the bundled file") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddIngestArgs({"--mermaid-url", "/static/mermaid.min.js"});
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.StartIngest();
  c.StartEdge();
  REQUIRE(c.Push(PushBody({{"Diagram.md", kDiagram}})).status == 200);
  auto page = c.WaitForPage("/diagram", 200, "mermaid");
  INFO(c.Logs());
  CHECK(ScriptAttr(page.body, "src") == "/static/mermaid.min.js");
  CHECK(ScriptAttr(page.body, "integrity").empty());
  CHECK(c.Logs().find("serving the bundled mermaid") == std::string::npos);
  const std::string bundled = BundledBytes();
  if (!bundled.empty()) {
    auto blobs = c.StorageDo("GET", "/blobs?prefix=" + Sha256Hex(bundled).substr(0, 8));
    CHECK(blobs.body.find(Sha256Hex(bundled)) == std::string::npos);  // nothing uploaded
  }
}
