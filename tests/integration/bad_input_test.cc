// Every bad push gets a 4xx with a JSON error naming the note and the
// problem, and changes nothing (version, manifest and edge stay as they were).
#include <doctest/doctest.h>

#include "cluster.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;

TEST_CASE("bad input: 4xx with a JSON error naming the note; nothing written") {
  Cluster c({"--max-body", "256KiB", "--max-note", "1KiB", "--max-notes", "3"});
  auto ok = c.Push(PushBody({{"Keep.md", "# Keep\n"}}));
  REQUIRE(ok.status == 200);
  const std::string before = c.Manifest().body;
  REQUIRE(JsonInt(before, "version") == 1);

  struct Case {
    const char* name;
    std::string body;
    int status;
    const char* code;
    const char* path;     // expected error.path, "" if none
    const char* message;  // substring of error.message
  };
  std::string big_note(2000, 'x');
  std::string big_body = PushBody({{"Big.md", std::string(300 * 1024, 'y')}});
  std::vector<Case> cases = {
      {"malformed JSON", "{\"notes\":[{\"path\":", 400, "invalid_argument", "", "JSON"},
      {"not an object", "[1,2]", 400, "invalid_argument", "", "object"},
      {"dot-dot path", PushBody({{"Keep.md", "# changed\n"}, {"a/../b.md", "x"}}), 400, "invalid_argument",
       "a/../b.md", ".."},
      {"absolute path", PushBody({{"/etc/passwd.md", "x"}}), 400, "invalid_argument", "/etc/passwd.md", "absolute"},
      {"not a .md note", PushBody({{"image.png", "x"}}), 400, "invalid_argument", "image.png", ".md"},
      {"invalid UTF-8", "{\"notes\":[{\"path\":\"Bad.md\",\"content\":\"\\ud800\"}]}", 400, "invalid_argument", "",
       ""},
      {"raw invalid UTF-8", "{\"notes\":[{\"path\":\"Bad.md\",\"content\":\"\xff\xfe\"}]}", 400,
       "invalid_argument", "", ""},
      {"oversized note", PushBody({{"Keep.md", "# changed\n"}, {"Huge.md", big_note}}), 413, "too_large", "Huge.md",
       "limit"},
      {"too many notes", PushBody({{"a.md", ""}, {"b.md", ""}, {"c.md", ""}, {"d.md", ""}}), 413, "too_large", "",
       "too many"},
      {"oversized body", big_body, 413, "", "", ""},
      {"deleting a bad path", PushBody({}, {"../x.md"}), 400, "invalid_argument", "../x.md", ".."},
  };
  for (const auto& tc : cases) {
    CAPTURE(tc.name);
    auto r = c.Push(tc.body);
    CHECK(r.status == tc.status);
    CHECK(r.Header("Content-Type").find("application/json") == 0);
    if (*tc.code) CHECK(JsonErrorCode(r.body) == tc.code);
    if (*tc.path) CHECK(JsonErrorField(r.body, "path") == tc.path);
    if (*tc.message) CHECK(JsonErrorField(r.body, "message").find(tc.message) != std::string::npos);
    CHECK(c.Manifest().body == before);
  }
  CHECK(c.EdgeGet("/big").status == 404);
  CHECK(c.EdgeGet("/a").status == 404);
}

TEST_CASE("bad input: no token or a wrong token is 401 and writes nothing") {
  Cluster c;
  auto none = c.Push(PushBody({{"A.md", "# A\n"}}), "");
  CHECK(none.status == 401);
  CHECK(JsonErrorCode(none.body) == "unauthenticated");
  auto wrong = c.Push(PushBody({{"A.md", "# A\n"}}), "not-the-token");
  CHECK(wrong.status == 401);
  CHECK(c.Manifest("wrong").status == 401);
  auto m = c.Manifest();
  REQUIRE(m.status == 200);
  CHECK(JsonInt(m.body, "version") == 0);
  CHECK(m.body.find("A.md") == std::string::npos);
}
