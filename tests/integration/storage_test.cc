// folio-storage as a real process on a real journal directory: the
// content-addressed blob API (hash verified while streaming, Range, ETag,
// 304, HEAD, DELETE, listing), named objects with retention, limits. Its
// tokens (issue 9): generated on the first start and kept as hashes only, or
// given by flag, environment or file; an upload refused for its token stores
// nothing; a body on a route that takes none is refused before it is read. The full route x token matrix is in tests/faults/auth_test.cc;
// crashes, damaged bytes and torn tails in tests/faults/storage_test.cc.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <thread>

#include "storage_process.h"
#include "test_util.h"

namespace folio::it {

TEST_CASE("storage: content-addressed blobs over HTTP") {
  Storage st;
  std::string big = RandomBytes((10 << 20) + 12345, 1);  // ~10 MiB: several journal blocks
  std::string hex = Sha256Hex(big);

  auto put = st.Put(big);
  REQUIRE(put.status == 201);
  CHECK(put.body.find(std::to_string(big.size())) != std::string::npos);
  // The same bytes again: already there, not read again.
  CHECK(st.Put(big).status == 200);

  auto get = st.Do("GET", "/blobs/sha256/" + hex);
  REQUIRE(get.status == 200);
  CHECK(get.body == big);
  CHECK(get.Header("Content-Type") == "image/png");
  CHECK(get.Header("ETag") == "\"" + hex + "\"");
  CHECK(get.Header("Cache-Control") == "public, max-age=31536000, immutable");
  CHECK(get.Header("Accept-Ranges") == "bytes");

  auto head = st.Do("HEAD", "/blobs/sha256/" + hex);
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK(head.Header("Content-Length") == std::to_string(big.size()));

  CHECK(st.Do("GET", "/blobs/sha256/" + hex, "", {{"If-None-Match", "\"" + hex + "\""}}).status == 304);
  // By a prefix of at least 16 digits (what an edge knows): the blob, its ETag naming it in full.
  auto by_prefix = st.Do("HEAD", "/blobs/sha256/" + hex.substr(0, 16));
  CHECK(by_prefix.status == 200);
  CHECK(by_prefix.Header("ETag") == "\"" + hex + "\"");
  CHECK(by_prefix.Header("Content-Length") == std::to_string(big.size()));
  CHECK(st.Do("GET", "/blobs/sha256/" + hex.substr(0, 40), "", {{"Range", "bytes=0-9"}}).body == big.substr(0, 10));
  CHECK(st.Do("GET", "/blobs/sha256/" + hex.substr(0, 15)).status == 400);  // a listing in disguise
  CHECK(st.Do("GET", "/blobs/sha256/" + std::string(16, hex[0] == 'f' ? '0' : 'f')).status == 404);

  auto part = st.Do("GET", "/blobs/sha256/" + hex, "", {{"Range", "bytes=1048570-1048600"}});
  CHECK(part.status == 206);
  CHECK(part.body == big.substr(1048570, 31));
  CHECK(part.Header("Content-Range") == "bytes 1048570-1048600/" + std::to_string(big.size()));
  auto tail = st.Do("GET", "/blobs/sha256/" + hex, "", {{"Range", "bytes=-100"}});
  CHECK(tail.status == 206);
  CHECK(tail.body == big.substr(big.size() - 100));
  auto unsat = st.Do("GET", "/blobs/sha256/" + hex, "", {{"Range", "bytes=99999999-"}});
  CHECK(unsat.status == 416);
  CHECK(unsat.Header("Content-Range") == "bytes */" + std::to_string(big.size()));

  SUBCASE("a body whose hash differs from the URL is refused and nothing is kept") {
    std::string other = RandomBytes(200000, 2);
    auto r = st.Do("PUT", "/blobs/sha256/" + Sha256Hex("something else"), other);
    CHECK(r.status == 400);
    CHECK(r.body.find("SHA-256") != std::string::npos);
    CHECK(st.Do("GET", "/blobs/sha256/" + Sha256Hex("something else")).status == 404);
    CHECK(st.Do("GET", "/blobs/sha256/" + Sha256Hex(other)).status == 404);
  }
  SUBCASE("bad names get a JSON 400") {
    auto r = st.Do("PUT", "/blobs/sha256/XYZ", "x");
    CHECK(r.status == 400);
    CHECK(r.body.find("\"error\"") != std::string::npos);
    CHECK(st.Do("GET", "/blobs/sha256/" + std::string(64, 'A')).status == 400);
    CHECK(st.Do("GET", "/blobs?limit=0").status == 400);
    CHECK(st.Do("PUT", "/objects/%2E%2E/etc/passwd", "x").status == 400);
  }
  SUBCASE("listing and delete") {
    std::string small = "hello";
    REQUIRE(st.Put(small, "text/plain").status == 201);
    auto list = st.Do("GET", "/blobs");
    REQUIRE(list.status == 200);
    CHECK(list.body.find(hex) != std::string::npos);
    CHECK(list.body.find(Sha256Hex(small)) != std::string::npos);
    auto prefixed = st.Do("GET", "/blobs?prefix=" + Sha256Hex(small).substr(0, 6));
    CHECK(prefixed.body.find(Sha256Hex(small)) != std::string::npos);
    CHECK(prefixed.body.find(hex) == std::string::npos);
    CHECK(st.Do("DELETE", "/blobs/sha256/" + Sha256Hex(small)).status == 204);
    CHECK(st.Do("GET", "/blobs/sha256/" + Sha256Hex(small)).status == 404);
    CHECK(st.Do("DELETE", "/blobs/sha256/" + Sha256Hex(small)).status == 404);
  }
  SUBCASE("named objects keep only the newest N of a folder") {
    for (int i = 0; i < 4; ++i) {
      auto r = st.Do("PUT", "/objects/backups/ingest-" + std::to_string(i) + ".db?keep=2", "backup " + std::to_string(i));
      REQUIRE(r.status == 201);
    }
    REQUIRE(st.Do("PUT", "/objects/other/x", "x").status == 201);
    bool pruned = false;
    for (int i = 0; i < 100 && !pruned; ++i) {
      pruned = st.Do("GET", "/objects/backups/ingest-1.db").status == 404;
      if (!pruned) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(pruned);
    CHECK(st.Do("GET", "/objects/backups/ingest-0.db").status == 404);
    CHECK(st.Do("GET", "/objects/backups/ingest-3.db").body == "backup 3");
    CHECK(st.Do("GET", "/objects/backups/ingest-2.db").body == "backup 2");
    CHECK(st.Do("GET", "/objects/other/x").body == "x");
    auto list = st.Do("GET", "/objects?prefix=backups/");
    CHECK(list.body.find("ingest-3.db") != std::string::npos);
    CHECK(list.body.find("other/x") == std::string::npos);
  }
}

TEST_CASE("storage: the blob size limit answers 413") {
  Storage st({"--max-blob", "1MiB"});
  std::string data = RandomBytes(2 << 20, 3);
  auto r = st.Put(data);
  CHECK(r.status == 413);
  CHECK(st.Do("GET", "/blobs/sha256/" + Sha256Hex(data)).status == 404);
  CHECK(st.Put(RandomBytes(1000, 4)).status == 201);  // the server still works
}

TEST_CASE("storage tokens: generated on the first start, kept as hashes only, the same after a restart") {
  Storage st({}, "", "");  // no token flags
  const std::string write_file = st.data() + "/write-token", read_file = st.data() + "/read-token";
  const std::string hashes_file = st.data() + "/token-hashes";
  const std::string write = FirstLine(ReadFile(write_file)), read = FirstLine(ReadFile(read_file));
  REQUIRE(write.size() == 48);
  REQUIRE(read.size() == 48);
  CHECK(write != read);
  CHECK(ModeOf(write_file) == 0600);
  CHECK(ModeOf(read_file) == 0600);
  CHECK(ModeOf(hashes_file) == 0600);
  const std::string hashes = ReadFile(hashes_file);
  CHECK(hashes == "write " + Sha256Hex(write) + "\nread " + Sha256Hex(read) + "\n");
  CHECK(hashes.find(write) == std::string::npos);
  CHECK(hashes.find(read) == std::string::npos);
  // One log line names the files.
  CHECK(st.Log().find("generated storage tokens") != std::string::npos);
  CHECK(st.Log().find(write_file) != std::string::npos);

  const std::string data = "generated-token blob";
  const std::string blob = "/blobs/sha256/" + Sha256Hex(data);
  st.UseToken("");
  CHECK(st.Do("PUT", blob, data).status == 401);
  st.UseToken(read);
  CHECK(st.Do("PUT", blob, data).status == 403);
  st.UseToken(write);
  REQUIRE(st.Do("PUT", blob, data).status == 201);

  // The operator hands the tokens out and deletes the files: a restart
  // reads the hashes, the same tokens keep working, nothing is regenerated.
  REQUIRE(unlink(write_file.c_str()) == 0);
  REQUIRE(unlink(read_file.c_str()) == 0);
  st.Stop();
  st.Start();
  CHECK(ReadFile(hashes_file) == hashes);
  CHECK(ModeOf(write_file) == 0);  // not written again
  st.UseToken(read);
  CHECK(st.Do("GET", blob).body == data);
  CHECK(st.Do("GET", "/blobs").status == 403);
  st.UseToken(write);
  CHECK(st.Do("GET", "/blobs").status == 200);
  st.UseToken("0123");
  CHECK(st.Do("GET", blob).status == 401);
}

TEST_CASE("storage tokens: from flags, the environment or files; never both roles the same") {
  testing::TempDir secrets;
  const std::string wf = secrets.path() + "/w", rf = secrets.path() + "/r";
  { std::ofstream(wf) << "file-write-token\n"; }
  { std::ofstream(rf) << "file-read-token\n"; }
  struct Case {
    const char* name;
    std::vector<std::string> flags, env;
    std::string write, read;
  };
  for (const Case& c : std::vector<Case>{
           {"flags", {"--write-token", "flag-write", "--read-token", "flag-read"}, {}, "flag-write", "flag-read"},
           {"environment", {}, {"FOLIO_WRITE_TOKEN=env-write", "FOLIO_READ_TOKEN=env-read"}, "env-write", "env-read"},
           {"files", {"--write-token-file", wf, "--read-token-file", rf}, {}, "file-write-token", "file-read-token"},
       }) {
    CAPTURE(c.name);
    Storage st(c.flags, "", "", c.env);
    // Given tokens are not written anywhere.
    CHECK(ModeOf(st.data() + "/write-token") == 0);
    CHECK(ModeOf(st.data() + "/token-hashes") == 0);
    const std::string data = std::string("blob of ") + c.name;
    st.UseToken(c.write);
    CHECK(st.Do("PUT", "/blobs/sha256/" + Sha256Hex(data), data).status == 201);
    st.UseToken(c.read);
    CHECK(st.Do("GET", "/blobs/sha256/" + Sha256Hex(data)).body == data);
    CHECK(st.Do("DELETE", "/blobs/sha256/" + Sha256Hex(data)).status == 403);
    st.UseToken(c.write + "x");
    CHECK(st.Do("GET", "/blobs/sha256/" + Sha256Hex(data)).status == 401);
  }
  // One role given, the other generated.
  {
    Storage st({}, "only-write-given", "");
    CHECK(ModeOf(st.data() + "/write-token") == 0);
    const std::string read = FirstLine(ReadFile(st.data() + "/read-token"));
    REQUIRE(read.size() == 48);
    CHECK(ReadFile(st.data() + "/token-hashes") == "read " + Sha256Hex(read) + "\n");
    st.UseToken(read);
    CHECK(st.Do("GET", "/blobs").status == 403);
    st.UseToken("only-write-given");
    CHECK(st.Do("GET", "/blobs").status == 200);
  }
  testing::TempDir dir;
  std::string out;
  CHECK(RunToExit({"--listen", "127.0.0.1:0", "--data", dir.path(), "--write-token", "same", "--read-token", "same"},
                  &out) == 1);
  CHECK(out.find("write and read tokens are the same") != std::string::npos);
  CHECK(RunToExit({"--listen", "127.0.0.1:0", "--data", dir.path(), "--write-token", "a", "--write-token-file", wf},
                  &out) == 1);
  CHECK(out.find("not both") != std::string::npos);
  CHECK(RunToExit({"--listen", "127.0.0.1:0", "--data", dir.path(), "--read-token-file", dir.path() + "/missing"},
                  &out) == 1);
  CHECK(out.find("--read-token-file") != std::string::npos);
  { std::ofstream(dir.path() + "/token-hashes") << "write not-a-hash\n"; }
  CHECK(RunToExit({"--listen", "127.0.0.1:0", "--data", dir.path()}, &out) == 1);
  CHECK(out.find(dir.path() + "/token-hashes line 1") != std::string::npos);
}

TEST_CASE("storage tokens: an upload refused for its token is refused before its body, and nothing is stored") {
  Storage st;
  const std::string big(3 << 20, 'q');  // several MiB: refused at the headers, not after
  const std::string blob = "/blobs/sha256/" + Sha256Hex(big);
  for (const char* token : {"", "wrong", kRead}) {
    CAPTURE(token);
    st.UseToken(token);
    auto r = st.Do("PUT", blob, big);
    CHECK(r.status == (std::string(token) == kRead ? 403 : 401));
    CHECK(r.body.find(std::string(token) == kRead ? "permission_denied" : "unauthenticated") != std::string::npos);
    r = st.Do("PUT", "/objects/backups/ingest/planted.db", big);
    CHECK(r.status == (std::string(token) == kRead ? 403 : 401));
  }
  st.UseToken(kWrite);
  CHECK(st.Do("HEAD", blob).status == 404);
  CHECK(st.Do("HEAD", "/objects/backups/ingest/planted.db").status == 404);
  auto metrics = http::Get(st.url() + "/metrics");
  REQUIRE(metrics.ok());
  CHECK(metrics->body.find("folio_storage_requests_total{op=\"put\"} 0") != std::string::npos);
  CHECK(st.Do("PUT", blob, big).status == 201);
}

TEST_CASE("storage: a body on a route that takes none is refused before it is read, token or not") {
  Storage st;
  const int port = std::stoi(st.url().substr(st.url().rfind(':') + 1));
  // Only the headers, announcing 1 MiB: the answer must come without the
  // body (the server would otherwise wait for it, holding a buffer for it).
  const std::string hex(64, 'a');
  for (const std::string& auth : std::vector<std::string>{"", std::string("Authorization: Bearer ") + kWrite + "\r\n"}) {
    for (const std::string& line :
         std::vector<std::string>{"POST /nope", "GET /nope", "GET /blobs/sha256/" + hex, "DELETE /objects/x"}) {
      CAPTURE(auth);
      CAPTURE(line);
      bool closed = false;
      std::string got =
          Exchange(port, line + " HTTP/1.1\r\nHost: s\r\n" + auth + "Content-Length: 1048576\r\n\r\n", &closed);
      CHECK(got.rfind("HTTP/1.1 413 ", 0) == 0);
      CHECK(got.find("\"too_large\"") != std::string::npos);
      CHECK(closed);
    }
  }
  CHECK(st.Put("uploads still stream").status == 201);
}

}  // namespace folio::it
