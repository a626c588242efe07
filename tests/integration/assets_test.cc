// Attachments through folio-storage: ingest --storage puts them there (not in
// SQLite pages nor the bus), the edge --storage fetches them on a miss, keeps
// them in memory and serves them immutable, with ETag, 304 and Range. Each
// needs its storage token: the edge's read token fetches, never uploads.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <random>
#include <thread>

#include "cluster.h"
#include "folio/bus/bus.h"
#include "folio/bus/page_schema.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/testing/feed.h"
#include "test_util.h"

using namespace folio;
using namespace folio::it;

namespace {

std::string RandomBytes(std::string prefix, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s = std::move(prefix);
  while (s.size() < n) s.push_back(static_cast<char>(rng() & 0xff));
  return s;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// The n-th "/assets/<hash16>/..." URL in a page (skipping the stylesheet).
std::string AssetUrl(const std::string& body, const std::string& name) {
  size_t at = body.find("/assets/");
  while (at != std::string::npos) {
    size_t end = body.find('"', at);
    std::string url = body.substr(at, end - at);
    if (url.size() > name.size() && url.compare(url.size() - name.size(), name.size(), name) == 0) return url;
    at = body.find("/assets/", at + 1);
  }
  return "";
}

// Runs a binary to its exit (it must refuse to start); its output in *out.
int RunToExit(const std::vector<std::string>& argv, std::string* out) {
  std::string cmd;
  for (const auto& a : argv) cmd += "'" + a + "' ";
  cmd += "2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

TEST_CASE("attachments go through folio-storage and the edge serves them from it") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddIngestArgs({"--mermaid-url="});  // no bundled mermaid: the storage PUTs counted below are the attachments'
  // An 8 MiB cache keeps assets up to 1 MiB: the PNG is kept, the 2.9 MiB PDF streamed.
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.AddEdgeArgs({"--asset-cache", "8MiB"});
  c.StartIngest();
  c.StartEdge();

  const std::string png = RandomBytes("\x89PNG\r\n\x1a\n", 6000, 1);
  const std::string pdf = RandomBytes("%PDF-1.4\n", 2'500'000 + (1 << 19), 2);  // ~2.9 MiB: over the old 1 MiB
  std::string vault = c.dir() + "/vault";
  REQUIRE(system(("mkdir -p '" + vault + "/media'").c_str()) == 0);
  WriteFile(vault + "/media/img.png", png);
  WriteFile(vault + "/media/doc.pdf", pdf);
  WriteFile(vault + "/Note.md", "# Note\n\nA picture: ![[img.png]]\n\nThe paper: ![[doc.pdf]]\n");

  std::string out;
  // No --max-attachment-bytes: the manifest says this server (with storage) takes 64 MiB.
  std::vector<std::string> push{"push", vault, "--server", c.ingest_url(), "--token", kToken};
  int rc = c.RunCli(push, &out);
  INFO(out);
  INFO(c.Logs());
  REQUIRE(rc == 0);

  auto page = c.WaitForPage("/note", 200, "img.png");
  REQUIRE(page.status == 200);
  std::string img_url = AssetUrl(page.body, "img.png");
  std::string pdf_url = AssetUrl(page.body, "doc.pdf");
  REQUIRE(!img_url.empty());
  REQUIRE(!pdf_url.empty());
  CHECK(page.body.find("src=\"" + img_url + "\"") != std::string::npos);
  const std::string png_sha = Sha256Hex(png), pdf_sha = Sha256Hex(pdf);
  CHECK(img_url == "/assets/" + png_sha.substr(0, 16) + "/img.png");

  // Storage holds both blobs.
  auto listing = c.StorageDo("GET", "/blobs?prefix=" + png_sha.substr(0, 8));
  CHECK(listing.body.find(png_sha) != std::string::npos);
  listing = c.StorageDo("GET", "/blobs?prefix=" + pdf_sha.substr(0, 8));
  CHECK(listing.body.find(pdf_sha) != std::string::npos);

  // The bus holds no asset pages: the edge must fetch them from storage.
  {
    bus::BusOptions o;
    o.url = c.nats().url();
    auto b = bus::Bus::Connect(o);
    REQUIRE(b.ok());
    auto feed = testing::ReadFeed(b->get(), "default");
    REQUIRE(feed.ok());
    CHECK(!feed->records.empty());  // the note's page is there
    CHECK(feed->records.count(img_url) == 0);
    CHECK(feed->records.count(pdf_url) == 0);
  }

  auto img = c.EdgeGet(img_url);
  REQUIRE(img.status == 200);
  CHECK(img.body == png);
  CHECK(img.Header("Content-Type") == "image/png");
  CHECK(img.Header("ETag") == "\"" + png_sha + "\"");
  CHECK(img.Header("Cache-Control") == "public, max-age=31536000, immutable");
  CHECK(img.Header("Accept-Ranges") == "bytes");
  auto again = c.EdgeGet(img_url, {{"If-None-Match", "\"" + png_sha + "\""}});
  CHECK(again.status == 304);
  CHECK(again.body.empty());
  auto part = c.EdgeGet(img_url, {{"Range", "bytes=10-109"}});
  CHECK(part.status == 206);
  CHECK(part.body == png.substr(10, 100));
  CHECK(part.Header("Content-Range") == "bytes 10-109/6000");
  auto tail = c.EdgeGet(img_url, {{"Range", "bytes=-8"}});
  CHECK(tail.status == 206);
  CHECK(tail.body == png.substr(png.size() - 8));
  CHECK(c.EdgeGet(img_url, {{"Range", "bytes=6000-"}}).status == 416);
  auto head = c.EdgeGet(img_url, {}, "HEAD");
  CHECK(head.status == 200);
  CHECK(head.Header("Content-Length") == "6000");
  // An unknown hash: the site's 404 page.
  auto missing = c.EdgeGet("/assets/0123456789abcdef/nothing.png");
  CHECK(missing.status == 404);
  CHECK(missing.body.find("<html") != std::string::npos);

  auto edge_metrics = c.EdgeGet("/metrics").body;
  CHECK(Metric(edge_metrics, "folio_edge_asset_misses_total") >= 1);
  CHECK(Metric(edge_metrics, "folio_edge_asset_hits_total") >= 1);
  CHECK(Metric(edge_metrics, "folio_edge_asset_cache_bytes") == 6000);

  // A re-push uploads nothing.
  auto storage_metrics = http::Get(c.storage_url() + "/metrics");
  REQUIRE(storage_metrics.ok());
  const double puts = Metric(storage_metrics->body, "folio_storage_requests_total{op=\"put\"}");
  CHECK(puts == 2);
  rc = c.RunCli(push, &out);
  CHECK(rc == 0);
  storage_metrics = http::Get(c.storage_url() + "/metrics");
  REQUIRE(storage_metrics.ok());
  CHECK(Metric(storage_metrics->body, "folio_storage_requests_total{op=\"put\"}") == puts);

  // Storage down: cached assets still serve, a new miss is 503 (not cached),
  // and a push with a new attachment fails and changes nothing.
  c.StopStorage();
  CHECK(c.EdgeGet(img_url).status == 200);
  auto down = c.EdgeGet(pdf_url);
  CHECK(down.status == 503);
  JsonWriter w;
  w.BeginObject().Key("attachments").BeginArray();
  w.BeginObject().Key("path").String("media/new.png").Key("data").String(Base64UrlEncode("new bytes")).EndObject();
  w.EndArray().EndObject();
  auto refused = c.Push(w.Take());
  CHECK(refused.status == 503);
  CHECK(refused.body.find("storage") != std::string::npos);
  CHECK(c.Manifest().body.find("new.png") == std::string::npos);
  edge_metrics = c.EdgeGet("/metrics").body;
  CHECK(Metric(edge_metrics, "folio_edge_asset_fetch_errors_total") >= 1);

  // Back up: the large PDF is served in full and by range.
  c.StartStorage();
  auto doc = c.EdgeGet(pdf_url);
  REQUIRE(doc.status == 200);
  CHECK(doc.body.size() == pdf.size());
  CHECK(doc.body == pdf);
  CHECK(doc.Header("Content-Type") == "application/pdf");
  auto mid = c.EdgeGet(pdf_url, {{"Range", "bytes=2000000-2000099"}});
  CHECK(mid.status == 206);
  CHECK(mid.body == pdf.substr(2'000'000, 100));
  CHECK(mid.Header("Content-Range") == "bytes 2000000-2000099/" + std::to_string(pdf.size()));
  // The PDF is over the edge's keep limit (1 MiB): streamed from storage by
  // ranged reads of at most 1 MiB, never held. The full GET took three reads,
  // the range one; the cache still holds only the PNG.
  edge_metrics = c.EdgeGet("/metrics").body;
  CHECK(Metric(edge_metrics, "folio_edge_asset_cache_bytes") == 6000);
  CHECK(Metric(edge_metrics, "folio_edge_asset_range_reads_total") == 4);
  auto open_end = c.EdgeGet(pdf_url, {{"Range", "bytes=1048000-"}});
  CHECK(open_end.status == 206);
  CHECK(open_end.body == pdf.substr(1'048'000));
  auto last = c.EdgeGet(pdf_url, {{"Range", "bytes=-5"}});
  CHECK(last.status == 206);
  CHECK(last.body == pdf.substr(pdf.size() - 5));
  CHECK(c.EdgeGet(pdf_url, {{"Range", "bytes=" + std::to_string(pdf.size()) + "-"}}).status == 416);
  auto pdf_head = c.EdgeGet(pdf_url, {}, "HEAD");
  CHECK(pdf_head.status == 200);
  CHECK(pdf_head.Header("Content-Length") == std::to_string(pdf.size()));
  CHECK(pdf_head.Header("ETag") == "\"" + pdf_sha + "\"");
  CHECK(pdf_head.body.empty());
  CHECK(c.EdgeGet(pdf_url, {{"If-None-Match", "\"" + pdf_sha + "\""}}).status == 304);
  // Storage gone mid-way: a new response is cut short (its headers were
  // sent), never padded or corrupt.
  c.StopStorage();
  auto cut = c.EdgeGet(pdf_url);
  CHECK(cut.body != pdf);
  CHECK(cut.body.size() < pdf.size());
}

TEST_CASE("without --storage attachments stay in the pages bucket") {
  Cluster c;
  JsonWriter w;
  w.BeginObject().Key("attachments").BeginArray();
  w.BeginObject().Key("path").String("pic.png").Key("data").String(Base64UrlEncode("png bytes")).EndObject();
  w.EndArray().EndObject();
  auto r = c.Push(w.Take());
  REQUIRE(r.status == 200);
  std::string url = "/assets/" + Sha256Hex("png bytes").substr(0, 16) + "/pic.png";
  auto got = c.WaitForPage(url, 200, "png bytes");
  CHECK(got.status == 200);
  CHECK(got.body == "png bytes");
}

TEST_CASE("blob collection: a replaced attachment's old blob is deleted after the grace period, the new one kept") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddIngestArgs({"--blob-gc-every", "200ms", "--blob-gc-grace", "2s"});
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.StartIngest();
  c.StartEdge();
  std::string vault = c.dir() + "/vault";
  REQUIRE(system(("mkdir -p '" + vault + "'").c_str()) == 0);
  const std::string v1 = RandomBytes("\x89PNG\r\n\x1a\n", 3000, 7), v2 = RandomBytes("\x89PNG\r\n\x1a\n", 3000, 8);
  const std::string keep = RandomBytes("\x89PNG\r\n\x1a\n", 2000, 9);
  WriteFile(vault + "/Note.md", "# Note\n\n![[pic.png]] ![[keep.png]]\n");
  WriteFile(vault + "/pic.png", v1);
  WriteFile(vault + "/keep.png", keep);
  std::vector<std::string> push{"push", vault, "--server", c.ingest_url(), "--token", kToken};
  std::string out;
  REQUIRE(c.RunCli(push, &out) == 0);
  auto has = [&](const std::string& bytes) {
    auto r = c.StorageDo("GET", "/blobs/sha256/" + Sha256Hex(bytes));
    return r.status == 200 && r.body == bytes;
  };
  REQUIRE(has(v1));
  // Replace pic.png: v1 is now unused by every attachment.
  WriteFile(vault + "/pic.png", v2);
  REQUIRE(c.RunCli(push, &out) == 0);
  CHECK(has(v2));
  CHECK(has(v1));  // within the grace period it stays, for pages still open
  bool gone = false;
  for (int i = 0; i < 150 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gone = !has(v1);
  }
  CHECK(gone);
  CHECK(has(v2));
  CHECK(has(keep));
  auto page = c.WaitForPage("/note", 200, "pic.png");
  std::string pic_url = AssetUrl(page.body, "pic.png");
  REQUIRE(!pic_url.empty());
  auto served = c.EdgeGet(pic_url);
  CHECK(served.status == 200);
  CHECK(served.body == v2);
  auto metrics = http::Get(c.ingest_url() + "/metrics");
  REQUIRE(metrics.ok());
  CHECK(Metric(metrics->body, "folio_ingest_blob_gc_deleted_total") == 1);
}

TEST_CASE("storage tokens: an edge needs the read token to fetch assets, ingest the write token to upload") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddEdgeArgs({"--storage", c.storage_url(), "--storage-token", "not-the-read-token"});
  c.StartIngest();
  c.StartEdge();
  const std::string png = RandomBytes("\x89PNG\r\n\x1a\n", 4000, 11);
  REQUIRE(c.Push(PushWithAttachment("pic.md", "pic.png", png)).status == 200);
  auto page = c.WaitForPage("/pic", 200, "pic.png");
  const std::string url = AssetUrl(page.body, "pic.png");
  REQUIRE(!url.empty());

  // A wrong token: storage refuses the edge, the reader gets an error status
  // and never the bytes (nor anything cached).
  for (int i = 0; i < 2; ++i) {
    auto refused = c.EdgeGet(url);
    CHECK(refused.status == 503);
    CHECK(refused.body.find(png.substr(0, 64)) == std::string::npos);
  }
  CHECK(c.Logs().find("storage refused the edge's token (HTTP 401)") != std::string::npos);
  c.StopEdge();
  // No token at all: the edge refuses to start and says what it needs.
  std::string out;
  int rc = RunToExit({testing::BinPath("folio-edge"), "--listen", "127.0.0.1:0", "--nats", c.nats().url(),
                      "--storage", c.storage_url()},
                     &out);
  CHECK(rc == 1);
  CHECK(out.find("--storage-token") != std::string::npos);
  CHECK(out.find("read-token") != std::string::npos);
  // The read token: served.
  c.AddEdgeArgs({"--storage-token", c.storage_read_token()});
  c.StartEdge();
  auto served = c.WaitForPage(url, 200);
  CHECK(served.status == 200);
  CHECK(served.body == png);

  // Ingest with the read token (or a wrong one) cannot upload: the push fails
  // with a message saying why, nothing is committed or stored.
  const std::string other = RandomBytes("\x89PNG\r\n\x1a\n", 4000, 12);
  for (const auto& [token, why] : std::vector<std::pair<std::string, std::string>>{
           {c.storage_read_token(), "HTTP 403"}, {"not-the-write-token", "HTTP 401"}}) {
    CAPTURE(token);
    c.StopIngest();
    c.AddIngestArgs({"--storage-token", token});
    c.StartIngest();
    auto refused = c.Push(PushWithAttachment("other.md", "other.png", other));
    CHECK(refused.status == 503);
    CHECK(refused.body.find(why) != std::string::npos);
    CHECK(refused.body.find("--storage-token") != std::string::npos);
    auto manifest = c.Manifest();
    REQUIRE(manifest.status == 200);
    CHECK(manifest.body.find("other.png") == std::string::npos);
    CHECK(manifest.body.find("other.md") == std::string::npos);
    CHECK(c.StorageDo("HEAD", "/blobs/sha256/" + Sha256Hex(other)).status == 404);
  }
  c.StopIngest();
  // --storage without a token: ingest refuses to start, naming the flag and
  // where storage keeps its write token.
  rc = RunToExit({testing::BinPath("folio-ingest"), "--listen", "127.0.0.1:0", "--nats", c.nats().url(), "--data",
                  c.ingest_data_dir(), "--token", kToken, "--storage", c.storage_url()},
                 &out);
  CHECK(rc == 1);
  CHECK(out.find("--storage-token") != std::string::npos);
  CHECK(out.find("write-token") != std::string::npos);
}

namespace {

constexpr const char* kSandbox = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

}  // namespace

// Issue 9, item 2: an author's SVG (or HTML) must not run script on the
// site's origin when opened directly. Every /assets/ response is sandboxed
// and nosniff; active types are downloads; pages still show SVGs (<img>
// ignores Content-Disposition).
TEST_CASE("attachments run no script on the site: CSP sandbox, nosniff, downloads for active types") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.AddEdgeArgs({"--asset-cache", "8MiB"});  // over 1 MiB: streamed
  c.StartIngest();
  c.StartEdge();
  const std::string svg =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"><script>alert(2)</script></svg>";
  const std::string html = "<!doctype html><script>alert(document.cookie)</script>";
  const std::string png = RandomBytes("\x89PNG\r\n\x1a\n", 3000, 31);
  const std::string pdf = RandomBytes("%PDF-1.4\n", 3000, 32);
  const std::string bin = RandomBytes("\x7f" "ELF", 3000, 33);
  const std::string big_svg = "<svg xmlns=\"http://www.w3.org/2000/svg\">" + std::string(1500000, ' ') +
                              "<script>alert(3)</script></svg>";
  auto pushed = c.Push(AttachmentsPushBody({{"media/evil.svg", svg}, {"page.html", html}, {"img.png", png},
                                        {"doc.pdf", pdf}, {"data.bin", bin}, {"big.svg", big_svg}}));
  INFO(pushed.body);
  REQUIRE(pushed.status == 200);

  struct Case {
    const std::string* bytes;
    std::string name, type, disposition;
  };
  const std::vector<Case> cases = {
      {&svg, "evil.svg", "image/svg+xml", "attachment; filename=\"evil.svg\""},
      {&html, "page.html", "application/octet-stream", "attachment; filename=\"page.html\""},
      {&png, "img.png", "image/png", ""},
      {&pdf, "doc.pdf", "application/pdf", ""},
      {&bin, "data.bin", "application/octet-stream", "attachment; filename=\"data.bin\""},
      {&big_svg, "big.svg", "image/svg+xml", "attachment; filename=\"big.svg\""},  // streamed from storage
  };
  auto check = [&](const http::ClientResponse& r, const Case& k, bool with_type) {
    CHECK(r.Header("Content-Security-Policy") == kSandbox);
    CHECK(r.Header("X-Content-Type-Options") == "nosniff");
    CHECK(r.Header("Content-Disposition") == k.disposition);
    if (with_type) CHECK(r.Header("Content-Type") == k.type);
  };
  for (const Case& k : cases) {
    CAPTURE(k.name);
    const std::string url = AssetPath(*k.bytes, k.name);
    auto get = c.EdgeGet(url);
    REQUIRE(get.status == 200);
    CHECK(get.body == *k.bytes);
    check(get, k, true);
    auto head = c.EdgeGet(url, {}, "HEAD");
    CHECK(head.status == 200);
    check(head, k, true);
    auto part = c.EdgeGet(url, {{"Range", "bytes=2-11"}});
    CHECK(part.status == 206);
    CHECK(part.body == k.bytes->substr(2, 10));
    check(part, k, true);
    auto same = c.EdgeGet(url, {{"If-None-Match", "\"" + Sha256Hex(*k.bytes) + "\""}});
    CHECK(same.status == 304);
    check(same, k, false);
  }

  // Bytes stored as text/html (not by ingest: straight into storage) are
  // served under a .png name as the name says, and as a download since the
  // stored type disagrees; nosniff keeps a browser from guessing HTML.
  const std::string claims_html = "<html><body><script>alert('png')</script></body></html>";
  http::ClientRequest put;
  put.method = "PUT";
  put.url = c.storage_url() + "/blobs/sha256/" + Sha256Hex(claims_html);
  put.body = claims_html;
  put.headers = {{"Content-Type", "text/html; charset=utf-8"},
                 {"Authorization", "Bearer " + c.storage_write_token()}};
  auto stored = http::Fetch(put);
  REQUIRE(stored.ok());
  REQUIRE(stored->status == 201);
  auto lying = c.EdgeGet(AssetPath(claims_html, "cat.png"));
  CHECK(lying.status == 200);
  CHECK(lying.Header("Content-Type") == "image/png");
  CHECK(lying.Header("Content-Disposition") == "attachment; filename=\"cat.png\"");
  CHECK(lying.Header("Content-Security-Policy") == kSandbox);
  CHECK(lying.Header("X-Content-Type-Options") == "nosniff");
  // A UTF-8 file name: an ASCII fallback and the exact name (RFC 6266).
  auto named = c.EdgeGet("/assets/" + Sha256Hex(svg).substr(0, 16) + "/%C3%BCber%22.svg");
  CHECK(named.status == 200);
  CHECK(named.Header("Content-Disposition") == "attachment; filename=\"__ber_.svg\"; filename*=UTF-8''%C3%BCber%22.svg");
  // Storage's own answers are sandboxed and nosniff too.
  auto direct = http::Get(c.storage_url() + "/blobs/sha256/" + Sha256Hex(svg),
                          {{"Authorization", "Bearer " + c.storage_read_token()}});
  REQUIRE(direct.ok());
  CHECK(direct->Header("Content-Security-Policy") == kSandbox);
  CHECK(direct->Header("X-Content-Type-Options") == "nosniff");
}

// Text attachments are gzip-compressed once, when the edge fetches them,
// and served compressed to clients that accept it: their own ETag, Vary,
// ranges and HEAD of the right representation; media and streamed assets
// stay identity.
TEST_CASE("text attachments are served gzip to clients that accept it, once compressed on fetch") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddIngestArgs({"--mermaid-url="});
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.AddEdgeArgs({"--asset-cache", "8MiB"});  // keeps up to 1 MiB
  c.StartIngest();
  c.StartEdge();
  std::string css, json = "[", svg = "<svg xmlns=\"http://www.w3.org/2000/svg\">";
  for (int i = 0; i < 300; ++i) {
    css += ".callout-" + std::to_string(i) + " { --callout-color: 8, 109, 221; }\n";
    json += std::string(i ? "," : "") + "{\"id\":" + std::to_string(i) + ",\"title\":\"Note\"}";
    svg += "<rect x=\"" + std::to_string(i) + "\" y=\"0\" width=\"10\" height=\"10\" fill=\"#ccc\"/>";
  }
  json += "]";
  svg += "</svg>";
  const std::string png = RandomBytes("\x89PNG\r\n\x1a\n", 6000, 51);
  const std::string big_css = std::string(1500000, ' ') + "body{}";  // over 1 MiB: streamed, identity
  auto pushed = c.Push(AttachmentsPushBody(
      {{"theme.css", css}, {"data.json", json}, {"chart.svg", svg}, {"img.png", png}, {"big.css", big_css}}));
  INFO(pushed.body);
  REQUIRE(pushed.status == 200);
  const std::vector<std::pair<std::string, const std::string*>> texts = {
      {"theme.css", &css}, {"data.json", &json}, {"chart.svg", &svg}};
  const std::pair<std::string, std::string> gz = {"Accept-Encoding", "gzip, deflate, br"};
  for (const auto& [name, bytes] : texts) {
    CAPTURE(name);
    const std::string url = AssetPath(*bytes, name), sha = Sha256Hex(*bytes);
    auto z = c.EdgeGet(url, {gz});
    REQUIRE(z.status == 200);
    CHECK(z.Header("Content-Encoding") == "gzip");
    CHECK(z.Header("Vary") == "Accept-Encoding");
    CHECK(z.Header("ETag") == "\"" + sha + "-gz\"");
    CHECK(z.body.size() < bytes->size() / 2);
    std::string inflated;
    REQUIRE(GzipDecompress(z.body, &inflated).ok());
    CHECK(inflated == *bytes);
    CHECK(c.EdgeGet(url, {gz, {"If-None-Match", "\"" + sha + "-gz\""}}).status == 304);
    auto zhead = c.EdgeGet(url, {gz}, "HEAD");
    CHECK(zhead.status == 200);
    CHECK(zhead.Header("Content-Length") == std::to_string(z.body.size()));
    CHECK(zhead.Header("Content-Encoding") == "gzip");
    // Without Accept-Encoding: the identity bytes, their own ETag.
    auto id = c.EdgeGet(url);
    CHECK(id.body == *bytes);
    CHECK(id.Header("Content-Encoding").empty());
    CHECK(id.Header("Vary") == "Accept-Encoding");
    CHECK(id.Header("ETag") == "\"" + sha + "\"");
    CHECK(c.EdgeGet(url, {{"Accept-Encoding", "gzip;q=0"}}).Header("Content-Encoding").empty());
    // A range is of the identity bytes, even from a client that accepts gzip.
    auto part = c.EdgeGet(url, {gz, {"Range", "bytes=5-24"}});
    CHECK(part.status == 206);
    CHECK(part.Header("Content-Encoding").empty());
    CHECK(part.body == bytes->substr(5, 20));
  }
  auto img = c.EdgeGet(AssetPath(png, "img.png"), {gz});
  CHECK(img.status == 200);
  CHECK(img.Header("Content-Encoding").empty());
  CHECK(img.Header("Vary").empty());
  CHECK(img.body == png);
  auto big = c.EdgeGet(AssetPath(big_css, "big.css"), {gz});
  CHECK(big.status == 200);
  CHECK(big.Header("Content-Encoding").empty());
  CHECK(big.body == big_css);
  // The cache counts both copies of what it keeps.
  const double cached = Metric(c.EdgeGet("/metrics").body, "folio_edge_asset_cache_bytes");
  CHECK(cached > css.size() + json.size() + svg.size() + png.size());
  CHECK(cached < 2 * (css.size() + json.size() + svg.size()) + png.size());
}

// Issue 9, item 7 at the edge: a blob storage cannot read back intact is an
// error status for the reader (502, JSON), never a 200/206 cut short; a
// streamed asset's status line waits for its first piece.
TEST_CASE("a damaged attachment is an error status at the edge, never 200 cut short") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.AddEdgeArgs({"--asset-cache", "8MiB"});  // over 1 MiB: streamed
  c.StartIngest();
  c.StartEdge();
  const std::string small = RandomBytes("\x89PNG\r\n\x1a\n", 5000, 41);
  const std::string big = RandomBytes("%PDF-1.4\n", 3 << 20, 42);
  auto pushed = c.Push(AttachmentsPushBody({{"small.png", small}, {"big.pdf", big}}));
  INFO(pushed.body);
  REQUIRE(pushed.status == 200);
  const std::string small_url = AssetPath(small, "small.png"), big_url = AssetPath(big, "big.pdf");
  // The edge learns the big one's size and type (it streams it from now on).
  REQUIRE(c.EdgeGet(big_url, {{"Range", "bytes=0-99"}}).status == 206);
  // A clean stop writes storage's checkpoint: the damaged blobs stay indexed.
  c.StopStorage();
  const std::string seg = c.dir() + "/storage/segment-00000001.fj";
  REQUIRE(testing::FlipByteOf(seg, small.substr(2000, 32)));
  REQUIRE(testing::FlipByteOf(seg, big.substr((1 << 20) + 5000, 32)));  // its second block
  c.StartStorage();
  auto is_error = [](const http::ClientResponse& r) {
    CHECK(r.status == 502);
    CHECK(r.body.find("\"error\"") != std::string::npos);
    CHECK(r.Header("Cache-Control") == "no-store");
  };
  is_error(c.EdgeGet(small_url));
  // The range starts in the damaged block: its first piece fails before
  // any status line, so no 206 is sent.
  is_error(c.EdgeGet(big_url, {{"Range", "bytes=1048576-1048675"}}));
  // From then on storage knows the blob is damaged: every read is an error.
  is_error(c.EdgeGet(big_url));
  auto head = c.EdgeGet(big_url, {}, "HEAD");
  CHECK(head.status == 502);
  // Other files are served as before.
  auto again = c.Push(AttachmentsPushBody({{"fine.png", RandomBytes("\x89PNG\r\n\x1a\n", 1000, 43)}}));
  CHECK(again.status == 200);
  CHECK(c.EdgeGet(AssetPath(RandomBytes("\x89PNG\r\n\x1a\n", 1000, 43), "fine.png")).status == 200);
}
