// Push a vault (CLI and raw HTTP) and read it back from the edge: pages,
// headers, 304, HEAD, 404, updates, deletions, incremental rendering.
#include <doctest/doctest.h>

#include <cstdlib>

#include "cluster.h"
#include "folio/core/gzip.h"
#include "folio/core/json.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;

namespace {

// The value of one series of ingest's /metrics ("name{labels}"), or -1.
double IngestMetric(Cluster& c, const std::string& series) {
  auto r = http::Get(c.ingest_url() + "/metrics");
  if (!r.ok() || r->status != 200) return -1;
  const std::string want = series + " ";
  for (size_t at = 0; (at = r->body.find(want, at)) != std::string::npos; at += want.size()) {
    if (at == 0 || r->body[at - 1] == '\n') return std::strtod(r->body.c_str() + at + want.size(), nullptr);
  }
  return -1;
}
const std::string kParsedTwice = "folio_ingest_notes_parsed_twice_total{site=\"default\"}";

std::string FixtureVault() { return testing::SourcePath("tests/fixtures/vault"); }
}  // namespace

TEST_CASE("CLI push publishes a vault that the edge serves with the right headers") {
  Cluster c;
  std::string out;
  int rc = c.RunCli({"push", FixtureVault(), "--server", c.ingest_url(), "--token", kToken}, &out);
  INFO(out);
  REQUIRE(rc == 0);

  auto page = c.WaitForPage("/welcome", 200, "Welcome");
  INFO(c.Logs());
  REQUIRE(page.status == 200);
  CHECK(page.Header("Content-Type") == "text/html; charset=utf-8");
  CHECK(page.Header("Vary") == "Accept-Encoding");
  CHECK(!page.Header("ETag").empty());
  CHECK(!page.Header("Last-Modified").empty());
  CHECK(page.Header("Content-Encoding").empty());
  CHECK(page.body.rfind("<!doctype html>", 0) == 0);
  CHECK(page.body.find("<title>Welcome home · Test Site</title>") != std::string::npos);
  // Links: resolved by path, case-insensitively, with alias text; dead ones visibly dead.
  CHECK(page.body.find("href=\"/second-note\"") != std::string::npos);
  CHECK(page.body.find("href=\"/folder/deep\"") != std::string::npos);
  CHECK(page.body.find(">the deep note</a>") != std::string::npos);
  CHECK(page.body.find("href=\"/second-note#details\"") != std::string::npos);
  CHECK(page.body.find("link-dead") != std::string::npos);
  CHECK(page.body.find("rel=\"noopener\"") != std::string::npos);
  // The stylesheet is a separate, immutable asset.
  auto css_at = page.body.find("/assets/folio.");
  REQUIRE(css_at != std::string::npos);
  std::string css_url = page.body.substr(css_at, page.body.find('"', css_at) - css_at);
  auto css = c.EdgeGet(css_url);
  CHECK(css.status == 200);
  CHECK(css.Header("Content-Type") == "text/css; charset=utf-8");
  CHECK(css.Header("Cache-Control").find("immutable") != std::string::npos);
  CHECK(page.body.find("<style") == std::string::npos);

  // Backlinks: Second note is linked from Welcome.
  auto second = c.WaitForPage("/second-note", 200);
  CHECK(second.body.find("Backlinks") != std::string::npos);
  CHECK(second.body.find("href=\"/welcome\"") != std::string::npos);

  // Unicode URL stays readable (percent-encoded on the wire).
  // Lower-cased like ASCII names ("/unicode/заметка"); the written case redirects there.
  auto uni = c.WaitForPage("/unicode/%D0%B7%D0%B0%D0%BC%D0%B5%D1%82%D0%BA%D0%B0", 200, "Заметка");
  CHECK(uni.status == 200);
  CHECK(c.EdgeGet("/unicode/%D0%97%D0%B0%D0%BC%D0%B5%D1%82%D0%BA%D0%B0").status == 301);

  // Table, tasks, strikethrough, code language class.
  auto deep = c.WaitForPage("/folder/deep", 200);
  CHECK(deep.body.find("<table>") != std::string::npos);
  CHECK(deep.body.find("type=\"checkbox\"") != std::string::npos);
  CHECK(deep.body.find("<del>struck</del>") != std::string::npos);
  CHECK(deep.body.find("language-js") != std::string::npos);
  CHECK(deep.body.find("href=\"/welcome\"") != std::string::npos);

  // No script from the note reaches a reader.
  auto xss = c.WaitForPage("/xss", 200);
  // Only folio's own: the site script in <head> and the theme snippet, body's first child.
  const size_t theme = xss.body.find("<script>(function(){var t,d=document.documentElement;", xss.body.find("</head>"));
  CHECK(theme == xss.body.find("<body") + xss.body.substr(xss.body.find("<body")).find('>') + 1);
  CHECK(xss.body.find("<script", theme + 1) == std::string::npos);
  CHECK(xss.body.find("onerror=") == std::string::npos);
  CHECK(xss.body.find("href=\"javascript:") == std::string::npos);
  CHECK(xss.body.find("<b>bold ok</b>") != std::string::npos);

  // Skipped folders are not published.
  CHECK(c.EdgeGet("/.obsidian/hidden").status == 404);
  CHECK(c.EdgeGet("/.trash/old").status == 404);

  // Generated home page lists the notes.
  auto home = c.WaitForPage("/", 200, "Welcome home");
  CHECK(home.body.find("href=\"/folder/deep\"") != std::string::npos);

  // A second push of the same vault changes nothing: the version stays.
  int64_t version = JsonInt(c.Manifest().body, "version");
  CHECK(version >= 1);
  rc = c.RunCli({"push", FixtureVault(), "--server", c.ingest_url(), "--token", kToken}, &out);
  CHECK(rc == 0);
  CHECK(JsonInt(c.Manifest().body, "version") == version);

  // --dry-run sends nothing; a wrong token fails with a non-zero exit.
  rc = c.RunCli({"push", FixtureVault(), "--server", c.ingest_url(), "--token", "wrong"}, &out);
  CHECK(rc != 0);
  CHECK(out.find("token") != std::string::npos);
}

TEST_CASE("edge: gzip when accepted, 304, HEAD, 404 page, 405") {
  Cluster c;
  auto r = c.Push(PushBody({{"Page.md", "# Page\n\nHello reader, this is a page with some text in it.\n"}}));
  REQUIRE(r.status == 200);
  auto plain = c.WaitForPage("/page", 200, "Hello reader");
  REQUIRE(plain.status == 200);

  auto gz = c.EdgeGet("/page", {{"Accept-Encoding", "gzip, deflate"}});
  REQUIRE(gz.status == 200);
  CHECK(gz.Header("Content-Encoding") == "gzip");
  CHECK(gz.Header("Vary") == "Accept-Encoding");
  std::string inflated;
  REQUIRE(GzipDecompress(gz.body, &inflated).ok());
  CHECK(inflated == plain.body);
  CHECK(gz.Header("ETag") != plain.Header("ETag"));

  auto not_modified = c.EdgeGet("/page", {{"If-None-Match", plain.Header("ETag")}});
  CHECK(not_modified.status == 304);
  CHECK(not_modified.body.empty());
  CHECK(not_modified.Header("ETag") == plain.Header("ETag"));
  auto gz304 = c.EdgeGet("/page", {{"If-None-Match", gz.Header("ETag")}, {"Accept-Encoding", "gzip"}});
  CHECK(gz304.status == 304);
  CHECK(c.EdgeGet("/page", {{"If-None-Match", "\"other\""}}).status == 200);

  auto head = c.EdgeGet("/page", {}, "HEAD");
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK(head.Header("Content-Length") == std::to_string(plain.body.size()));

  auto missing = c.EdgeGet("/no/such/page");
  CHECK(missing.status == 404);
  CHECK(missing.Header("Content-Type") == "text/html; charset=utf-8");
  CHECK(missing.body.find("Page not found") != std::string::npos);
  CHECK(missing.body.find("Test Site") != std::string::npos);  // the site's own 404 page

  auto post = c.EdgeGet("/page", {}, "POST");
  CHECK(post.status == 405);
  CHECK(post.Header("Allow").find("GET") != std::string::npos);

  auto ready = c.EdgeGet("/readyz");
  CHECK(ready.status == 200);
  auto metrics = c.EdgeGet("/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("folio_edge_requests_total") != std::string::npos);
  auto im = http::Get(c.ingest_url() + "/metrics");
  REQUIRE(im.ok());
  CHECK(im->body.find("folio_ingest_pushes_total") != std::string::npos);
}

TEST_CASE("edge: the identity answer is the gzip body inflated per request; only the gzip body is counted held") {
  Cluster c;
  std::string note = "# Long\n\n";
  for (int i = 0; i < 6000; ++i) note += "Paragraph " + std::to_string(i) + " of a long note, read without gzip.\n\n";
  auto r = c.Push(PushBody({{"Long.md", note}}));
  REQUIRE(r.status == 200);
  auto plain = c.WaitForPage("/long", 200, "Paragraph 5999 of");
  REQUIRE(plain.status == 200);
  CHECK(plain.Header("Content-Encoding").empty());
  CHECK(plain.Header("Content-Length") == std::to_string(plain.body.size()));
  REQUIRE(plain.body.size() > 300000);

  auto gz = c.EdgeGet("/long", {{"Accept-Encoding", "gzip"}});
  REQUIRE(gz.status == 200);
  CHECK(gz.Header("Content-Encoding") == "gzip");
  std::string inflated;
  REQUIRE(GzipDecompress(gz.body, &inflated).ok());
  CHECK(inflated == plain.body);
  CHECK(gz.body.size() * 5 < plain.body.size());

  // Each identity answer inflates anew; they are all the same bytes.
  for (int i = 0; i < 5; ++i) {
    auto again = c.EdgeGet("/long");
    CHECK(again.body == plain.body);
    CHECK(again.Header("ETag") == plain.Header("ETag"));
  }
  auto head = c.EdgeGet("/long", {}, "HEAD");
  CHECK(head.body.empty());
  CHECK(head.Header("Content-Length") == std::to_string(plain.body.size()));
  auto gz_head = c.EdgeGet("/long", {{"Accept-Encoding", "gzip"}}, "HEAD");
  CHECK(gz_head.body.empty());
  CHECK(gz_head.Header("Content-Encoding") == "gzip");
  CHECK(gz_head.Header("Content-Length") == std::to_string(gz.body.size()));
  auto not_modified = c.EdgeGet("/long", {{"If-None-Match", plain.Header("ETag")}});
  CHECK(not_modified.status == 304);
  CHECK(not_modified.body.empty());

  // folio_edge_page_bytes sums the gzip bodies of every page held, so it is
  // far below this one page's identity size (it counted both before).
  auto metrics = c.EdgeGet("/metrics");
  REQUIRE(metrics.status == 200);
  const size_t at = metrics.body.find("\nfolio_edge_page_bytes ");
  REQUIRE(at != std::string::npos);
  const double held = std::stod(metrics.body.substr(at + sizeof("\nfolio_edge_page_bytes ") - 1));
  CAPTURE(held);
  CHECK(held >= static_cast<double>(gz.body.size()));
  CHECK(held < static_cast<double>(plain.body.size()));
}

TEST_CASE("a note pushed again unchanged is reported with the warnings it has, across an ingest restart") {
  Cluster c;
  const std::string note = "# C\n\nSee [[Nowhere]].\n";
  auto r1 = c.Push(PushBody({{"C.md", note}, {"D.md", "# D\n"}}));
  REQUIRE(r1.status == 200);
  CHECK(r1.body.find("dangling link [[Nowhere]]") != std::string::npos);
  // Unchanged: not rendered, its row not rewritten; the warning is still reported.
  auto r2 = c.Push(PushBody({{"C.md", note}, {"D.md", "# D\n"}}));
  CHECK(JsonInt(r2.body, "changed") == 0);
  CHECK(r2.body.find("dangling link [[Nowhere]]") != std::string::npos);
  CHECK(r2.body.find("{\"path\":\"D.md\",\"url\":\"/d\",\"warnings\":[]}") != std::string::npos);
  c.StopIngest();
  c.StartIngest();
  auto r3 = c.Push(PushBody({{"C.md", note}}));
  REQUIRE(r3.status == 200);
  CHECK(JsonInt(r3.body, "changed") == 0);
  CHECK(r3.body.find("dangling link [[Nowhere]]") != std::string::npos);
  // Fixed: the warning goes, and stays gone when pushed unchanged again.
  auto r4 = c.Push(PushBody({{"C.md", "# C\n\nSee [[D]].\n"}}));
  CHECK(r4.body.find("dangling") == std::string::npos);
  auto r5 = c.Push(PushBody({{"C.md", "# C\n\nSee [[D]].\n"}}));
  CHECK(JsonInt(r5.body, "changed") == 0);
  CHECK(r5.body.find("{\"path\":\"C.md\",\"url\":\"/c\",\"warnings\":[]}") != std::string::npos);
}

TEST_CASE("updates and deletions reach the edge without restart; unchanged notes are not re-rendered") {
  Cluster c;
  auto r1 = c.Push(PushBody({{"A.md", "# A\n\nRevision 1. See [[B]].\n"}, {"B.md", "# B\n\nBee.\n"},
                             {"C.md", "# C\n\nSee.\n"}}));
  REQUIRE(r1.status == 200);
  CHECK(JsonInt(r1.body, "received") == 3);
  CHECK(JsonInt(r1.body, "changed") == 3);
  CHECK(JsonInt(r1.body, "rendered") == 3);
  int64_t v1 = JsonInt(r1.body, "version");
  CHECK(r1.body.find("\"url\":\"/a\"") != std::string::npos);
  c.WaitForPage("/a", 200, "Revision 1");
  auto b_page = c.WaitForPage("/b", 200, "href=\"/a\"");  // backlink from A
  CHECK(b_page.body.find("href=\"/a\"") != std::string::npos);
  // A's link to B, pushed with it, resolved on A's one parse (markdown/deferred.h).
  CHECK(c.WaitForPage("/a", 200, "href=\"/b\"").body.find("href=\"/b\"") != std::string::npos);
  CHECK(IngestMetric(c, kParsedTwice) == 0);

  // Same content again: nothing changes, nothing renders, version stays.
  auto same = c.Push(PushBody({{"A.md", "# A\n\nRevision 1. See [[B]].\n"}, {"C.md", "# C\n\nSee.\n"}}));
  CHECK(JsonInt(same.body, "changed") == 0);
  CHECK(JsonInt(same.body, "rendered") == 0);
  CHECK(JsonInt(same.body, "version") == v1);

  // A content change keeping the same links renders exactly that note.
  auto r2 = c.Push(PushBody({{"A.md", "# A\n\nRevision 2. See [[B]].\n"}}));
  CHECK(JsonInt(r2.body, "changed") == 1);
  CHECK(JsonInt(r2.body, "rendered") == 1);
  CHECK(JsonInt(r2.body, "version") == v1 + 1);
  CHECK(c.WaitForPage("/a", 200, "Revision 2").body.find("Revision 2") != std::string::npos);

  // A dangling link reported as a warning, resolved once the target exists.
  auto r3 = c.Push(PushBody({{"C.md", "# C\n\nSee [[Later]].\n"}}));
  CHECK(r3.body.find("dangling link [[Later]]") != std::string::npos);
  CHECK(IngestMetric(c, kParsedTwice) == 1);  // a dead link is rendered anew, as a dead span
  CHECK(c.WaitForPage("/c", 200, "link-dead").body.find("Missing note: Later") != std::string::npos);
  auto r4 = c.Push(PushBody({{"Later.md", "# Later\n"}}));
  CHECK(JsonInt(r4.body, "rendered") == 2);  // Later itself + C whose link now resolves
  // C was re-rendered without being pushed: reported with its (now empty) warnings.
  CHECK(r4.body.find("{\"path\":\"C.md\",\"url\":\"/c\",\"rerendered\":true,\"warnings\":[]}") != std::string::npos);
  CHECK(c.WaitForPage("/c", 200, "href=\"/later\"").body.find("href=\"/later\"") != std::string::npos);

  // Deletion: the page answers 410 Gone, the linking note shows a dead link.
  auto r5 = c.Push(PushBody({}, {"B.md"}));
  CHECK(JsonInt(r5.body, "deleted") == 1);
  auto gone = c.WaitForPage("/b", 410);
  CHECK(gone.status == 410);
  CHECK(gone.body.find("Page removed") != std::string::npos);
  CHECK(gone.body.find("<meta name=\"robots\" content=\"noindex\">") != std::string::npos);
  CHECK(c.WaitForPage("/a", 200, "link-dead").body.find("link-dead") != std::string::npos);

  // The manifest matches.
  auto m = c.Manifest();
  REQUIRE(m.status == 200);
  CHECK(m.body.find("\"path\":\"A.md\"") != std::string::npos);
  CHECK(m.body.find("\"path\":\"B.md\"") == std::string::npos);
  CHECK(m.body.find("\"sha256\":\"") != std::string::npos);
}

TEST_CASE("CLI: batches bounded by --batch-notes; a link resolved by a later batch is not reported dangling") {
  Cluster c;
  testing::TempDir vault;
  auto write = [&](const std::string& rel, const std::string& text) {
    std::string path = vault.path() + "/" + rel;
    FILE* f = fopen(path.c_str(), "w");
    REQUIRE(f);
    fputs(text.c_str(), f);
    fclose(f);
  };
  write("A.md", "# A\n\nLinks to [[Z]].\n");
  write("M.md", "# M\n");
  write("Z.md", "# Z\n");
  std::string out;
  int rc = c.RunCli({"push", vault.path(), "--server", c.ingest_url(), "--token", kToken, "--batch-notes", "1"}, &out);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("dangling") == std::string::npos);
  CHECK(JsonInt(c.Manifest().body, "version") == 1);  // three batches, staged: one commit, one version
  CHECK(c.WaitForPage("/a", 200, "href=\"/z\"").body.find("href=\"/z\"") != std::string::npos);

  // Deleting a file locally deletes the note on the next push.
  std::remove((vault.path() + "/M.md").c_str());
  rc = c.RunCli({"push", vault.path(), "--server", c.ingest_url(), "--token", kToken}, &out);
  CHECK(rc == 0);
  CHECK(c.WaitForPage("/m", 410).status == 410);
  // --dry-run sends nothing.
  write("New.md", "# New\n");
  rc = c.RunCli({"push", vault.path(), "--server", c.ingest_url(), "--token", kToken, "--dry-run"}, &out);
  CHECK(rc == 0);
  CHECK(out.find("New.md") != std::string::npos);
  CHECK(c.Manifest().body.find("New.md") == std::string::npos);
}

// Issue 13 (authors): a mistaken folder must not wipe a site. A push that
// would delete many notes says how many and stops until --yes; --no-delete
// only sends; the dry run names the count plainly.
TEST_CASE("CLI: deleting many notes needs --yes; --no-delete only sends; the dry run counts deletions") {
  Cluster c;
  testing::TempDir vault;
  auto write = [&](const std::string& rel, const std::string& text) {
    FILE* f = fopen((vault.path() + "/" + rel).c_str(), "w");
    REQUIRE(f);
    fputs(text.c_str(), f);
    fclose(f);
  };
  for (int i = 0; i < 30; ++i) write("n" + std::to_string(i) + ".md", "# N" + std::to_string(i) + "\n");
  std::string out;
  auto push = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"push", vault.path(), "--server", c.ingest_url(), "--token", kToken};
    args.insert(args.end(), extra.begin(), extra.end());
    return c.RunCli(args, &out);
  };
  REQUIRE(push({}) == 0);
  // 25 of 30 notes gone locally (an author pointed at the wrong folder, say).
  for (int i = 0; i < 25; ++i) std::remove((vault.path() + "/n" + std::to_string(i) + ".md").c_str());
  write("fresh.md", "# Fresh\n");
  CHECK(push({"--dry-run"}) == 0);
  CHECK(out.find("this push would DELETE 25 notes from the server") != std::string::npos);
  CHECK(push({}) != 0);
  INFO(out);
  CHECK(out.find("this push would delete 25 of the server's 30 notes") != std::string::npos);
  CHECK(out.find("--yes") != std::string::npos);
  CHECK(c.Manifest().body.find("fresh.md") == std::string::npos);  // nothing was sent
  CHECK(c.EdgeGet("/n0").status == 200);
  // --no-delete sends the new note and deletes nothing.
  CHECK(push({"--no-delete"}) == 0);
  CHECK(c.WaitForPage("/fresh", 200).status == 200);
  CHECK(c.EdgeGet("/n0").status == 200);
  // --yes goes ahead.
  CHECK(push({"--yes"}) == 0);
  CHECK(c.WaitForPage("/n0", 410).status == 410);
  CHECK(c.EdgeGet("/n29").status == 200);
}

TEST_CASE("CLI: the attachment limit comes from the server's manifest; a larger flag is lowered to it") {
  Cluster c;  // ingest without storage: attachments up to 1008 KiB
  testing::TempDir vault;
  auto write = [&](const std::string& rel, const std::string& text) {
    FILE* f = fopen((vault.path() + "/" + rel).c_str(), "w");
    REQUIRE(f);
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
  };
  CHECK(c.Manifest().body.find("\"limits\":{\"max_note_bytes\":4194304,\"max_attachment_bytes\":1032192}") !=
        std::string::npos);
  write("Note.md", "# Note\n\n![[small.png]] and ![[big.pdf]]\n");
  write("small.png", std::string("\x89PNG\r\n\x1a\n") + std::string(5000, 'p'));
  write("big.pdf", "%PDF-1.4\n" + std::string(1500 * 1024, 'b'));
  std::string out;
  // No flag: the server's 1008 KiB; big.pdf is left out (exit 3), the rest published.
  int rc = c.RunCli({"push", vault.path(), "--server", c.ingest_url(), "--token", kToken}, &out);
  INFO(out);
  CHECK(rc == 3);
  CHECK(out.find("big.pdf: 1.5 MiB is over the 1008 KiB attachment limit; not sent") != std::string::npos);
  CHECK(c.WaitForPage("/note", 200, "small.png").status == 200);
  CHECK(c.Manifest().body.find("small.png") != std::string::npos);
  CHECK(c.Manifest().body.find("\"path\":\"big.pdf\"") == std::string::npos);
  // A flag over the server's limit would get the push refused: lowered, with a warning.
  rc = c.RunCli({"push", vault.path(), "--server", c.ingest_url(), "--token", kToken, "--max-attachment-bytes",
                 "64MiB"},
                &out);
  INFO(out);
  CHECK(rc == 3);
  CHECK(out.find("--max-attachment-bytes 64 MiB is over the server's limit of 1008 KiB; using the server's") !=
        std::string::npos);
  // A flag under it still applies.
  rc = c.RunCli({"push", vault.path(), "--server", c.ingest_url(), "--token", kToken, "--max-attachment-bytes", "1KiB"},
                &out);
  CHECK(rc == 3);
  CHECK(out.find("small.png: 4.9 KiB is over the 1 KiB attachment limit") != std::string::npos);
}

TEST_CASE("note events: a push of 100 notes is 2 messages on notes.<site>, one changed note 1 more") {
  Cluster c;
  // The stream's message count from the server's monitoring endpoint.
  auto notes_messages = [&c]() -> long {
    std::string jsz = c.nats().Monitor("/jsz?accounts=true&streams=true");
    size_t at = jsz.find("\"notes\"");
    if (at == std::string::npos) return -1;
    at = jsz.find("\"messages\":", at);
    if (at == std::string::npos) return -1;
    return std::stol(jsz.substr(jsz.find_first_of("0123456789", at)));
  };
  JsonWriter w;
  w.BeginObject().Key("notes").BeginArray();
  for (int i = 0; i < 100; ++i) {
    w.BeginObject().Key("path").String("n" + std::to_string(i) + ".md").Key("content").String("# N\n\nbody").EndObject();
  }
  w.EndArray().EndObject();
  auto r = c.Push(w.Take());
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(notes_messages() == 2);  // 64 + 36 events
  r = c.Push(R"({"notes":[{"path":"n7.md","content":"# N\n\nchanged"}]})");
  REQUIRE(r.status == 200);
  CHECK(notes_messages() == 3);
}
