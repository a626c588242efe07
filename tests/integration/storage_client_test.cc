// libs/storage_client against a real folio-storage process: every request it
// makes (blobs by hash and prefix, ranges, delete, objects through files),
// the listings across pages, and how a refused token and an unreachable
// storage are reported.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <string>

#include "folio/core/hash.h"
#include "folio/storage_client/storage_client.h"
#include "folio/testing/testing.h"
#include "storage_process.h"

namespace folio::it {

using storage_client::Client;
using storage_client::FaultPolicy;
using storage_client::TokenRole;

TEST_CASE("storage client: blobs, ranges and delete against real storage") {
  Storage st;
  Client writer({st.url(), kWrite}, TokenRole::kWrite, FaultPolicy::kRetryable);
  Client reader({st.url(), kRead}, TokenRole::kRead, FaultPolicy::kClassify);
  const std::string data = "0123456789 the bytes of one attachment";
  const std::string hex = Sha256Hex(data);

  auto put = writer.PutBlob(hex, data, "text/plain", 10'000);
  REQUIRE(put.ok());
  CHECK(put->status == 201);
  auto head = reader.HeadBlob(hex.substr(0, 16), 10'000);  // by prefix: the full hash is the ETag
  REQUIRE(head.ok());
  CHECK(head->status == 200);
  CHECK(head->Header("etag") == "\"" + hex + "\"");
  CHECK(head->Header("content-length") == std::to_string(data.size()));
  auto got = reader.GetBlob(hex, 10'000);
  REQUIRE(got.ok());
  CHECK(got->body == data);
  CHECK(got->Header("content-type") == "text/plain");
  auto part = reader.GetBlobRange(hex, 2, 5, 10'000);
  REQUIRE(part.ok());
  CHECK(part->status == 206);
  CHECK(part->body == "23456");

  // The read token may not delete: the refusal names the token to use.
  auto refused = reader.DeleteBlob(hex, 10'000);
  REQUIRE(refused.ok());
  CHECK(refused->status == 403);
  Status why = reader.Error("deleting", refused);
  CHECK(why.code() == Code::kUnavailable);
  CHECK(why.message().find("read-token") != std::string::npos);
  Client wrong({st.url(), "not-a-token"}, TokenRole::kWrite, FaultPolicy::kRetryable);
  auto denied = wrong.HeadBlob(hex, 10'000);
  REQUIRE(denied.ok());
  CHECK(denied->status == 401);
  CHECK(wrong.Error("x", denied).message().find("write-token") != std::string::npos);

  auto del = writer.DeleteBlob(hex, 10'000);
  REQUIRE(del.ok());
  CHECK(del->status == 204);
  auto gone = reader.GetBlob(hex, 10'000);
  REQUIRE(gone.ok());
  CHECK(gone->status == 404);
  CHECK(reader.Error("", gone).code() == Code::kInternal);  // an unwanted answer, classified
}

TEST_CASE("storage client: listings across pages") {
  Storage st;
  Client writer({st.url(), kWrite}, TokenRole::kWrite, FaultPolicy::kRetryable);
  std::set<std::string> want;
  // More than one page (1000 per request).
  for (int i = 0; i < 1005; ++i) {
    std::string data = "blob " + std::to_string(i);
    want.insert(Sha256Hex(data));
    auto put = writer.PutBlob(Sha256Hex(data), data, "text/plain", 10'000);
    REQUIRE(put.ok());
    REQUIRE(put->status == 201);
  }
  auto all = writer.ListAllBlobs(30'000);
  REQUIRE(all.ok());
  CHECK(std::set<std::string>(all->begin(), all->end()) == want);
  CHECK(all->size() == want.size());

  testing::TempDir dir;
  const std::string src = dir.path() + "/in.db", dst = dir.path() + "/out.db";
  { std::ofstream(src, std::ios::binary) << "backup bytes"; }
  for (const char* name : {"backups/a-1.db", "backups/b_2.db", "other/e"}) {
    auto put = writer.PutObjectFile(name, 5, "application/octet-stream", src, 10'000);
    REQUIRE(put.ok());
    CHECK((put->status == 201 || put->status == 200));
  }
  auto objects = writer.ListAllObjects("backups/", 10'000);
  REQUIRE(objects.ok());
  REQUIRE(objects->size() == 2);
  CHECK((*objects)[0].name == "backups/a-1.db");
  CHECK((*objects)[1].name == "backups/b_2.db");
  auto got = writer.GetObjectFile("backups/a-1.db", dst, 10'000);
  REQUIRE(got.ok());
  CHECK(got->status == 200);
  CHECK(ReadFile(dst) == "backup bytes");
}

TEST_CASE("storage client: an unreachable storage is kUnavailable") {
  Client c({"http://127.0.0.1:" + std::to_string(testing::FreePort()), "t"}, TokenRole::kRead, FaultPolicy::kClassify);
  auto r = c.GetBlob(std::string(64, 'a'), 2'000);
  CHECK(!r.ok());
  Status s = c.Error("reading", r);
  CHECK(s.code() == Code::kUnavailable);
  CHECK(s.message().find("reading: storage unreachable") == 0);
}

}  // namespace folio::it
