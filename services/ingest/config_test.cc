// --mermaid-url, --mermaid-integrity and --mermaid-file as ReadIngestConfig
// reads them, and the bundled file's reader (bundled_mermaid.h).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "folio/site/layout.h"
#include "bundled_mermaid.h"
#include "config.h"

using namespace folio;
using namespace folio::ingest;

namespace {

Result<IngestConfig> Read(std::vector<const char*> args) {
  Flags flags("folio-ingest", "test");
  AddIngestFlags(&flags);
  args.insert(args.begin(), "folio-ingest");
  if (Status s = flags.Parse(static_cast<int>(args.size()), args.data()); !s.ok()) return s;
  return ReadIngestConfig(flags, ServiceBasics{});
}

}  // namespace

TEST_CASE("config: --mermaid-url auto (default) starts on the pinned CDN build and names the bundled file") {
  auto c = Read({});
  REQUIRE(c.ok());
  CHECK(c->site.mermaid_url == site::kMermaidUrl);
  CHECK(c->site.mermaid_integrity == site::kMermaidIntegrity);
  CHECK(c->site.mermaid_blob.empty());
  // Next to the test binary, as next to folio-ingest when it runs.
  CHECK(c->mermaid_file == BesideExecutable("mermaid.min.js"));
  CHECK(c->mermaid_file.find('/') != std::string::npos);
  CHECK(c->mermaid_file.ends_with("/mermaid.min.js"));

  auto named = Read({"--mermaid-file", "/opt/m.js"});
  REQUIRE(named.ok());
  CHECK(named->mermaid_file == "/opt/m.js");
  CHECK(Read({"--mermaid-url", "auto"})->mermaid_file == c->mermaid_file);
}

TEST_CASE("config: an explicit --mermaid-url overrides the bundled file") {
  auto path = Read({"--mermaid-url", "/static/mermaid.min.js"});
  REQUIRE(path.ok());
  CHECK(path->site.mermaid_url == "/static/mermaid.min.js");
  CHECK(path->site.mermaid_integrity.empty());
  CHECK(path->mermaid_file.empty());

  auto none = Read({"--mermaid-url="});
  REQUIRE(none.ok());
  CHECK(none->site.mermaid_url.empty());
  CHECK(none->mermaid_file.empty());

  const char* sri = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";
  auto remote = Read({"--mermaid-url", "https://cdn.example.org/m.js", "--mermaid-integrity", sri});
  REQUIRE(remote.ok());
  CHECK(remote->site.mermaid_url == "https://cdn.example.org/m.js");
  CHECK(remote->site.mermaid_integrity == sri);
  CHECK(remote->mermaid_file.empty());

  auto pinned = Read({"--mermaid-url", std::string(site::kMermaidUrl).c_str()});
  REQUIRE(pinned.ok());
  CHECK(pinned->site.mermaid_integrity == site::kMermaidIntegrity);
  CHECK(pinned->mermaid_file.empty());
}

TEST_CASE("config: bad mermaid flags are refused with the flag's name") {
  auto no_sri = Read({"--mermaid-url", "https://cdn.example.org/m.js"});
  REQUIRE(!no_sri.ok());
  CHECK(no_sri.status().message().find("--mermaid-integrity") != std::string::npos);
  // An integrity for the bundled file makes no sense: it has its own.
  auto stray = Read({"--mermaid-integrity", "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="});
  REQUIRE(!stray.ok());
  CHECK(stray.status().message().find("--mermaid-url") != std::string::npos);
  CHECK(!Read({"--mermaid-url", "/m.js?v=1"}).ok());
  CHECK(!Read({"--recent-pages", "0"}).ok());
  CHECK(!Read({"--recent-pages", "101"}).ok());
  CHECK(!Read({"--recent-pages", "x"}).ok());
  CHECK(Read({})->site.recent_pages == 1);
  CHECK(Read({"--recent-pages", "3"})->site.recent_pages == 3);
}

TEST_CASE("config: --max-inflight-body-bytes defaults to 4 × the largest body and must admit it (issue 22)") {
  CHECK(Read({})->max_inflight_body_bytes == 4 * (uint64_t{64} << 20));
  auto storage = Read({"--storage", "http://127.0.0.1:1", "--storage-token", "t"});
  REQUIRE(storage.ok());
  CHECK(storage->max_inflight_body_bytes == 4 * storage->max_body);
  CHECK(storage->max_body > (uint64_t{85} << 20));  // a 64 MiB attachment in base64
  CHECK(Read({"--max-inflight-body-bytes", "1GiB"})->max_inflight_body_bytes == uint64_t{1} << 30);
  CHECK(Read({"--max-body", "8MiB", "--max-inflight-body-bytes", "8MiB"}).ok());
  auto small = Read({"--max-inflight-body-bytes", "32MiB"});
  REQUIRE(!small.ok());
  CHECK(small.status().message().find("--max-inflight-body-bytes") != std::string::npos);
  CHECK(small.status().message().find("--max-body") != std::string::npos);
  CHECK(!Read({"--max-inflight-body-bytes", "lots"}).ok());
}

TEST_CASE("bundled mermaid: its URL and the reader's bounds") {
  CHECK(BundledMermaidUrl("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef") ==
        "/assets/0123456789abcdef/mermaid.min.js");
  char dir[] = "/tmp/folio-mermaid-test.XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string d = dir;
  CHECK(ReadBundledMermaid(d + "/absent.js").status().code() == Code::kNotFound);
  CHECK(ReadBundledMermaid(d).status().code() == Code::kInvalidArgument);  // a directory
  { std::ofstream(d + "/empty.js"); }
  CHECK(ReadBundledMermaid(d + "/empty.js").status().code() == Code::kInvalidArgument);
  { std::ofstream(d + "/m.js") << "window.mermaid={};"; }
  auto ok = ReadBundledMermaid(d + "/m.js");
  REQUIRE(ok.ok());
  CHECK(*ok == "window.mermaid={};");
  REQUIRE(truncate((d + "/m.js").c_str(), static_cast<off_t>(kMaxBundledMermaid) + 1) == 0);
  CHECK(ReadBundledMermaid(d + "/m.js").status().code() == Code::kTooLarge);
  for (const char* f : {"/empty.js", "/m.js"}) std::remove((d + f).c_str());
  rmdir(dir);
}

TEST_CASE("config: the lease (issue 23): 10s/2s by default, 0 turns it off, TTL at least 3 renews") {
  auto c = Read({});
  REQUIRE(c.ok());
  CHECK(c->lease.ttl_ms == 10'000);
  CHECK(c->lease.renew_ms == 2'000);
  CHECK(c->lease.instance.empty());
  CHECK_FALSE(c->restore_from_storage);
  auto off = Read({"--lease-ttl", "0"});
  REQUIRE(off.ok());
  CHECK(off->lease.ttl_ms == 0);
  auto named = Read({"--lease-ttl", "3s", "--lease-renew", "1s", "--instance", "ingest-0"});
  REQUIRE(named.ok());
  CHECK(named->lease.instance == "ingest-0");
  CHECK(Read({"--lease-ttl", "5s", "--lease-renew", "2s"}).status().code() == Code::kInvalidArgument);
  CHECK(Read({"--lease-renew", "10ms"}).status().code() == Code::kInvalidArgument);
}

TEST_CASE("config: --restore-from-storage needs --storage") {
  CHECK(Read({"--restore-from-storage"}).status().code() == Code::kInvalidArgument);
  auto c = Read({"--restore-from-storage", "--storage", "http://127.0.0.1:1", "--storage-token", "t"});
  REQUIRE(c.ok());
  CHECK(c->restore_from_storage);
}

TEST_CASE("config: the API token from --token, --token-file or FOLIO_TOKEN; a missing or empty file is an error") {
  char dir[] = "/tmp/folio-ingest-config-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string file = std::string(dir) + "/token", empty = std::string(dir) + "/empty";
  std::ofstream(file) << "from-file\n";
  std::ofstream(empty) << "\n";
  CHECK(Read({"--token", "flag"}).value().token == "flag");
  CHECK(Read({"--token-file", file.c_str()}).value().token == "from-file");
  CHECK(Read({}).value().token.empty());  // then <data>/token is read or made
  setenv("FOLIO_TOKEN", "env", 1);
  CHECK(Read({}).value().token == "env");
  unsetenv("FOLIO_TOKEN");
  for (const std::string& bad : {empty, std::string(dir) + "/missing"}) {
    auto c = Read({"--token-file", bad.c_str()});
    CHECK(c.status().code() == Code::kInvalidArgument);
    CHECK(c.status().message().find("--token-file") != std::string::npos);
  }
  CHECK(Read({"--token", "flag", "--token-file", file.c_str()}).status().code() == Code::kInvalidArgument);
  std::remove(file.c_str());
  std::remove(empty.c_str());
  rmdir(dir);
}
