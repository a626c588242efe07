#include "folio/ingest_api/push.h"

#include <doctest/doctest.h>

using namespace folio;
using namespace folio::ingest_api;

namespace {
PushError Reject(const std::string& body, PushLimits limits = {}) {
  PushRequest r;
  PushError e;
  CHECK(!DecodePushRequest(body, limits, &r, &e));
  return e;
}
}  // namespace

TEST_CASE("push request: a valid body parses") {
  PushRequest r;
  PushError e;
  REQUIRE(DecodePushRequest(R"({"notes":[{"path":"A/b c.md","content":"# x\n"}],"delete":["Old.md"],"extra":{"x":[1]}})",
                           {}, &r, &e));
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].path == "A/b c.md");
  CHECK(r.notes[0].content == "# x\n");
  CHECK(r.deletes == std::vector<std::string>{"Old.md"});
}

TEST_CASE("push request: every bad input is rejected with the note named") {
  CHECK(Reject("{nope").status.code() == Code::kInvalidArgument);
  CHECK(Reject("[]").status.message().find("object") != std::string::npos);
  auto dotdot = Reject(R"({"notes":[{"path":"a/../b.md","content":""}]})");
  CHECK(dotdot.path == "a/../b.md");
  CHECK(dotdot.status.message().find("..") != std::string::npos);
  CHECK(Reject(R"({"notes":[{"path":"/etc/x.md","content":""}]})").status.message().find("absolute") != std::string::npos);
  CHECK(Reject(R"({"notes":[{"path":"a.txt","content":""}]})").status.message().find(".md") != std::string::npos);
  CHECK(Reject(R"({"notes":[{"path":"a.md"}]})").status.message().find("content") != std::string::npos);
  CHECK(Reject(R"({"notes":[{"path":"a.md","content":1}]})").path == "a.md");
  CHECK(Reject(R"({"notes":[{"path":"a.md","content":"x"},{"path":"a.md","content":"y"}]})").status.message().find("twice") != std::string::npos);
  CHECK(Reject(R"({"notes":[{"path":"a.md","content":"x"}],"delete":["a.md"]})").status.message().find("both") != std::string::npos);
  CHECK(Reject(R"({"delete":["../x.md"]})").status.code() == Code::kInvalidArgument);
  CHECK(Reject("{\"notes\":[{\"path\":\"a.md\",\"content\":\"\xff\"}]}").status.code() == Code::kInvalidArgument);
  CHECK(Reject(R"({"notes":[{"path":"a.md","content":"\ud800"}]})").status.code() == Code::kInvalidArgument);
}

TEST_CASE("push request: size and count limits answer too_large") {
  PushLimits small;
  small.max_note_bytes = 4;
  small.max_notes = 2;
  auto big = Reject(R"({"notes":[{"path":"a.md","content":"12345"}]})", small);
  CHECK(big.status.code() == Code::kTooLarge);
  CHECK(big.path == "a.md");
  auto many = Reject(R"({"notes":[{"path":"a.md","content":""},{"path":"b.md","content":""}],"delete":["c.md"]})", small);
  CHECK(many.status.code() == Code::kTooLarge);
}

TEST_CASE("push request: attachments are base64, bounded, and deletable") {
  PushRequest r;
  PushError e;
  REQUIRE(DecodePushRequest(R"({"attachments":[{"path":"Media/a.png","data":"aGVsbG8="}],"delete":["b.png","c.md"]})",
                           {}, &r, &e));
  REQUIRE(r.attachments.size() == 1);
  CHECK(r.attachments[0].data == "hello");
  CHECK(r.deletes == std::vector<std::string>{"c.md"});
  CHECK(r.delete_attachments == std::vector<std::string>{"b.png"});
  CHECK(Reject(R"({"attachments":[{"path":"a.png","data":"***"}]})").status.message().find("base64") != std::string::npos);
  CHECK(Reject(R"({"attachments":[{"path":"a.md","data":""}]})").status.message().find("note") != std::string::npos);
  CHECK(Reject(R"({"attachments":[{"path":"../a.png","data":""}]})").path == "../a.png");
  PushLimits small;
  small.max_attachment_bytes = 3;
  auto big = Reject(R"({"attachments":[{"path":"a.png","data":"aGVsbG8="}]})", small);
  CHECK(big.status.code() == Code::kTooLarge);
  CHECK(big.path == "a.png");
  CHECK(Reject(R"({"other":1})").status.code() == Code::kInvalidArgument);
}

// Issue 13: the vault's Obsidian settings travel with a push.
TEST_CASE("push request: settings carry strict_line_breaks; anything else in them is refused") {
  PushRequest r;
  PushError e;
  REQUIRE(DecodePushRequest(R"({"settings":{"strict_line_breaks":true}})", {}, &r, &e));
  CHECK(r.notes.empty());
  REQUIRE(r.settings.strict_line_breaks.has_value());
  CHECK(*r.settings.strict_line_breaks);
  PushRequest off;
  REQUIRE(DecodePushRequest(R"({"notes":[{"path":"a.md","content":"x"}],"settings":{"strict_line_breaks":false}})", {},
                           &off, &e));
  REQUIRE(off.settings.strict_line_breaks.has_value());
  CHECK(!*off.settings.strict_line_breaks);
  PushRequest none;
  REQUIRE(DecodePushRequest(R"({"notes":[],"settings":{}})", {}, &none, &e));
  CHECK(!none.settings.strict_line_breaks.has_value());
  PushRequest absent;
  REQUIRE(DecodePushRequest(R"({"notes":[{"path":"a.md","content":"x"}]})", {}, &absent, &e));
  CHECK(!absent.settings.strict_line_breaks.has_value());

  auto unknown = Reject(R"({"notes":[{"path":"a.md","content":"x"}],"settings":{"strictLineBreaks":true}})");
  CHECK(unknown.status.code() == Code::kInvalidArgument);
  CHECK(unknown.status.message().find("strictLineBreaks") != std::string::npos);
  CHECK(Reject(R"({"settings":{"strict_line_breaks":true,"theme":"dark"}})").status.message().find("theme") !=
        std::string::npos);
  for (const char* bad : {R"({"settings":{"strict_line_breaks":1}})", R"({"settings":{"strict_line_breaks":"true"}})",
                          R"({"settings":{"strict_line_breaks":null}})"}) {
    auto err = Reject(bad);
    CHECK(err.status.code() == Code::kInvalidArgument);
    CHECK(err.status.message().find("strict_line_breaks") != std::string::npos);
  }
  CHECK(Reject(R"({"settings":true})").status.message().find("object") != std::string::npos);
  CHECK(Reject(R"({"settings":[]})").status.code() == Code::kInvalidArgument);
}
