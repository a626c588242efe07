#include "folio/bus/hosts.h"
#include "folio/bus/note_schema.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/site_schema.h"

#include <doctest/doctest.h>

namespace folio::bus {
namespace {

bool IsNatsKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '/' || c == '_' || c == '=' || c == '.';
}

PageRecord SampleRecord() {
  PageRecord r;
  r.status = 301;
  r.content_type = "text/html; charset=utf-8";
  r.cache_control = "max-age=60";
  r.location = "/caf\xc3\xa9/new";
  r.etag = "\"ab12\"";
  r.csp = "default-src 'none'";
  r.last_modified_s = -5;  // signed fields survive the round trip
  r.version = 1234567890123;
  r.body_gzip = std::string("\x1f\x8b\0\0binary\xff", 11);
  return r;
}

NoteEvent SampleEvent() {
  NoteEvent e;
  e.site = "docs";
  e.path = "Folder/Caf\xc3\xa9 \"quoted\".md";
  e.url = "/folder/cafe-quoted";
  e.version = 42;
  e.deleted = false;
  e.title = "Caf\xc3\xa9 \\ \"quoted\"\n";
  e.tags = {"a", "b/c", "\xe6\x97\xa5\xe6\x9c\xac"};
  e.text = "line one\nline two\ttab";
  e.sections = {{"Line \"two\"", "line-two", 9}};
  e.aliases = {"Caf\xc3\xa9", "coffee"};
  e.links = {{"Graph view.md", "connections"}, {"Other.md", ""}};
  e.lang = "fr";
  return e;
}

}  // namespace

TEST_CASE("site names are [a-z0-9-]{1,63} not starting with '-'") {
  for (const char* ok : {"docs", "a", "0", "my-site-2", "a-"}) CHECK_MESSAGE(IsValidSiteName(ok), ok);
  CHECK(IsValidSiteName(std::string(63, 'x')));
  for (const char* bad : {"", "-docs", "Docs", "a_b", "a.b", "a b", "caf\xc3\xa9", "a/b", "*", ">"}) {
    CHECK_MESSAGE(!IsValidSiteName(bad), bad);
  }
  CHECK(!IsValidSiteName(std::string(64, 'x')));
}

TEST_CASE("page keys round-trip and use only NATS key characters") {
  const char* paths[] = {"/", "/folder/my-note", "/caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac note",
                         "/a b?c#d%20", "/\xf0\x9f\x98\x80", "/..", "/x.y.z"};
  for (const char* path : paths) {
    std::string key = PageKey("docs", path);
    CHECK(key.rfind("docs.", 0) == 0);
    for (char c : key) CHECK_MESSAGE(IsNatsKeyChar(c), key);
    CHECK(key.back() != '.');
    CHECK(key.find("..") == std::string::npos);
    std::string site, url_path;
    REQUIRE(ParsePageKey(key, &site, &url_path));
    CHECK(site == "docs");
    CHECK(url_path == path);
  }
}

TEST_CASE("ParsePageKey rejects keys folio did not write") {
  std::string site, path;
  for (const char* bad : {"", "nodot", "Docs.Lw", ".Lw", "docs.", "docs.!!", "docs.L", "docs.Lx", "-x.Lw"}) {
    CHECK_MESSAGE(!ParsePageKey(bad, &site, &path), bad);
  }
}

TEST_CASE("notes subject") {
  CHECK(NotesSubject("docs") == "notes.docs");
  CHECK(NotesSubject("docs").rfind(kNotesSubjectPrefix, 0) == 0);
}

TEST_CASE("page record round trip") {
  PageRecord in = SampleRecord(), out;
  REQUIRE(DecodePageRecord(EncodePageRecord(in), &out).ok());
  CHECK(out.status == in.status);
  CHECK(out.content_type == in.content_type);
  CHECK(out.cache_control == in.cache_control);
  CHECK(out.location == in.location);
  CHECK(out.etag == in.etag);
  CHECK(out.csp == in.csp);
  CHECK(out.last_modified_s == in.last_modified_s);
  CHECK(out.version == in.version);
  CHECK(out.body_gzip == in.body_gzip);

  PageRecord empty, out2;
  REQUIRE(DecodePageRecord(EncodePageRecord(empty), &out2).ok());
  CHECK(out2.status == 200);
  CHECK(out2.body_gzip.empty());
}

TEST_CASE("page record byte layout matches README.md") {
  PageRecord r;
  r.status = 0x0102;
  r.last_modified_s = 0x0304;
  r.version = 0x05;
  r.content_type = "t";
  r.etag = "e";
  r.csp = "c";
  r.body_gzip = "zz";
  std::string want("\x02"                              // schema
                   "\x02\x01"                          // status
                   "\x04\x03\0\0\0\0\0\0"              // last_modified_s
                   "\x05\0\0\0\0\0\0\0"                // version
                   "\x01\0t"                           // content_type
                   "\0\0"                              // cache_control
                   "\0\0"                              // location
                   "\x01\0e"                           // etag
                   "\x01\0c"                           // csp
                   "\x02\0\0\0zz",                     // body_gzip
                   1 + 2 + 8 + 8 + 3 + 2 + 2 + 3 + 3 + 6);
  CHECK(EncodePageRecord(r) == want);
}

TEST_CASE("a page record with a body_blob is schema 3; the rest stay schema 2") {
  PageRecord r;
  r.status = 0x0102;
  r.last_modified_s = 0x0304;
  r.version = 0x05;
  r.content_type = "t";
  r.etag = "e";
  r.csp = "c";
  r.body_blob = "b";
  std::string want("\x03"                              // schema
                   "\x02\x01"                          // status
                   "\x04\x03\0\0\0\0\0\0"              // last_modified_s
                   "\x05\0\0\0\0\0\0\0"                // version
                   "\x01\0t"                           // content_type
                   "\0\0"                              // cache_control
                   "\0\0"                              // location
                   "\x01\0e"                           // etag
                   "\x01\0c"                           // csp
                   "\x01\0b"                           // body_blob
                   "\0\0\0\0",                         // body_gzip
                   1 + 2 + 8 + 8 + 3 + 2 + 2 + 3 + 3 + 3 + 4);
  CHECK(EncodePageRecord(r) == want);
  PageRecord out;
  REQUIRE(DecodePageRecord(want, &out).ok());
  CHECK(out.body_blob == "b");
  CHECK(out.csp == "c");
  CHECK(out.body_gzip.empty());
  for (size_t n = 0; n < want.size(); ++n) CHECK(!DecodePageRecord(std::string_view(want).substr(0, n), &out).ok());
  CHECK(!DecodePageRecord(want + "x", &out).ok());
  r.body_blob.clear();
  CHECK(EncodePageRecord(r)[0] == '\x02');
}

TEST_CASE("a page for signed-in readers is schema 4, which no earlier decoder reads as public") {
  PageRecord r;
  r.status = 200;
  r.content_type = "t";
  r.access = PageAccess::kSignedIn;
  std::string want("\x04"                              // schema
                   "\xC8\0"                            // status
                   "\0\0\0\0\0\0\0\0"                  // last_modified_s
                   "\0\0\0\0\0\0\0\0"                  // version
                   "\x01\0t"                           // content_type
                   "\0\0" "\0\0" "\0\0" "\0\0"            // cache_control, location, etag, csp
                   "\0\0"                              // body_blob (always present in 4)
                   "\x01"                              // access
                   "\0\0\0\0",                         // body_gzip
                   1 + 2 + 8 + 8 + 3 + 8 + 2 + 1 + 4);
  CHECK(EncodePageRecord(r) == want);
  PageRecord out;
  REQUIRE(DecodePageRecord(want, &out).ok());
  CHECK(out.access == PageAccess::kSignedIn);
  for (size_t n = 0; n < want.size(); ++n) CHECK(!DecodePageRecord(std::string_view(want).substr(0, n), &out).ok());
  std::string bad = want;
  bad[bad.size() - 5] = '\x07';  // an access value this release does not know: refused, never served
  CHECK(!DecodePageRecord(bad, &out).ok());
  r.access = PageAccess::kPublic;
  CHECK(EncodePageRecord(r)[0] == '\x02');
  REQUIRE(DecodePageRecord(EncodePageRecord(r), &out).ok());
  CHECK(out.access == PageAccess::kPublic);
}

TEST_CASE("page records of schema 1 (before csp) still decode, with csp empty") {
  std::string v1("\x01"                              // schema
                 "\x02\x01"                          // status
                 "\x04\x03\0\0\0\0\0\0"              // last_modified_s
                 "\x05\0\0\0\0\0\0\0"                // version
                 "\x01\0t"                           // content_type
                 "\0\0"                              // cache_control
                 "\0\0"                              // location
                 "\x01\0e"                           // etag
                 "\x02\0\0\0zz",                     // body_gzip
                 1 + 2 + 8 + 8 + 3 + 2 + 2 + 3 + 6);
  PageRecord out;
  out.csp = "stale";
  REQUIRE(DecodePageRecord(v1, &out).ok());
  CHECK(out.status == 0x0102);
  CHECK(out.content_type == "t");
  CHECK(out.etag == "e");
  CHECK(out.csp.empty());
  CHECK(out.body_gzip == "zz");
  for (size_t n = 0; n < v1.size(); ++n) CHECK(!DecodePageRecord(std::string_view(v1).substr(0, n), &out).ok());
  CHECK(!DecodePageRecord(v1 + "x", &out).ok());
}

TEST_CASE("page record decoding is strict") {
  std::string data = EncodePageRecord(SampleRecord());
  PageRecord out;
  for (size_t n = 0; n < data.size(); ++n) {
    Status st = DecodePageRecord(std::string_view(data).substr(0, n), &out);
    CHECK_MESSAGE(st.code() == Code::kInvalidArgument, "length ", n);
  }
  Status trailing = DecodePageRecord(data + "x", &out);
  CHECK(trailing.code() == Code::kInvalidArgument);
  CHECK(trailing.message().find("trailing") != std::string::npos);
  std::string other = data;
  other[0] = 5;
  Status schema = DecodePageRecord(other, &out);
  CHECK(schema.code() == Code::kInvalidArgument);
  CHECK(schema.message().find("schema") != std::string::npos);
}

TEST_CASE("note events: the restored mark round-trips; a note event is not one") {
  NoteEvent out;
  REQUIRE(DecodeNoteEvent(EncodeNoteEvent(RestoredEvent("docs", 7)), &out).ok());
  CHECK(out.restored);
  CHECK(out.site == "docs");
  CHECK(out.version == 7);
  CHECK(out.path.empty());
  REQUIRE(DecodeNoteEvent(EncodeNoteEvent(SampleEvent()), &out).ok());
  CHECK_FALSE(out.restored);
  CHECK(EncodeNoteEvent(SampleEvent()).find("restored") == std::string::npos);
  CHECK_FALSE(DecodeNoteEvent(R"({"schema":1,"site":"a","path":"","url":"","version":1,"deleted":false,"title":"",)"
                              R"("tags":[],"text":"","restored":"yes"})", &out).ok());
}

TEST_CASE("note event round trip") {
  NoteEvent in = SampleEvent(), out;
  std::string json = EncodeNoteEvent(in);
  CHECK(json.find("\"schema\":1") != std::string::npos);
  REQUIRE(DecodeNoteEvent(json, &out).ok());
  CHECK(out.site == in.site);
  CHECK(out.path == in.path);
  CHECK(out.url == in.url);
  CHECK(out.version == in.version);
  CHECK(out.deleted == in.deleted);
  CHECK(out.title == in.title);
  CHECK(out.tags == in.tags);
  CHECK(out.text == in.text);
  REQUIRE(out.sections.size() == 1);
  CHECK(out.sections[0].heading == in.sections[0].heading);
  CHECK(out.sections[0].anchor == "line-two");
  CHECK(out.sections[0].offset == 9);
  CHECK(out.aliases == in.aliases);
  REQUIRE(out.links.size() == 2);
  CHECK(out.links[0].target == "Graph view.md");
  CHECK(out.links[0].text == "connections");
  CHECK(out.links[1].text.empty());
  CHECK(out.lang == "fr");
  NoteEvent bad;
  CHECK(!DecodeNoteEvent(R"({"schema":1,"site":"a","path":"p","url":"/p","version":1,"deleted":false,"title":"",)"
                         R"("tags":[],"text":"","links":[{"text":"no target"}]})", &bad).ok());
  CHECK(!DecodeNoteEvent(R"({"schema":1,"site":"a","path":"p","url":"/p","version":1,"deleted":false,"title":"",)"
                         R"("tags":[],"text":"","sections":[{"heading":"h","anchor":"a","offset":-1}]})", &bad).ok());

  NoteEvent del;
  del.site = "docs";
  del.path = "Gone.md";
  del.deleted = true;
  std::string del_json = EncodeNoteEvent(del);
  // An event without aliases, links or lang (as older ingests send) decodes
  // with them empty.
  CHECK(del_json.find("aliases") == std::string::npos);
  CHECK(del_json.find("links") == std::string::npos);
  REQUIRE(DecodeNoteEvent(del_json, &out).ok());
  CHECK(out.deleted);
  CHECK(out.tags.empty());
  CHECK(out.aliases.empty());
  CHECK(out.links.empty());
  CHECK(out.lang.empty());
}

TEST_CASE("note events: one message carries one event or several, one per line, all or nothing") {
  NoteEvent a = SampleEvent(), b = SampleEvent();
  b.path = "Other.md";
  b.text = "two\nlines";  // escaped in the JSON: the line split is safe
  std::vector<NoteEvent> out;
  REQUIRE(DecodeNoteEvents(EncodeNoteEvent(a), &out).ok());
  REQUIRE(out.size() == 1);
  REQUIRE(DecodeNoteEvents(EncodeNoteEvent(a) + "\n" + EncodeNoteEvent(b), &out).ok());
  REQUIRE(out.size() == 3);
  CHECK(out[2].path == "Other.md");
  CHECK(out[2].text == "two\nlines");

  out.clear();
  Status st = DecodeNoteEvents(EncodeNoteEvent(a) + "\n{\"schema\":1}", &out);
  CHECK(st.code() == Code::kInvalidArgument);
  CHECK(st.message().find("line 2") != std::string::npos);
  CHECK(out.empty());
  CHECK(!DecodeNoteEvents(EncodeNoteEvent(a) + "\n", &out).ok());
  CHECK(!DecodeNoteEvents("", &out).ok());
  std::string many;
  for (size_t i = 0; i <= kMaxNoteEventsPerMessage; ++i) many += (i ? "\n" : "") + EncodeNoteEvent(a);
  CHECK(!DecodeNoteEvents(many, &out).ok());
  CHECK(out.empty());
}

TEST_CASE("note event decoding rejects bad input with a clear message") {
  NoteEvent out;
  auto message = [&](std::string_view json) {
    Status st = DecodeNoteEvent(json, &out);
    CHECK(st.code() == Code::kInvalidArgument);
    return st.message();
  };
  std::string good = EncodeNoteEvent(SampleEvent());
  std::string wrong_schema = good;
  wrong_schema.replace(wrong_schema.find("\"schema\":1"), 10, "\"schema\":2");
  CHECK(message(wrong_schema).find("schema 2") != std::string::npos);

  std::string no_url = good;
  size_t at = no_url.find("\"url\":");
  no_url.erase(at, no_url.find(',', at) - at + 1);
  CHECK(message(no_url).find("missing field \"url\"") != std::string::npos);

  CHECK(message("{\"schema\":1}").find("missing field") != std::string::npos);
  std::string bad_type = good;
  bad_type.replace(bad_type.find("\"version\":42"), 12, "\"version\":\"42\"");
  CHECK(message(bad_type).find("\"version\"") != std::string::npos);
  std::string bad_site = good;
  bad_site.replace(bad_site.find("\"docs\""), 6, "\"Docs!\"");
  CHECK(message(bad_site).find("site") != std::string::npos);
  message("");
  message("[]");
  message("not json");
  message(good.substr(0, good.size() - 1));
  message(good + " {}");
}

TEST_CASE("note event decoding ignores unknown fields") {
  std::string json = EncodeNoteEvent(SampleEvent());
  json.insert(1, "\"future\":{\"x\":[1,2]},");
  NoteEvent out;
  CHECK(DecodeNoteEvent(json, &out).ok());
  CHECK(out.version == 42);
}

}  // namespace folio::bus

namespace folio::bus {

TEST_CASE("site keys are not page keys") {
  CHECK(SiteKey("docs") == "_site.docs");
  std::string site, path;
  REQUIRE(ParseSiteKey(SiteKey("my-site"), &site));
  CHECK(site == "my-site");
  CHECK(!ParsePageKey(SiteKey("docs"), &site, &path));
  CHECK(!ParsePageKey("_meta.docs", &site, &path));
  for (const char* bad : {"", "_site.", "_site.Docs", "_site.a.b", "docs.Lw", "_sitex.docs", "_meta.docs"}) {
    CHECK_MESSAGE(!ParseSiteKey(bad, &site), bad);
  }
  CHECK(!ParseSiteKey(PageKey("docs", "/"), &site));
}

TEST_CASE("hosts are normalised: lower case, no port, no brackets, no trailing dot") {
  std::string out;
  struct Case { const char* in; const char* want; };
  for (Case c : {Case{"a.example", "a.example"}, {"A.Example", "a.example"}, {"b.example:8081", "b.example"},
                 {"b.example:", "b.example"}, {"b.example.", "b.example"}, {"B.EXAMPLE.:80", "b.example"},
                 {"[::1]:8080", "::1"}, {"[::1]", "::1"}, {"::1", "::1"}, {"[2001:DB8::1]", "2001:db8::1"},
                 {"127.0.0.1:80", "127.0.0.1"}, {"under_score", "under_score"}, {"localhost", "localhost"}}) {
    CHECK_MESSAGE(NormalizeHost(c.in, &out), c.in);
    CHECK(out == c.want);
  }
  for (const char* bad : {"", ":80", "a.example:port", "a.example:123456", "[::1", "[::1]x", "a b", "a/b",
                          "caf\xc3\xa9.example", "a.example:80:80x", ".", "[]"}) {
    CHECK_MESSAGE(!NormalizeHost(bad, &out), bad);
  }
  CHECK(NormalizeHost(std::string(kMaxHostNameSize, 'a'), &out));
  CHECK(!NormalizeHost(std::string(kMaxHostNameSize + 1, 'a'), &out));
}

TEST_CASE("site record round trip and strict decoding") {
  SiteRecord in{"blog", {"a.example", "www.a.example", "::1"}, "Caf\xc3\xa9 \"A\"", {}}, out;
  std::string json = EncodeSiteRecord(in);
  CHECK(json.find("\"schema\":2") != std::string::npos);
  CHECK(json.find("access") == std::string::npos);  // a public site without readers has none
  REQUIRE(DecodeSiteRecord(json, &out).ok());
  CHECK(out.site == in.site);
  CHECK(out.hosts == in.hosts);
  CHECK(out.title == in.title);

  SiteRecord none{"x", {}, "", {}};
  REQUIRE(DecodeSiteRecord(EncodeSiteRecord(none), &out).ok());
  CHECK(out.hosts.empty());

  json.insert(1, "\"future\":[1,{}],");
  CHECK(DecodeSiteRecord(json, &out).ok());

  auto message = [&](std::string_view bad) {
    Status st = DecodeSiteRecord(bad, &out);
    CHECK(st.code() == Code::kInvalidArgument);
    return st.message();
  };
  CHECK(message("{\"schema\":3,\"site\":\"a\",\"hosts\":[],\"title\":\"\"}").find("schema 3") != std::string::npos);
  CHECK(DecodeSiteRecord("{\"schema\":1,\"site\":\"a\",\"hosts\":[],\"title\":\"\"}", &out).ok());
  CHECK(message("{\"schema\":1,\"hosts\":[],\"title\":\"\"}").find("missing field \"site\"") != std::string::npos);
  CHECK(message("{\"schema\":1,\"site\":\"A!\",\"hosts\":[],\"title\":\"\"}").find("site name") != std::string::npos);
  CHECK(message("{\"schema\":1,\"site\":\"a\",\"hosts\":[\"A.example:80\"],\"title\":\"\"}").find("canonical") !=
        std::string::npos);
  CHECK(message("{\"schema\":1,\"site\":\"a\",\"hosts\":\"a.example\",\"title\":\"\"}").find("hosts") !=
        std::string::npos);
  message("");
  message("[]");
  message(EncodeSiteRecord(in) + "x");
}

TEST_CASE("a site record carries who may read the site, and refuses access out of bounds") {
  SiteRecord in{"priv", {"p.example"}, "P", {}}, out;
  in.access.private_site = true;
  in.access.session_key = std::string(64, 'a');
  in.access.session_ttl_s = 3600;
  in.access.readers = {{"", "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA", false},
                       {"ann", "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA", true}};
  std::string json = EncodeSiteRecord(in);
  REQUIRE(DecodeSiteRecord(json, &out).ok());
  CHECK(out.access.private_site);
  CHECK(out.access.session_key == in.access.session_key);
  CHECK(out.access.session_ttl_s == 3600);
  REQUIRE(out.access.readers.size() == 2);
  CHECK(out.access.readers[0].name.empty());
  CHECK(out.access.readers[1].name == "ann");
  CHECK(out.access.readers[1].owner);
  CHECK(out.access.readers[1].hash == in.access.readers[1].hash);

  auto refused = [&](SiteRecord r, std::string_view want) {
    Status st = DecodeSiteRecord(EncodeSiteRecord(r), &out);
    CHECK(st.code() == Code::kInvalidArgument);
    CHECK_MESSAGE(st.message().find(want) != std::string::npos, st.message());
  };
  SiteRecord r = in;
  r.access.session_key = std::string(63, 'a');
  refused(r, "session_key");
  r = in;
  r.access.session_key = std::string(64, 'A');
  refused(r, "session_key");
  r = in;
  r.access.readers[1].name = "a b";
  refused(r, "reader name");
  r = in;
  r.access.readers[1].name = std::string(kMaxReaderNameBytes + 1, 'x');
  refused(r, "reader name");
  r = in;
  r.access.readers[1].hash.clear();
  refused(r, "password hash");
  r = in;
  r.access.readers.push_back(r.access.readers[1]);
  refused(r, "two readers named");
  r = in;
  r.access.session_ttl_s = 10;
  refused(r, "session_ttl_s");
  r = in;
  r.access.readers.assign(kMaxSiteReaders + 1, in.access.readers[0]);
  for (size_t i = 0; i < r.access.readers.size(); ++i) r.access.readers[i].name = "u" + std::to_string(i);
  refused(r, "readers");
}

}  // namespace folio::bus
