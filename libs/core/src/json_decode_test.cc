#include "folio/core/json_decode.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace folio::json {
namespace {

struct Thing {
  int64_t schema = 0;
  std::string name;
  int64_t count = 0;
  bool flag = false;
  std::vector<std::string> tags;
  std::string note;  // optional
};

// The decoder helper on a small made-up payload, as every bus codec uses it.
Status DecodeThing(std::string_view text, Thing* t) {
  Decoder d("thing");
  object obj;
  if (Status st = d.Parse(text, &obj); !st.ok()) return st;
  return d.Fields(obj, {
      {"schema", kRequired, [&](element v) { return d.Schema(v, 1); }},
      {"name", kRequired, [&](element v) { return d.String("name", v, &t->name); }},
      {"count", kRequired, [&](element v) { return d.Int("count", v, 0, 10, &t->count); }},
      {"flag", kRequired, [&](element v) { return d.Bool("flag", v, &t->flag); }},
      {"tags", kRequired, [&](element v) { return d.Strings("tags", v, &t->tags); }},
      {"note", kOptional, [&](element v) { return d.String("note", v, &t->note); }},
  });
}

std::string Message(std::string_view text) {
  Thing t;
  Status st = DecodeThing(text, &t);
  CHECK_MESSAGE(st.code() == Code::kInvalidArgument, text);
  return st.message();
}

constexpr std::string_view kGood = R"({"schema":1,"name":"n","count":3,"flag":true,"tags":["a","b"]})";

TEST_CASE("json::Decoder::Fields reads known keys in any order and skips unknown ones") {
  Thing t;
  REQUIRE(DecodeThing(kGood, &t).ok());
  CHECK(t.name == "n");
  CHECK(t.count == 3);
  CHECK(t.flag);
  CHECK(t.tags == std::vector<std::string>{"a", "b"});
  CHECK(t.note.empty());  // optional and absent: no error

  Thing u;
  REQUIRE(DecodeThing(R"({"later":{"x":[1,2]},"tags":[],"flag":false,"count":0,"name":"m","schema":1,)"
                      R"("note":"hi","extra":null})", &u).ok());
  CHECK(u.name == "m");
  CHECK(u.note == "hi");
  CHECK(u.tags.empty());
}

TEST_CASE("json::Decoder names the field of the wrong type and the type it wants") {
  CHECK(Message(R"({"schema":1,"name":5,"count":3,"flag":true,"tags":[]})") ==
        "thing: field \"name\" must be a string");
  CHECK(Message(R"({"schema":1,"name":"n","count":"3","flag":true,"tags":[]})") ==
        "thing: field \"count\" must be an integer");
  CHECK(Message(R"({"schema":1,"name":"n","count":11,"flag":true,"tags":[]})") ==
        "thing: field \"count\" must be in 0..10");
  CHECK(Message(R"({"schema":1,"name":"n","count":3,"flag":1,"tags":[]})") ==
        "thing: field \"flag\" must be a boolean");
  CHECK(Message(R"({"schema":1,"name":"n","count":3,"flag":true,"tags":["a",2]})") ==
        "thing: field \"tags\" must be an array of strings");
  CHECK(Message(R"({"schema":1,"name":"n","count":3,"flag":true,"tags":[],"note":[]})") ==
        "thing: field \"note\" must be a string");
  CHECK(Message(R"({"schema":"1"})") == "thing: field \"schema\" must be an integer");
  CHECK(Message(R"({"schema":2})") == "thing: unknown schema 2");
}

TEST_CASE("json::Decoder names the first missing required field, in table order") {
  CHECK(Message(R"({"schema":1,"count":3,"flag":true,"tags":[]})") == "thing: missing field \"name\"");
  CHECK(Message(R"({"tags":[],"name":"n"})") == "thing: missing field \"schema\"");
  CHECK(Message(R"({"schema":1,"name":"n","count":3,"flag":true})") == "thing: missing field \"tags\"");
}

TEST_CASE("json::Decoder rejects documents that are not one JSON object") {
  CHECK(Message("") == "thing: malformed JSON");
  CHECK(Message(std::string(kGood) + "x") == "thing: malformed JSON");
  CHECK(Message(R"({"schema":1,"unknown":[1,}")") == "thing: malformed JSON");  // even under an unknown key
  CHECK(Message("[1]") == "thing: not a JSON object");
}

TEST_CASE("json::Decoder::Items decodes each object of an array; nested missing fields say where") {
  Decoder d("list");
  object obj;
  std::vector<std::string> names;
  auto item = [&](element v, std::string* out) -> Status {
    object o;
    if (Status st = d.ObjectItem("items", v, &o); !st.ok()) return st;
    return d.Fields(o, {{"n", kRequired, [&](element f) { return d.String("n", f, out); }}}, "item: ");
  };
  auto decode = [&](std::string_view text) {
    if (Status st = d.Parse(text, &obj); !st.ok()) return st;
    return d.Fields(obj, {{"items", kRequired, [&](element v) { return d.Items("items", v, &names, item); }}});
  };
  REQUIRE(decode(R"({"items":[{"n":"a"},{"n":"b","x":1}]})").ok());
  CHECK(names == std::vector<std::string>{"a", "b"});
  CHECK(decode(R"({"items":[{"n":"a"},{}]})").message() == "list: item: missing field \"n\"");
  CHECK(decode(R"({"items":[{"n":"a"},3]})").message() == "list: field \"items\" must be an array of objects");
  CHECK(decode(R"({"items":{}})").message() == "list: field \"items\" must be an array");
}

TEST_CASE("json::Decoder::Number and VaultPath") {
  Decoder d("x");
  object obj;
  double score = 0;
  std::string path;
  auto decode = [&](std::string_view text) {
    if (Status st = d.Parse(text, &obj); !st.ok()) return st;
    return d.Fields(obj, {
        {"score", kOptional, [&](element v) { return d.Number("score", v, &score); }},
        {"path", kOptional, [&](element v) { return d.VaultPath("path", v, &path); }},
    });
  };
  REQUIRE(decode(R"({"score":1,"path":"a/b.md"})").ok());
  CHECK(score == 1.0);
  CHECK(path == "a/b.md");
  CHECK(decode(R"({"score":"1"})").message() == "x: field \"score\" must be a finite number");
  CHECK(decode(R"({"path":""})").message().find("field \"path\" must be a non-empty UTF-8 path") !=
        std::string::npos);
}

}  // namespace
}  // namespace folio::json
