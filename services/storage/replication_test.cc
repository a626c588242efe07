// The replication formats (replication.h): the KV value, keys, subjects and
// the journal meta of a replicated object. The replication itself runs
// against a real JetStream cluster in tests/integration/storage_replicated_test.cc.
#include <doctest/doctest.h>

#include "folio/core/hash.h"
#include "replication.h"

using namespace folio;
using namespace folio::storage;

TEST_CASE("replication: blob metadata round-trips; malformed values are refused") {
  BlobMeta m;
  m.key = "objects/backups/a\tb.tar";  // the key is last: it may hold a tab
  m.size = 1048577;
  m.chunks = 3;
  m.sha256 = Sha256Hex("x");
  m.upload = "0123456789abcdef";
  m.content_type = "application/x-tar";
  auto back = DecodeMeta(EncodeMeta(m));
  REQUIRE(back.ok());
  CHECK(back->key == m.key);
  CHECK(back->size == m.size);
  CHECK(back->chunks == 3);
  CHECK(back->sha256 == m.sha256);
  CHECK(back->upload == m.upload);
  CHECK(back->content_type == m.content_type);
  for (const char* bad : {"", "v2\t1\t1\t" , "v1\tx\t1\tab\tcd\t\tk", "v1\t1\t1\tnothex\t01\t\tk"}) {
    CHECK(DecodeMeta(bad).status().code() == Code::kInvalidArgument);
  }
}

TEST_CASE("replication: keys, subjects and journal meta") {
  std::string hex = Sha256Hex("blob");
  CHECK(MetaKeyOf("sha256/" + hex) == "b." + hex);
  CHECK(MetaKeyOf("objects/x y") == "o." + Sha256Hex("x y"));
  CHECK(ChunkSubject("sha256/" + hex, "00ff") == "folio.blob.b." + hex + ".00ff");
  CHECK(ChunkSubjects("sha256/" + hex) == "folio.blob.b." + hex + ".*");
  std::string meta = JournalMeta("image/png", "00ff");
  CHECK(ContentTypeOf(meta) == "image/png");
  CHECK(UploadOf(meta) == "00ff");
  CHECK(ContentTypeOf("text/plain") == "text/plain");
  CHECK(UploadOf("text/plain").empty());
  CHECK(NewUploadId().size() == 16);
  CHECK(NewUploadId() != NewUploadId());
}
