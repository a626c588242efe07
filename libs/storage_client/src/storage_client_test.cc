#include <doctest/doctest.h>

#include <string>

#include "folio/storage_client/storage_client.h"

using namespace folio;
using namespace folio::storage_client;

namespace {
const std::string kA(64, 'a'), kB(64, 'b');
}

TEST_CASE("storage client: blob and object paths") {
  CHECK(BlobPath(kA) == "/blobs/sha256/" + kA);
  CHECK(BlobPath("0123456789abcdef") == "/blobs/sha256/0123456789abcdef");
  CHECK(ObjectPath("backups/x.db") == "/objects/backups/x.db");
}

TEST_CASE("storage client: the request carries the token; the URL loses a trailing slash") {
  Client c({"http://127.0.0.1:1/", "tok"}, TokenRole::kWrite, FaultPolicy::kRetryable);
  CHECK(c.enabled());
  http::ClientRequest r = c.Request("GET", "/blobs?limit=1", 5000);
  CHECK(r.url == "http://127.0.0.1:1/blobs?limit=1");
  CHECK(r.method == "GET");
  CHECK(r.timeout_ms == 5000);
  REQUIRE(r.headers.size() == 1);
  CHECK(r.headers[0] == std::pair<std::string, std::string>{"Authorization", "Bearer tok"});
  CHECK(!Client().enabled());
}

TEST_CASE("storage client: blob listings parsed, not searched") {
  BlobListing page;
  std::string json = R"({"blobs":[{"sha256":")" + kA + R"(","size":1,"content_type":"a","seq":1},)" +
                     R"({"sha256":")" + kB + R"(","size":2,"content_type":"\"sha256\":\"x","seq":2}],"truncated":true})";
  REQUIRE(ParseBlobListing(json, &page).ok());
  CHECK(page.sha256 == std::vector<std::string>{kA, kB});
  CHECK(page.truncated);
  // A content type that looks like a key is a value, not a hash or a flag
  // (the string search this replaces would have been fooled by either).
  json = R"({"blobs":[{"sha256":")" + kA + R"(","content_type":"\"truncated\":true","seq":1}],"truncated":false})";
  REQUIRE(ParseBlobListing(json, &page).ok());
  CHECK(page.sha256 == std::vector<std::string>{kA});
  CHECK(!page.truncated);
  REQUIRE(ParseBlobListing(R"({"blobs":[],"truncated":false})", &page).ok());
  CHECK(page.sha256.empty());
  for (std::string bad : {std::string("not json"), std::string(R"({"blobs":{}, "truncated":false})"),
                          std::string(R"({"blobs":[]})"), std::string(R"({"blobs":[{"sha256":"abc"}],"truncated":false})"),
                          R"({"blobs":[{"sha256":")" + std::string(64, 'A') + R"("}],"truncated":false})"}) {
    CAPTURE(bad);
    Status s = ParseBlobListing(bad, &page);
    CHECK(s.code() == Code::kUnavailable);
  }
}

TEST_CASE("storage client: object listings") {
  ObjectListing page;
  REQUIRE(ParseObjectListing(R"({"objects":[{"name":"backups/a b","size":3,"content_type":"","seq":7}],)"
                             R"("truncated":false})",
                             &page)
              .ok());
  REQUIRE(page.objects.size() == 1);
  CHECK(page.objects[0].name == "backups/a b");
  CHECK(page.objects[0].seq == 7);
  CHECK(!page.truncated);
  CHECK(ParseObjectListing(R"({"objects":[{"name":"x"}],"truncated":false})", &page).code() == Code::kUnavailable);
}

TEST_CASE("storage client: what a failed request becomes") {
  Client ingest({"http://s", "t"}, TokenRole::kWrite, FaultPolicy::kRetryable);
  Client edge({"http://s", "t"}, TokenRole::kRead, FaultPolicy::kClassify);
  auto answer = [](int status, std::string body) { return Result<http::ClientResponse>(http::ClientResponse{status, {}, body}); };
  Result<http::ClientResponse> down = Status::Unavailable("connection refused");

  Status s = ingest.Error("uploading x", down);
  CHECK(s.code() == Code::kUnavailable);
  CHECK(s.message() == "uploading x: storage unreachable: connection refused");
  s = ingest.Error("x", answer(401, ""));
  CHECK(s.message().find("write token (its <data>/write-token)") != std::string::npos);
  s = ingest.Error("x", answer(403, ""));
  CHECK(s.message().find("is folio-storage's read token; ingest needs the write token") != std::string::npos);
  s = ingest.Error("x", answer(500, R"({"error":{"code":"data_loss"}})"));
  CHECK(s.code() == Code::kUnavailable);  // retryable: ingest's callers retry
  CHECK(s.message().find("storage answered HTTP 500 {") != std::string::npos);

  s = edge.Error("", answer(401, ""));
  CHECK(s.code() == Code::kUnavailable);
  CHECK(s.message().find("read token (its <data>/read-token)") != std::string::npos);
  CHECK(edge.Error("", down).code() == Code::kUnavailable);
  CHECK(edge.Error("", answer(503, "")).code() == Code::kUnavailable);
  CHECK(edge.Error("", answer(500, R"({"error":{"code":"data_loss","message":"m"}})")).code() == Code::kDataLoss);
  CHECK(edge.Error("", answer(500, R"({"error":{"code":"internal"}})")).code() == Code::kInternal);
  CHECK(edge.Error("", answer(400, "")).code() == Code::kInternal);
}

TEST_CASE("storage client: a --storage list is parsed once, a bad entry named with the flag (issue 23)") {
  auto one = ParseUrlList("http://127.0.0.1:8083/", "--storage");
  REQUIRE(one.ok());
  CHECK(*one == std::vector<std::string>{"http://127.0.0.1:8083"});
  auto two = ParseUrlList(" http://a:1 , https://b/ ", "--storage");
  REQUIRE(two.ok());
  CHECK(*two == std::vector<std::string>{"http://a:1", "https://b"});
  CHECK(ParseUrlList("", "--storage")->empty());
  for (const char* bad : {"http://a:1,", "http://a:1,,http://b", "a:1", "http://:1", "http://a:x", "http://a b"}) {
    auto r = ParseUrlList(bad, "--storage");
    REQUIRE(!r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().find("--storage: entry ") == 0);
  }
  CHECK(ParseUrlList("http://a:1,ftp://b", "--storage").status().message().find("entry 2 (\"ftp://b\")") !=
        std::string::npos);
  CHECK(*NormalizeUrlList("http://a:1/, http://b:2", "--storage") == "http://a:1,http://b:2");
}

TEST_CASE("storage client: a list of closed ports fails over, then says how many it tried") {
  Client c({"http://127.0.0.1:1,http://127.0.0.1:2", "tok"}, TokenRole::kRead, FaultPolicy::kClassify);
  CHECK(c.replicas().size() == 2);
  CHECK(c.access().url == "http://127.0.0.1:1,http://127.0.0.1:2");
  auto r = c.HeadBlob(kA, 2000);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == Code::kUnavailable);
  CHECK(r.status().message().find("tried 2 of 2 storage replicas") != std::string::npos);
  CHECK(c.Error("", r).code() == Code::kUnavailable);
}
