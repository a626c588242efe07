// folio-storage as a real process on a real journal directory: the
// content-addressed blob API (hash verified while streaming, Range, ETag,
// 304, HEAD, DELETE, listing), named objects with retention, limits, and
// durability across SIGKILL: every acknowledged PUT reads back identical; a
// damaged blob answers an error status (never 200/206), a torn tail never
// serves wrong bytes. Its tokens (issue 9): generated on the first start and
// kept as hashes only, or given by flag, environment or file; an upload
// refused for its token stores nothing. The full route x token matrix is in
// tests/faults/auth_test.cc.
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

#include "folio/core/hash.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"

namespace folio {
namespace {

constexpr const char* kWrite = "write-token-for-tests";
constexpr const char* kRead = "read-token-for-tests";

class Storage {
 public:
  // With tokens "" the flags are left out: storage generates its own.
  explicit Storage(std::vector<std::string> extra = {}, std::string write = kWrite, std::string read = kRead,
                   std::vector<std::string> env = {})
      : port_(testing::FreePort()), extra_(std::move(extra)), env_(std::move(env)), token_(write) {
    if (!write.empty()) extra_.insert(extra_.end(), {"--write-token", write});
    if (!read.empty()) extra_.insert(extra_.end(), {"--read-token", read});
    Start();
  }
  void Start() {
    proc_.reset();
    std::vector<std::string> argv{testing::BinPath("folio-storage"), "--listen", "127.0.0.1:" + std::to_string(port_),
                                  "--data", data()};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    proc_ = std::make_unique<testing::Process>(argv, env_, dir_.path() + "/storage.log");
    REQUIRE(testing::WaitForHttp(url() + "/readyz", 200, 10000));
  }
  void Kill() { proc_->Kill(); }
  void Stop() { proc_->Stop(15); }  // a clean stop writes a checkpoint
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string data() const { return dir_.path() + "/journal"; }
  std::string Log() const {
    std::ifstream in(dir_.path() + "/storage.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // The token Do() sends (the write token unless changed).
  void UseToken(std::string token) { token_ = std::move(token); }

  http::ClientResponse Do(const std::string& method, const std::string& path, const std::string& body = "",
                          std::vector<std::pair<std::string, std::string>> headers = {}) {
    http::ClientRequest req;
    req.method = method;
    req.url = url() + path;
    req.body = body;
    req.headers = std::move(headers);
    if (!token_.empty()) req.headers.emplace_back("Authorization", "Bearer " + token_);
    auto r = http::Fetch(req);
    return r.ok() ? *r : http::ClientResponse{};
  }
  http::ClientResponse Put(const std::string& data, const std::string& type = "image/png") {
    return Do("PUT", "/blobs/sha256/" + Sha256Hex(data), data, {{"Content-Type", type}});
  }

 private:
  testing::TempDir dir_;
  int port_;
  std::vector<std::string> extra_, env_;
  std::string token_;
  std::unique_ptr<testing::Process> proc_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_mode & 0777 : 0;
}

// Runs folio-storage to its exit (it must refuse to start); output in *out.
int RunToExit(std::vector<std::string> args, std::string* out) {
  std::string cmd = "'" + testing::BinPath("folio-storage") + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string SegmentPath(const std::string& journal_dir) {
  std::string only;
  for (const auto& e : std::filesystem::directory_iterator(journal_dir)) {
    if (e.path().filename().string().starts_with("segment-")) only = e.path().string();
  }
  return only;
}

double Metric(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    for (size_t j = 0; j < 8 && i + j < n; ++j) s[i + j] = static_cast<char>(v >> (8 * j));
  }
  return s;
}

}  // namespace

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

TEST_CASE("storage: every acknowledged PUT survives SIGKILL, byte for byte") {
  Storage st;
  std::mt19937 rng(42);
  std::vector<std::string> acked;
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t) {
      writers.emplace_back([&, t] {
        for (int i = 0; !stop; ++i) {
          std::string data = RandomBytes(1000 + (i * 7919 + t * 104729) % 300000, round * 100000 + t * 1000 + i);
          auto r = st.Put(data, "application/octet-stream");
          if (r.status == 201 || r.status == 200) {
            std::lock_guard lock(mu);
            acked.push_back(std::move(data));
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 300));
    st.Kill();
    stop = true;
    for (auto& w : writers) w.join();
    st.Start();
  }
  REQUIRE(acked.size() > 10);
  for (const std::string& data : acked) {
    auto r = st.Do("GET", "/blobs/sha256/" + Sha256Hex(data));
    REQUIRE(r.status == 200);
    CHECK(r.body == data);
  }
}

// Issue 9, item 7: a blob whose bytes fail their checksum is answered an
// error status before any status line claims 200/206, and is remembered as
// damaged when the damage is found only after the headers went out.
TEST_CASE("storage: a damaged blob is never announced as 200 or 206") {
  Storage st;
  const std::string small = RandomBytes(5000, 11);              // one commit record (inline)
  const std::string first_bad = RandomBytes(3 << 20, 12);       // 3 blocks: damage in block 0
  const std::string late_bad = RandomBytes((3 << 20) + 7, 13);  // damage in block 2
  const std::string fine = RandomBytes(4000, 14);
  for (const std::string* b : {&small, &first_bad, &late_bad, &fine}) REQUIRE(st.Put(*b).status == 201);
  // A clean stop writes a checkpoint: after the flips the index still names
  // the blobs (a scan would drop damaged records), so reads meet the damage.
  st.Stop();
  const std::string seg = SegmentPath(st.data());
  REQUIRE(testing::FlipByteOf(seg, small.substr(2500, 32)));
  REQUIRE(testing::FlipByteOf(seg, first_bad.substr(1000, 32)));
  REQUIRE(testing::FlipByteOf(seg, late_bad.substr((2 << 20) + 5000, 32)));
  st.Start();
  auto path = [](const std::string& b) { return "/blobs/sha256/" + Sha256Hex(b); };
  auto damaged = [&](const http::ClientResponse& r, const std::string& b) {
    INFO("blob of " << b.size() << " bytes: " << r.status << " " << r.body);
    CHECK(r.status == 500);
    if (r.body.empty()) return;  // HEAD
    CHECK(r.body.find("\"data_loss\"") != std::string::npos);
    CHECK(r.body.find("blob sha256/" + Sha256Hex(b) + " is damaged on disk (checksum mismatch)") != std::string::npos);
  };

  // Damage in what the first piece covers: HEAD, GET and Range fail up
  // front, before and after a first read.
  for (const std::string* b : {&small, &first_bad}) {
    CAPTURE(b->size());
    damaged(st.Do("HEAD", path(*b)), *b);
    damaged(st.Do("GET", path(*b)), *b);
    damaged(st.Do("GET", path(*b), "", {{"Range", "bytes=0-99"}}), *b);
    damaged(st.Do("HEAD", path(*b)), *b);
  }
  // Damage deep in a large blob: the first piece is fine, so the first GET
  // starts as 200 and is cut (never completed with wrong bytes) ...
  CHECK(st.Do("HEAD", path(late_bad)).status == 200);
  auto cut = st.Do("GET", path(late_bad));  // status 0: the transfer was cut
  CHECK((cut.status == 0 || cut.body != late_bad));
  // ... and from then on the blob is known damaged: an error status up
  // front, even for a range in its intact first block.
  damaged(st.Do("GET", path(late_bad)), late_bad);
  damaged(st.Do("HEAD", path(late_bad)), late_bad);
  damaged(st.Do("GET", path(late_bad), "", {{"Range", "bytes=0-99"}}), late_bad);
  // The intact blob is untouched; the damage was counted.
  auto ok = st.Do("GET", path(fine));
  CHECK(ok.status == 200);
  CHECK(ok.body == fine);
  CHECK(Metric(st.Do("GET", "/metrics").body, "folio_storage_corrupt_reads_total") >= 3);
  // Uploading the same content again replaces the damaged copy.
  CHECK(st.Put(small).status == 201);
  auto repaired = st.Do("GET", path(small));
  CHECK(repaired.status == 200);
  CHECK(repaired.body == small);
}

// A torn tail (a crash mid-write; here a segment cut short) never yields
// wrong bytes: the blob the cut reaches is absent, everything before intact.
TEST_CASE("storage: a torn journal tail never serves wrong bytes") {
  Storage st;
  const std::string kept = RandomBytes(100000, 21), torn = RandomBytes((2 << 20) + 100, 22);
  REQUIRE(st.Put(kept).status == 201);
  REQUIRE(st.Put(torn).status == 201);
  st.Kill();  // no checkpoint at close: the open scans the tail
  const std::string seg = SegmentPath(st.data());
  const size_t in_torn = ReadFile(seg).find(torn.substr(1 << 20, 32));  // in its second block
  REQUIRE(in_torn != std::string::npos);
  std::filesystem::resize_file(seg, in_torn + 1000);
  st.Start();
  auto k = st.Do("GET", "/blobs/sha256/" + Sha256Hex(kept));
  CHECK(k.status == 200);
  CHECK(k.body == kept);
  CHECK(st.Do("GET", "/blobs/sha256/" + Sha256Hex(torn)).status == 404);
  CHECK(st.Do("HEAD", "/blobs/sha256/" + Sha256Hex(torn)).status == 404);
  // Writable as before: the torn blob can be stored again.
  REQUIRE(st.Put(torn).status == 201);
  auto t = st.Do("GET", "/blobs/sha256/" + Sha256Hex(torn));
  CHECK(t.status == 200);
  CHECK(t.body == torn);
}

}  // namespace folio

namespace folio {

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

}  // namespace folio
