// The golden fixtures of the ingest API (tests/fixtures/api/*.json): each
// decodes, and encodes back to the same bytes; structs built here encode to
// them too. clients/obsidian/test/fixtures.test.ts reads the same files.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "folio/core/hash.h"
#include "folio/ingest_api/error.h"
#include "folio/ingest_api/export.h"
#include "folio/ingest_api/manifest.h"
#include "folio/ingest_api/push.h"
#include "folio/http/server.h"

namespace folio::ingest_api {
namespace {

// The fixture's bytes, without the file's final newline.
std::string Fixture(const std::string& name) {
  const char* src = std::getenv("FOLIO_SOURCE_DIR");
  REQUIRE_MESSAGE(src != nullptr, "run through ctest (FOLIO_SOURCE_DIR)");
  std::ifstream in(std::string(src) + "/tests/fixtures/api/" + name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), name);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// Decoded by the server, then sent again as a client writes it.
std::string ReencodePushRequest(const PushRequest& r) {
  std::vector<OutgoingNote> notes;
  for (const PushNote& n : r.notes) notes.push_back({n.path, n.content});
  std::vector<OutgoingAttachment> atts;
  for (const PushAttachment& a : r.attachments) atts.push_back({a.path, Base64Encode(a.data)});
  std::vector<std::string> deletes = r.deletes;
  deletes.insert(deletes.end(), r.delete_attachments.begin(), r.delete_attachments.end());
  return EncodePushRequest(notes, atts, deletes, r.settings.strict_line_breaks);
}

TEST_CASE("fixture push_request.json: the server decodes what the client encodes") {
  const std::string fx = Fixture("push_request.json");
  PushRequest r;
  PushError err;
  REQUIRE_MESSAGE(DecodePushRequest(fx, PushLimits{}, &r, &err), err.status.message());
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].path == "Folder/Note.md");
  REQUIRE(r.attachments.size() == 1);
  CHECK(r.attachments[0].data == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(r.deletes == std::vector<std::string>{"Old.md"});
  CHECK(r.delete_attachments == std::vector<std::string>{"Media/old.png"});
  CHECK(r.settings.strict_line_breaks == true);
  CHECK(ReencodePushRequest(r) == fx);

  const OutgoingNote notes[] = {{"Folder/Note.md", "# Note\n\nSee [[Other]] and ![[pic.png]].\n"}};
  const OutgoingAttachment atts[] = {{"Media/pic.png", "iVBORw0KGgo="}};
  const std::string deletes[] = {"Old.md", "Media/old.png"};
  CHECK(EncodePushRequest(notes, atts, deletes, true) == fx);
  CHECK(EncodePushRequest({}, {}, {}) == R"({"notes":[],"delete":[]})");
}

TEST_CASE("fixtures push_reply*.json: decode, encode, same bytes") {
  for (const char* name : {"push_reply.json", "push_reply_replayed.json"}) {
    const std::string fx = Fixture(name);
    Result<PushReply> r = DecodePushReply(fx);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    CHECK_MESSAGE(EncodePushReply(*r) == fx, name);
  }
  PushReply r = DecodePushReply(Fixture("push_reply.json")).value();
  CHECK(r.version == 8);
  CHECK(r.attachments_received == 1);
  REQUIRE(r.notes.size() == 4);
  CHECK(!r.notes[1].published);
  CHECK(r.notes[2].attachment);
  CHECK(r.notes[3].rerendered);
  CHECK(r.strict_line_breaks == true);
  CHECK(r.settings_changed);
  CHECK(r.phases == "hash=1 meta=3 apply=2 render=5");
  // The record a replay sends again, and the replay around it.
  PushReply replay = r;
  replay.took_ms = 0;
  replay.phases.clear();
  replay.replayed = true;
  CHECK(EncodePushReply(EncodePushReplyRecord(r), replay).ends_with(R"("published":true,"took_ms":0,"replayed":true})"));
  // An older server's reply: what it leaves out takes the defaults.
  Result<PushReply> old = DecodePushReply(R"({"version":3,"received":5,"notes":[]})");
  REQUIRE(old.ok());
  CHECK(old->attachments_received == -1);
  CHECK(!old->strict_line_breaks);
  CHECK(DecodePushReply(R"({"version":"3"})").status().message() == "push reply: field \"version\" must be an integer");
  CHECK(!DecodePushReply("<html>").ok());
}

TEST_CASE("fixture stage_reply.json; a server without staging answers a push reply") {
  const std::string fx = Fixture("stage_reply.json");
  Result<StageReply> s = DecodeStageReply(fx);
  REQUIRE(s.ok());
  CHECK(s->staged);
  CHECK(s->stage == "ab12");
  CHECK(s->batches == 3);
  CHECK(EncodeStageReply(*s) == fx);
  Result<StageReply> applied = DecodeStageReply(Fixture("push_reply.json"));
  REQUIRE(applied.ok());
  CHECK(!applied->staged);
  CHECK(applied->applied.version == 8);
}

TEST_CASE("fixtures manifest*.json: full, delta, too old") {
  for (const char* name : {"manifest.json", "manifest_delta.json", "manifest_too_old.json"}) {
    const std::string fx = Fixture(name);
    Result<Manifest> m = DecodeManifest(fx);
    REQUIRE_MESSAGE(m.ok(), m.status().message());
    CHECK_MESSAGE(EncodeManifest(*m) == fx, name);
  }
  Manifest full;
  full.version = 8;
  full.site = "docs";
  full.epoch = "e1f2a3";
  full.site_url = "https://docs.example.org";
  full.max_note_bytes = static_cast<int64_t>(kMaxNoteBytes);
  full.max_attachment_bytes = static_cast<int64_t>(kMaxAttachmentBytes);
  full.strict_line_breaks = false;
  full.notes = {{"Folder/Note.md", std::string(64, 'a'), "/folder/note", {"dangling link [[Other]]"}},
                {"Index.md", std::string(64, 'b'), "/", {}}};
  full.attachments = {{"Media/pic.png", std::string(64, 'c'), "/assets/0123456789abcdef/pic.png", {}}};
  full.missing_attachments = std::vector<std::string>{"Media/pic.png"};
  CHECK(EncodeManifest(full) == Fixture("manifest.json"));

  Manifest delta = DecodeManifest(Fixture("manifest_delta.json")).value();
  CHECK(delta.since == 8);
  CHECK(delta.deleted == std::vector<std::string>{"Old.md"});
  CHECK(delta.note_count == 2);
  CHECK(!delta.missing_attachments);
  Manifest old = DecodeManifest(Fixture("manifest_too_old.json")).value();
  CHECK(old.too_old);
  CHECK(!old.has_notes);
  // What a client refuses.
  CHECK(!DecodeManifest(R"({"version":1})").ok());
  CHECK(!DecodeManifest(R"({"version":1,"notes":[{"sha256":"x"}]})").ok());
  CHECK(!DecodeManifest(R"({"version":1,"limits":{"max_attachment_bytes":-1},"notes":[]})").ok());
  CHECK(!DecodeManifest(R"({"version":1,"notes":[],"attachments":{}})").ok());
}

TEST_CASE("fixture export.json") {
  const std::string fx = Fixture("export.json");
  Result<ExportPage> p = DecodeExportPage(fx);
  REQUIRE(p.ok());
  CHECK(p->urls == std::vector<std::string>{"/", "/folder/note"});
  CHECK(p->next == "/folder/note");
  CHECK(EncodeExportPage(*p) == fx);
  CHECK(EncodeExportPage({}) == R"({"urls":[],"next":""})");
  CHECK(!DecodeExportPage(R"({"next":""})").ok());
}

TEST_CASE("fixture error.json: the one error body, and the Status it maps back to") {
  const std::string fx = Fixture("error.json");
  Result<ErrorBody> e = http::DecodeErrorBody(fx);
  REQUIRE(e.ok());
  CHECK(e->code == "too_large");
  CHECK(e->path == "Big.md");
  CHECK(http::EncodeErrorBody(*e) == fx);
  CHECK(http::Response::Error(Status::TooLarge(e->message), "Big.md").body == fx);
  CHECK(http::StatusFromHttp(413, fx).code() == Code::kTooLarge);
}

}  // namespace
}  // namespace folio::ingest_api
