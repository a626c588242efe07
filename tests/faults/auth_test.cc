// The auth matrix of every service (issue 9), against real processes:
// nats-server, folio-storage, folio-ingest (two sites), folio-edge and
// folio-search. Each endpoint is called with no token, a wrong token,
// another site's or another service's token, another scheme, storage's read
// token where only the write token may act, and "bearer" in lower case;
// every row states the status it must get, and the state is checked after
// the refusals (nothing written, nothing deleted). Table-driven: a failing
// row prints itself.
//
//   storage  every route needs a token; the read token GETs and HEADs blobs
//            only (401 + WWW-Authenticate: Bearer, or 403); probes are open
//   ingest   push and manifest need a site's token; a site's token reaches
//            that site only
//   search   its HTTP API is public by design (it answers without a token)
//            and knows only published notes; it has no write endpoint and
//            refuses any request body (413) before reading it
//   edge     public pages; no write endpoint at all (405), whatever token
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../integration/cluster.h"
#include "../integration/test_util.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/http/client.h"

using namespace folio;
using namespace folio::it;

namespace {

// One caller: a name for the report and the Authorization header it sends.
struct Who {
  std::string name;
  std::string authorization;  // "" = no header
};

struct Row {
  std::string service;  // for the report
  std::string base;     // service URL
  std::string method, path;
  Who who;
  int want;
  std::string body = "";
  std::vector<std::pair<std::string, std::string>> headers = {};
};

http::ClientResponse Call(const Row& row) {
  http::ClientRequest req;
  req.method = row.method;
  req.url = row.base + row.path;
  req.body = row.body;
  req.headers = row.headers;
  if (!row.who.authorization.empty()) req.headers.emplace_back("Authorization", row.who.authorization);
  auto r = http::Fetch(req);
  return r.ok() ? *r : http::ClientResponse{};
}

std::string Describe(const Row& row, const http::ClientResponse& r) {
  return row.service + " " + row.method + " " + row.path + " as " + row.who.name + ": want " +
         std::to_string(row.want) + ", got " + std::to_string(r.status) + " " + r.body.substr(0, 200);
}

// Runs every row; a 401 must ask for a bearer token when `www_authenticate`
// (storage), and every 401/403 (but to HEAD) must carry the JSON error code.
void RunTable(const std::vector<Row>& rows, bool www_authenticate) {
  for (const Row& row : rows) {
    http::ClientResponse r = Call(row);
    const std::string what = Describe(row, r);
    CHECK_MESSAGE(r.status == row.want, what);
    const bool has_body = row.method != "HEAD";
    if (r.status == 401) {
      if (has_body) CHECK_MESSAGE(r.body.find("\"unauthenticated\"") != std::string::npos, what);
      if (www_authenticate) CHECK_MESSAGE(r.Header("WWW-Authenticate") == "Bearer", what);
    }
    if (r.status == 403 && has_body) {
      CHECK_MESSAGE(r.body.find("\"permission_denied\"") != std::string::npos, what);
    }
  }
}

std::string Base64(std::string_view bytes) {
  std::string b64 = Base64UrlEncode(bytes);
  for (char& ch : b64) ch = ch == '-' ? '+' : ch == '_' ? '/' : ch;
  return b64;
}

// A push of one note, and optionally one attachment it embeds.
std::string NotePush(const std::string& path, const std::string& content, const std::string& att_path = "",
                     const std::string& att_bytes = "") {
  JsonWriter w;
  w.BeginObject().Key("notes").BeginArray();
  w.BeginObject().Key("path").String(path).Key("content").String(content).EndObject();
  w.EndArray();
  if (!att_path.empty()) {
    w.Key("attachments").BeginArray();
    w.BeginObject().Key("path").String(att_path).Key("data").String(Base64(att_bytes)).EndObject();
    w.EndArray();
  }
  w.EndObject();
  return w.Take();
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

TEST_CASE("auth matrix: every endpoint of storage, ingest, search and edge") {
  Cluster c({}, /*start_services=*/false);
  std::string out, err;
  REQUIRE(c.RunIngest({"site", "add", "other", "--host", "other.example"}, &out, &err) == 0);
  const std::string other_token = FirstLine(out);
  REQUIRE(other_token.size() == 64);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.StartIngest();
  c.StartEdge();
  c.StartSearch();
  INFO(c.Logs());

  // The default site: a published note with an attachment, and a draft.
  const std::string pic = "\x89PNG\r\n\x1a\n picture for the auth matrix";
  REQUIRE(c.Push(NotePush("pub.md", "# Pub\n\nzebrafish live here ![[pic.png]]\n", "pic.png", pic)).status == 200);
  REQUIRE(c.Push(NotePush("secret.md", "---\ndraft: true\n---\n# Secret\n\nokapisecret plans\n")).status == 200);
  const auto page = c.WaitForPage("/pub", 200, "zebrafish");
  REQUIRE(page.status == 200);
  const std::string pic_sha = Sha256Hex(pic);
  const std::string pic_url = "/assets/" + pic_sha.substr(0, 16) + "/pic.png";
  REQUIRE(page.body.find(pic_url) != std::string::npos);

  const std::string write = c.storage_write_token(), read = c.storage_read_token();
  const Who none{"no token", ""}, wrong{"a wrong token", "Bearer not-a-token"},
      ingest_token{"ingest's API token", std::string("Bearer ") + kToken},
      basic{"Basic with the write token", "Basic " + Base64("x:" + write)},
      read_who{"storage's read token", "Bearer " + read}, read_lower{"read token, lower-case bearer", "bearer " + read},
      write_who{"storage's write token", "Bearer " + write},
      write_lower{"write token, lower-case BEARER", "bEARER " + write},
      site_token{"the default site's token", std::string("Bearer ") + kToken},
      site_lower{"the default site's token, lower-case bearer", std::string("bearer ") + kToken},
      other_site{"the other site's token", "Bearer " + other_token},
      storage_token{"storage's write token", "Bearer " + write};

  SUBCASE("storage: every route, both roles") {
    const std::string s = c.storage_url();
    // Blobs and objects the rows act on.
    const std::string x = "x: refused, then stored", y = "y: stored with lower-case bearer";
    const std::string d1 = "d1: to delete", d2 = "d2: to delete";
    for (const std::string& b : {d1, d2}) REQUIRE(c.StorageDo("PUT", "/blobs/sha256/" + Sha256Hex(b), b).status == 201);
    for (const char* o : {"/objects/matrix/o1", "/objects/matrix/o2"}) {
      REQUIRE(c.StorageDo("PUT", o, "object").status == 201);
    }
    struct Route {
      std::string method, path, body;
      bool read_ok;  // the read token may call it
      int ok;        // its status for a caller who may
    };
    const std::vector<Route> routes{
        {"GET", "/blobs/sha256/" + pic_sha, "", true, 200},
        {"HEAD", "/blobs/sha256/" + pic_sha, "", true, 200},
        {"GET", "/blobs/sha256/" + pic_sha.substr(0, 16), "", true, 200},
        {"GET", "/nope", "", true, 404},
        {"PUT", "/blobs/sha256/" + Sha256Hex(x), x, false, 201},
        {"DELETE", "/blobs/sha256/" + Sha256Hex(d1), "", false, 204},
        {"GET", "/blobs", "", false, 200},
        {"GET", "/blobs?prefix=" + pic_sha.substr(0, 16) + "&limit=1", "", false, 200},
        {"PUT", "/objects/backups/ingest/planted.db", "planted", false, 201},
        {"GET", "/objects/matrix/o1", "", false, 200},
        {"HEAD", "/objects/matrix/o1", "", false, 200},
        {"DELETE", "/objects/matrix/o2", "", false, 204},
        {"GET", "/objects", "", false, 200},
        {"GET", "/objects?prefix=backups/", "", false, 200},
    };
    std::vector<Row> refused;
    for (const Who& who : {none, wrong, ingest_token, basic, read_who, read_lower}) {
      const bool is_read = who.name == read_who.name || who.name == read_lower.name;
      for (const Route& r : routes) {
        refused.push_back({"storage", s, r.method, r.path, who, is_read ? (r.read_ok ? r.ok : 403) : 401, r.body, {}});
      }
    }
    for (const char* probe : {"/livez", "/readyz", "/metrics"}) {
      refused.push_back({"storage", s, "GET", probe, none, 200});
    }
    RunTable(refused, true);
    // Nothing the refused calls tried happened.
    CHECK(c.StorageDo("HEAD", "/blobs/sha256/" + Sha256Hex(x)).status == 404);
    CHECK(c.StorageDo("HEAD", "/blobs/sha256/" + Sha256Hex(d1)).status == 200);
    CHECK(c.StorageDo("HEAD", "/objects/backups/ingest/planted.db").status == 404);
    CHECK(c.StorageDo("HEAD", "/objects/matrix/o2").status == 200);
    // The write token may do everything, in any case of "Bearer".
    std::vector<Row> allowed;
    for (const Route& r : routes) allowed.push_back({"storage", s, r.method, r.path, write_who, r.ok, r.body, {}});
    allowed.push_back({"storage", s, "PUT", "/blobs/sha256/" + Sha256Hex(y), write_lower, 201, y, {}});
    allowed.push_back({"storage", s, "DELETE", "/blobs/sha256/" + Sha256Hex(d2), write_lower, 204, "", {}});
    allowed.push_back({"storage", s, "GET", "/objects", write_lower, 200, "", {}});
    RunTable(allowed, true);
    CHECK(c.StorageDo("GET", "/blobs/sha256/" + Sha256Hex(x)).body == x);
    CHECK(c.StorageDo("HEAD", "/blobs/sha256/" + Sha256Hex(d2)).status == 404);
  }

  SUBCASE("ingest: a site's token, for that site only") {
    const std::string i = c.ingest_url();
    std::vector<Row> rows;
    // Refused: each tries to write a note named after it.
    int n = 0;
    for (const Who& who : {none, wrong, storage_token, basic, Who{"the token without a scheme", kToken}}) {
      const std::string note = "refused-" + std::to_string(n++) + ".md";
      rows.push_back({"ingest", i, "POST", "/api/v1/push", who, 401, NotePush(note, "# Refused\n"),
                      {{"Content-Type", "application/json"}}});
      rows.push_back({"ingest", i, "GET", "/api/v1/manifest", who, 401});
    }
    rows.push_back({"ingest", i, "POST", "/api/v1/push", site_lower, 200, NotePush("lower.md", "# Lower\n"),
                    {{"Content-Type", "application/json"}}});
    rows.push_back({"ingest", i, "GET", "/api/v1/manifest", site_lower, 200});
    rows.push_back({"ingest", i, "POST", "/api/v1/push", other_site, 200,
                    NotePush("other-only.md", "# Other only\n\nwritten with the other site's token\n"),
                    {{"Content-Type", "application/json"}}});
    rows.push_back({"ingest", i, "GET", "/api/v1/manifest", other_site, 200});
    for (const char* probe : {"/livez", "/readyz", "/metrics"}) rows.push_back({"ingest", i, "GET", probe, none, 200});
    rows.push_back({"ingest", i, "GET", "/api/v1/push", site_token, 405});
    RunTable(rows, false);
    // The refused pushes wrote nothing; the other site's token wrote its own site only.
    const std::string mine = c.Manifest().body, theirs = c.Manifest(other_token).body;
    CHECK(mine.find("lower.md") != std::string::npos);
    CHECK(mine.find("pub.md") != std::string::npos);
    CHECK(mine.find("other-only.md") == std::string::npos);
    CHECK(theirs.find("other-only.md") != std::string::npos);
    CHECK(theirs.find("pub.md") == std::string::npos);
    CHECK(theirs.find("secret.md") == std::string::npos);
    for (const std::string& m : {mine, theirs}) CHECK(m.find("refused-") == std::string::npos);
    CHECK(c.WaitForPageAt("other.example", "/other-only", 200, "written with the other").status == 200);
    CHECK(c.EdgeGet("/other-only").status == 404);
  }

  SUBCASE("search: public, published notes only, read-only") {
    const std::string q = c.search_url();
    const std::string found = "/api/v1/search?site=default&mode=text&q=zebrafish";
    REQUIRE(Eventually([&] {
      auto r = http::Get(q + found);
      return r.ok() && r->status == 200 && r->body.find("pub.md") != std::string::npos;
    }, 30000));
    std::vector<Row> rows;
    for (const Who& who : {none, wrong, site_token}) {
      rows.push_back({"search", q, "GET", found, who, 200});
      rows.push_back({"search", q, "GET", "/api/v1/search?site=default&mode=text&q=okapisecret", who, 200});
    }
    for (const char* m : {"POST", "PUT", "DELETE"}) {
      rows.push_back({"search", q, m, "/api/v1/search", site_token, 405});
      rows.push_back({"search", q, m, "/api/v1/related", site_token, 405});
      // Search reads no request body at all: one is refused before any handler (issue 22).
      rows.push_back({"search", q, m, "/api/v1/search", site_token, 413, "{}"});
    }
    for (const char* probe : {"/livez", "/readyz", "/metrics"}) rows.push_back({"search", q, "GET", probe, none, 200});
    RunTable(rows, false);
    // A draft is never indexed: not found by its words, and asked for by its
    // path it is answered exactly as a note that never existed.
    for (const std::string& path : {std::string("/api/v1/search?site=default&mode=text&q=okapisecret"),
                                    std::string("/api/v1/search?site=default&mode=hybrid&q=okapisecret+plans")}) {
      auto r = http::Get(q + path);
      REQUIRE(r.ok());
      CHECK_MESSAGE(r->status == 200, path);
      CHECK_MESSAGE(r->body.find("secret.md") == std::string::npos, (path + ": " + r->body));
      CHECK_MESSAGE(r->body.find("okapisecret plans") == std::string::npos, (path + ": " + r->body));
    }
    auto related = http::Get(q + "/api/v1/related?site=default&path=secret.md");
    auto never = http::Get(q + "/api/v1/related?site=default&path=never.md");
    REQUIRE(related.ok());
    REQUIRE(never.ok());
    CHECK(related->status == 404);
    CHECK(never->status == 404);
    std::string as_never = never->body;
    as_never.replace(as_never.find("never.md"), 8, "secret.md");
    CHECK(related->body == as_never);
  }

  SUBCASE("edge: public pages, no write endpoint") {
    const std::string e = c.edge_url();
    auto asset = c.EdgeGet(pic_url);
    REQUIRE(asset.status == 200);  // fetched from storage with the read token
    CHECK(asset.body == pic);
    std::vector<Row> rows;
    for (const Who& who : {none, site_token, write_who}) {
      for (const char* m : {"POST", "PUT", "DELETE", "PATCH"}) {
        for (const std::string& path : {std::string("/"), std::string("/pub"), pic_url, std::string("/_/search"),
                                        std::string("/api/v1/push"), std::string("/blobs/sha256/") + pic_sha}) {
          rows.push_back({"edge", e, m, path, who, 405});
        }
      }
      // The edge reads no request body at all: one is refused before any handler.
      rows.push_back({"edge", e, "POST", "/api/v1/push", who, 413, NotePush("edge.md", "# Via the edge\n")});
      rows.push_back({"edge", e, "PUT", "/blobs/sha256/" + pic_sha, who, 413, "other bytes"});
    }
    rows.push_back({"edge", e, "GET", "/pub", none, 200});
    rows.push_back({"edge", e, "GET", "/secret", none, 404});
    rows.push_back({"edge", e, "GET", pic_url, none, 200});
    RunTable(rows, false);
    // Nothing changed.
    auto after = c.EdgeGet("/pub");
    CHECK(after.status == 200);
    CHECK(after.body == page.body);
    CHECK(c.EdgeGet(pic_url).body == pic);
    CHECK(c.StorageDo("GET", "/blobs/sha256/" + pic_sha).body == pic);
  }
}
