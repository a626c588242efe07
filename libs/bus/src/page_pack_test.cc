#include "folio/bus/page_pack.h"

#include <doctest/doctest.h>

#include "folio/bus/page_schema.h"

namespace folio::bus {
namespace {

std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

std::string SamplePack() {
  PagePackWriter w(PackHeader{PackKind::kPack, 5, 0, 0});
  w.Put("/a", "r");
  w.Delete("/b");
  return w.Finish();
}

}  // namespace

TEST_CASE("page pack: the README's byte layout example") {
  // libs/bus/README.md "Page pack": a pack at version 5 that puts /a (record
  // "r") and deletes /b.
  CHECK(Hex(SamplePack()) ==
        "01 01 05 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00 "
        "01 02 00 2f 61 01 00 00 00 72 "
        "02 02 00 2f 62");
}

TEST_CASE("page pack: round trip of a pack and a snapshot chunk") {
  PageRecord rec;
  rec.status = 410;
  rec.content_type = "text/html";
  rec.body_gzip = std::string("\x1f\x8b\0z", 4);
  const std::string encoded = EncodePageRecord(rec);
  PagePackWriter w(PackHeader{PackKind::kSnapshot, 1234567890123, 2, 3});
  w.Put("/caf\xc3\xa9", encoded);
  w.Delete("/gone");
  w.Put("/", "");
  CHECK(w.ops() == 3);
  const size_t expected = 22 + PagePackWriter::OpSize("/caf\xc3\xa9", encoded) + PagePackWriter::OpSize("/gone", "") - 4 +
                          PagePackWriter::OpSize("/", "");
  CHECK(w.size() == expected);
  std::string pack = w.Finish();
  PackHeader h;
  std::vector<PackOp> ops;
  REQUIRE(DecodePagePack(pack, &h, &ops).ok());
  CHECK(h.kind == PackKind::kSnapshot);
  CHECK(h.version == 1234567890123);
  CHECK(h.chunk == 2);
  CHECK(h.chunks == 3);
  REQUIRE(ops.size() == 3);
  CHECK(ops[0].put);
  CHECK(ops[0].url == "/caf\xc3\xa9");
  PageRecord back;
  REQUIRE(DecodePageRecord(ops[0].record, &back).ok());
  CHECK(back.status == 410);
  CHECK(!ops[1].put);
  CHECK(ops[1].url == "/gone");
  CHECK(ops[2].put);
  CHECK(ops[2].record.empty());
  PagePackWriter r(PackHeader{PackKind::kResync, 9, 0, 1});
  r.Delete("/x");
  PackHeader rh;
  std::vector<PackOp> rops;
  REQUIRE(DecodePagePack(r.Finish(), &rh, &rops).ok());
  CHECK(rh.kind == PackKind::kResync);
  CHECK(IsSnapshot(rh.kind));
  CHECK(!IsSnapshot(PackKind::kPack));
  PackHeader only;
  REQUIRE(DecodePackHeader(pack, &only).ok());
  CHECK(only.version == h.version);
}

TEST_CASE("page pack: truncation, trailing bytes and unknown bytes are rejected") {
  const std::string pack = SamplePack();
  PackHeader h;
  std::vector<PackOp> ops;
  for (size_t n = 0; n < pack.size(); ++n) {
    CHECK_MESSAGE(!DecodePagePack(pack.substr(0, n), &h, &ops).ok(), n);
  }
  for (size_t n = 0; n < 22; ++n) CHECK_MESSAGE(!DecodePackHeader(pack.substr(0, n), &h).ok(), n);
  CHECK(!DecodePagePack(pack + "x", &h, &ops).ok());
  auto with = [&](size_t at, char c) {
    std::string p = pack;
    p[at] = c;
    return p;
  };
  CHECK(!DecodePagePack(with(0, 2), &h, &ops).ok());    // schema
  CHECK(!DecodePagePack(with(1, 4), &h, &ops).ok());    // kind
  CHECK(!DecodePagePack(with(1, 3), &h, &ops).ok());    // a resync snapshot with 0 chunks
  CHECK(!DecodePagePack(with(1, 2), &h, &ops).ok());    // a snapshot with 0 chunks
  CHECK(!DecodePagePack(with(10, 1), &h, &ops).ok());   // a pack with a chunk index
  CHECK(!DecodePagePack(with(18, 3), &h, &ops).ok());   // more ops than there are
  CHECK(!DecodePagePack(with(18, 1), &h, &ops).ok());   // fewer: trailing bytes
  CHECK(!DecodePagePack(with(22, 7), &h, &ops).ok());   // unknown op
  CHECK(!DecodePagePack(with(23, 0), &h, &ops).ok());   // empty URL (then garbage)
  // Every single-byte change either decodes to something sound or fails: no crash.
  for (size_t at = 0; at < pack.size(); ++at) {
    for (int c : {0, 1, 2, 0x7f, 0xff}) {
      std::string p = with(at, static_cast<char>(c));
      if (DecodePagePack(p, &h, &ops).ok()) {
        for (const PackOp& op : ops) CHECK(!op.url.empty());
      }
    }
  }
}

TEST_CASE("page pack keys sort by sequence and parse back to their site") {
  CHECK(PackKey("docs", 42) == "docs.p.0000000000000042");
  CHECK(SnapshotKey("docs", 7, 3) == "docs.s.0000000000000007.000003");
  CHECK(PackKey("docs", 9) < PackKey("docs", 10));
  std::string site;
  CHECK(ParsePackKey(PackKey("my-site", 1), &site));
  CHECK(site == "my-site");
  CHECK(ParsePackKey(SnapshotKey("a", 1, 0), &site));
  CHECK(site == "a");
  for (const char* bad : {"docs.p.", "docs.p.x1", "docs.s.1", "docs.s.1.", "_site.docs", "docs.Lw", "Docs.p.1",
                          "docs.q.1"}) {
    CHECK_MESSAGE(!ParsePackKey(bad, &site), bad);
  }
  // Old per-page keys and pack keys never overlap: a page key has one token after the site.
  std::string url;
  CHECK(!ParsePageKey(PackKey("docs", 1), &site, &url));
  CHECK(PackSubjects("docs") == "$KV.pages.docs.p.>");
  CHECK(SnapshotSubjects("docs") == "$KV.pages.docs.s.>");
  CHECK(OldPageSubjects("docs") == "$KV.pages.docs.*");
}

}  // namespace folio::bus
