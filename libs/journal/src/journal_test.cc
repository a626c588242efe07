// Journal API: round trips, streaming, visibility, overwrite/delete across
// restarts, List, argument checks, sticky disk errors, write amplification.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>

#include "folio/journal/journal.h"
#include "folio/testing/testing.h"
#include "test_util.h"

using namespace folio;
using namespace folio::journal;
using folio::journal::test::Content;
using folio::journal::test::ReadBlob;

namespace {

std::unique_ptr<Journal> OpenOk(const std::string& dir, Options o = {}) {
  o.background = false;
  return test::OpenOrFail(dir, o);
}

// Reads the blob back in random pieces through ReadAt.
void CheckPieces(const Journal& j, const std::string& key, const std::string& want, uint32_t seed) {
  Result<BlobReader> r = j.Get(key);
  REQUIRE(r.ok());
  REQUIRE(r->size() == want.size());
  std::mt19937 rng(seed);
  std::string got, piece;
  uint64_t at = 0;
  while (at < want.size()) {
    size_t n = std::uniform_int_distribution<size_t>(1, 300000)(rng);
    REQUIRE(r->ReadAt(at, n, &piece).ok());
    REQUIRE(!piece.empty());
    got += piece;
    at += piece.size();
  }
  CHECK(got == want);
  for (int i = 0; i < 20 && !want.empty(); ++i) {  // random access
    uint64_t off = std::uniform_int_distribution<uint64_t>(0, want.size() - 1)(rng);
    size_t n = std::uniform_int_distribution<size_t>(0, 70000)(rng);
    REQUIRE(r->ReadAt(off, n, &piece).ok());
    CHECK(piece == want.substr(off, n));
  }
  CHECK(r->ReadAt(want.size(), 10, &piece).ok());
  CHECK(piece.empty());
  CHECK(r->ReadAt(want.size() + 1, 10, &piece).code() == Code::kInvalidArgument);
}

}  // namespace

TEST_CASE("round trips: empty, small, block-sized, multi-block, 10 MiB; Put and streaming; across restart") {
  testing::TempDir tmp;
  const size_t block = 1 << 20;
  const std::vector<std::pair<std::string, size_t>> cases = {
      {"empty", 0},           {"one", 1},
      {"small", 1000},        {"almost-block", block - 1},
      {"block", block},       {"block-plus-one", block + 1},
      {"three-and-a-half", 3 * block + block / 2}, {"ten-mib", 10u << 20},
  };
  {
    auto j = OpenOk(tmp.path());
    uint32_t seed = 1;
    for (const auto& [key, size] : cases) {
      std::string data = Content(seed++, size);
      REQUIRE(j->Put("put/" + key, "application/octet-stream", data).ok());
      // Streaming in uneven pieces, crossing block boundaries.
      Result<BlobWriter> w = j->BeginBlob("stream/" + key, "text/plain");
      REQUIRE(w.ok());
      std::mt19937 rng(seed);
      for (size_t at = 0; at < data.size();) {
        size_t n = std::min(data.size() - at, std::uniform_int_distribution<size_t>(1, 700000)(rng));
        REQUIRE(w->Append(std::string_view(data).substr(at, n)).ok());
        at += n;
      }
      CHECK(w->size() == data.size());
      REQUIRE(w->Commit().ok());
      CHECK(ReadBlob(*j, "put/" + key) == data);
      CHECK(ReadBlob(*j, "stream/" + key) == data);
      CheckPieces(*j, "stream/" + key, data, seed);
      Result<BlobReader> r = j->Get("put/" + key);
      REQUIRE(r.ok());
      CHECK(r->meta() == "application/octet-stream");
      CHECK(r->key() == "put/" + key);
    }
  }
  auto j = OpenOk(tmp.path());
  uint32_t seed = 1;
  for (const auto& [key, size] : cases) {
    std::string data = Content(seed++, size);
    CHECK(ReadBlob(*j, "put/" + key) == data);
    CHECK(ReadBlob(*j, "stream/" + key) == data);
    Result<BlobReader> r = j->Get("stream/" + key);
    REQUIRE(r.ok());
    CHECK(r->meta() == "text/plain");
  }
  CHECK(j->stats().live_blobs == 2 * cases.size());
}

TEST_CASE("a blob is invisible before Commit; an aborted blob never appears, not even after restart") {
  testing::TempDir tmp;
  Options o;
  o.block_bytes = 4096;
  o.segment_bytes = 1 << 20;
  {
    auto j = OpenOk(tmp.path(), o);
    REQUIRE(j->Put("k", "v1", "old").ok());
    Result<BlobWriter> w = j->BeginBlob("k", "v2");
    REQUIRE(w.ok());
    REQUIRE(w->Append(Content(1, 50000)).ok());  // several blocks already on disk
    CHECK(ReadBlob(*j, "k") == "old");
    Result<BlobWriter> new_key = j->BeginBlob("fresh", "");
    REQUIRE(new_key.ok());
    REQUIRE(new_key->Append("partial").ok());
    CHECK(ReadBlob(*j, "fresh") == "<absent>");
    REQUIRE(w->Commit().ok());
    CHECK(ReadBlob(*j, "k") == Content(1, 50000));
    CHECK(w->Commit().code() == Code::kInvalidArgument);  // once only
    CHECK(w->Append("x").code() == Code::kInvalidArgument);

    Result<BlobWriter> aborted = j->BeginBlob("aborted", "");
    REQUIRE(aborted.ok());
    REQUIRE(aborted->Append(Content(2, 30000)).ok());
    aborted->Abort();
    CHECK(aborted->Commit().code() == Code::kInvalidArgument);
    {
      Result<BlobWriter> dropped = j->BeginBlob("dropped", "");  // destructor aborts
      REQUIRE(dropped.ok());
      REQUIRE(dropped->Append(Content(3, 30000)).ok());
    }
    REQUIRE(j->Put("after", "", "a").ok());  // a later commit syncs the abandoned blocks too
    CHECK(ReadBlob(*j, "aborted") == "<absent>");
    CHECK(ReadBlob(*j, "dropped") == "<absent>");
    // new_key is still open when the journal closes: it must not appear.
  }
  auto j = OpenOk(tmp.path(), o);
  CHECK(ReadBlob(*j, "aborted") == "<absent>");
  CHECK(ReadBlob(*j, "dropped") == "<absent>");
  CHECK(ReadBlob(*j, "fresh") == "<absent>");
  CHECK(ReadBlob(*j, "k") == Content(1, 50000));
  CHECK(ReadBlob(*j, "after") == "a");
}

TEST_CASE("overwrite and delete are atomic and survive restart") {
  testing::TempDir tmp;
  uint64_t seq1 = 0;
  {
    auto j = OpenOk(tmp.path());
    REQUIRE(j->Put("a", "m1", "first").ok());
    seq1 = j->Get("a")->seq();
    Result<BlobReader> old_handle = j->Get("a");
    REQUIRE(j->Put("a", "m2", "second version").ok());
    CHECK(j->Get("a")->seq() > seq1);
    CHECK(ReadBlob(*j, "a") == "second version");
    std::string out;
    REQUIRE(old_handle->ReadAll(&out).ok());  // a handle is a snapshot
    CHECK(out == "first");
    REQUIRE(j->Put("b", "", "bee").ok());
    REQUIRE(j->Delete("b").ok());
    CHECK(j->Delete("b").code() == Code::kNotFound);
    CHECK(j->Delete("never").code() == Code::kNotFound);
    CHECK(ReadBlob(*j, "b") == "<absent>");
    REQUIRE(j->Put("c", "", "c1").ok());
    REQUIRE(j->Delete("c").ok());
    REQUIRE(j->Put("c", "", "c2").ok());  // re-created after delete
    CHECK(j->stats().deletes == 2);
  }
  auto j = OpenOk(tmp.path());
  CHECK(ReadBlob(*j, "a") == "second version");
  CHECK(j->Get("a")->meta() == "m2");
  CHECK(ReadBlob(*j, "b") == "<absent>");
  CHECK(ReadBlob(*j, "c") == "c2");
  REQUIRE(j->Put("d", "", "new").ok());
  CHECK(j->Get("d")->seq() > j->Get("c")->seq());  // seqs keep growing after restart
}

TEST_CASE("List: prefix, limit, after") {
  testing::TempDir tmp;
  auto j = OpenOk(tmp.path());
  for (const char* k : {"a/1", "a/2", "a/3", "b/1", "ab"}) REQUIRE(j->Put(k, std::string("meta:") + k, k).ok());
  auto keys = [&](std::string_view prefix, size_t limit, std::string_view after) {
    Result<std::vector<BlobInfo>> r = j->List(prefix, limit, after);
    REQUIRE(r.ok());
    std::string out;
    for (const BlobInfo& b : *r) out += b.key + ",";
    return out;
  };
  CHECK(keys("a/", 10, "") == "a/1,a/2,a/3,");
  CHECK(keys("a/", 2, "") == "a/1,a/2,");
  CHECK(keys("a/", 10, "a/2") == "a/3,");
  CHECK(keys("a/", 10, "0") == "a/1,a/2,a/3,");
  CHECK(keys("", 10, "") == "a/1,a/2,a/3,ab,b/1,");
  CHECK(keys("", 10, "ab") == "b/1,");
  CHECK(keys("c", 10, "") == "");
  Result<std::vector<BlobInfo>> r = j->List("b/", 1);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  CHECK((*r)[0].meta == "meta:b/1");
  CHECK((*r)[0].size == 3);
  CHECK(j->List("", 0).status().code() == Code::kInvalidArgument);
}

TEST_CASE("bad arguments and options are refused") {
  testing::TempDir tmp;
  Options o;
  o.max_key_bytes = 16;
  o.max_meta_bytes = 8;
  auto j = OpenOk(tmp.path(), o);
  CHECK(j->Put("", "", "x").code() == Code::kInvalidArgument);
  CHECK(j->Put(std::string(17, 'k'), "", "x").code() == Code::kInvalidArgument);
  CHECK(j->Put("k", std::string(9, 'm'), "x").code() == Code::kInvalidArgument);
  CHECK(j->BeginBlob("", "").status().code() == Code::kInvalidArgument);
  CHECK(j->Get("missing").status().code() == Code::kNotFound);
  CHECK(Journal::Open(tmp.path(), o).status().code() == Code::kConflict);  // already open

  Options bad;
  bad.block_bytes = 32;
  CHECK(Journal::Open(tmp.path() + "/x", bad).status().code() == Code::kInvalidArgument);
  bad = Options();
  bad.segment_bytes = 1000;
  CHECK(Journal::Open(tmp.path() + "/x", bad).status().code() == Code::kInvalidArgument);
  bad = Options();
  bad.create_if_missing = false;
  CHECK(Journal::Open(tmp.path() + "/missing", bad).status().code() == Code::kNotFound);

  Options tiny;
  tiny.max_blob_bytes = 100;
  testing::TempDir tmp2;
  auto k = OpenOk(tmp2.path(), tiny);
  Result<BlobWriter> w = k->BeginBlob("big", "");
  REQUIRE(w.ok());
  REQUIRE(w->Append(std::string(100, 'x')).ok());
  CHECK(w->Append("y").code() == Code::kTooLarge);
  CHECK(k->Put("big", "", std::string(101, 'x')).code() == Code::kTooLarge);
}

TEST_CASE("readers outlive the journal") {
  testing::TempDir tmp;
  std::optional<BlobReader> reader;
  {
    auto j = OpenOk(tmp.path());
    REQUIRE(j->Put("k", "", Content(5, 3 << 20)).ok());
    Result<BlobReader> r = j->Get("k");
    REQUIRE(r.ok());
    reader.emplace(std::move(r).value());
  }
  std::string out;
  REQUIRE(reader->ReadAll(&out).ok());
  CHECK(out == Content(5, 3 << 20));
}

TEST_CASE("a writer that outlives its journal fails cleanly and leaves nothing behind") {
  testing::TempDir tmp;
  std::optional<BlobWriter> writer;
  {
    auto j = OpenOk(tmp.path());
    Result<BlobWriter> w = j->BeginBlob("orphan", "");
    REQUIRE(w.ok());
    REQUIRE(w->Append(Content(1, 3 << 20)).ok());
    writer.emplace(std::move(w).value());
  }
  CHECK(writer->Append(Content(2, 2 << 20)).code() == Code::kUnavailable);
  CHECK(writer->Commit().code() == Code::kUnavailable);
  writer.reset();
  auto j = OpenOk(tmp.path());  // the directory lock was released at close
  CHECK(ReadBlob(*j, "orphan") == "<absent>");
}

TEST_CASE("a failed fdatasync is sticky; after reopening, the blob is absent or whole") {
  testing::TempDir tmp;
  test::FaultEnv env;
  Options o;
  o.env = &env;
  o.block_bytes = 4096;
  {
    auto j = OpenOk(tmp.path(), o);
    REQUIRE(j->Put("ok", "", "fine").ok());
    env.fail_sync = true;
    Status s = j->Put("failed", "", Content(9, 10000));
    CHECK(s.code() == Code::kUnavailable);
    CHECK(ReadBlob(*j, "failed") == "<absent>");
    env.fail_sync = false;  // the disk "recovers", the journal does not trust it
    CHECK(j->Put("later", "", "x").code() == Code::kUnavailable);
    CHECK(j->BeginBlob("later", "").status().code() == Code::kUnavailable);
    CHECK(j->Delete("ok").code() == Code::kUnavailable);
    CHECK(ReadBlob(*j, "ok") == "fine");  // reads still work
  }
  auto j = OpenOk(tmp.path(), o);
  CHECK(ReadBlob(*j, "ok") == "fine");
  std::string failed = ReadBlob(*j, "failed");
  CHECK((failed == "<absent>" || failed == Content(9, 10000)));
  CHECK(ReadBlob(*j, "later") == "<absent>");
  CHECK(j->Put("later", "", "y").ok());
}

TEST_CASE("a short write is sticky and recovery cuts the torn record") {
  testing::TempDir tmp;
  test::FaultEnv env;
  Options o;
  o.env = &env;
  o.block_bytes = 4096;
  {
    auto j = OpenOk(tmp.path(), o);
    REQUIRE(j->Put("ok", "", Content(1, 5000)).ok());
    env.short_writes = true;
    CHECK(j->Put("torn", "", Content(2, 20000)).code() == Code::kUnavailable);
    env.short_writes = false;
    CHECK(j->Put("after", "", "x").code() == Code::kUnavailable);
  }
  auto j = OpenOk(tmp.path(), o);
  CHECK(j->stats().truncated_bytes > 0);
  CHECK(ReadBlob(*j, "ok") == Content(1, 5000));
  CHECK(ReadBlob(*j, "torn") == "<absent>");
  REQUIRE(j->Put("after", "", "x").ok());
  CHECK(ReadBlob(*j, "after") == "x");
}

TEST_CASE("write amplification stays under 1.05 for blobs of 64 KiB and more") {
  for (size_t size : {size_t{64} << 10, size_t{256} << 10, size_t{1} << 20, size_t{10} << 20}) {
    testing::TempDir tmp;
    auto j = OpenOk(tmp.path());
    size_t count = std::max<size_t>(4, (64u << 20) / size);
    for (size_t i = 0; i < count; ++i) {
      char key[80];  // content-addressed keys look like this
      std::snprintf(key, sizeof key, "sha256/%064zu", i);
      REQUIRE(j->Put(key, "application/pdf", Content(i, size)).ok());
    }
    REQUIRE(j->Checkpoint().ok());
    Stats s = j->stats();
    MESSAGE("blob ", size, " B x ", count, ": written ", s.bytes_written, " / blob ", s.blob_bytes,
            " = ", s.write_amplification(), " (checkpoint ", s.checkpoint_bytes, " B)");
    CHECK(s.blob_bytes == size * count);
    CHECK(s.write_amplification() <= 1.05);
    CHECK(s.write_amplification() > 1.0);
  }
}
