#include <doctest/doctest.h>

#include <malloc.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "folio/core/config.h"
#include "folio/core/disk_space.h"
#include "folio/core/files.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/memory.h"
#include "folio/core/secret.h"
#include "folio/core/service.h"
#include "folio/core/text.h"
#include "folio/core/utf8.h"
#include "folio/core/thread_pool.h"
#include "folio/core/time.h"

using namespace folio;

TEST_CASE("flags: command line beats environment beats default") {
  Flags f("t", "test");
  f.Add("listen", "127.0.0.1:8080", "where");
  f.Add("token", "", "secret");
  f.AddBool("dry-run", false, "d");
  setenv("FOLIO_TOKEN", "from-env", 1);
  setenv("FOLIO_LISTEN", "1.2.3.4:1", 1);
  const char* argv[] = {"t", "push", "--listen=:9", "--dry-run", "dir"};
  REQUIRE(f.Parse(5, argv).ok());
  CHECK(f.Get("listen") == ":9");
  CHECK(f.Get("token") == "from-env");
  CHECK(f.GetBool("dry-run"));
  CHECK(f.positional() == std::vector<std::string>{"push", "dir"});
  unsetenv("FOLIO_TOKEN");
  unsetenv("FOLIO_LISTEN");
}

TEST_CASE("flags: unknown flag and bad numbers are errors") {
  Flags f("t", "test");
  f.Add("max-body", "32MiB", "limit");
  f.Add("timeout", "5s", "t");
  const char* bad[] = {"t", "--nope"};
  CHECK(f.Parse(2, bad).code() == Code::kInvalidArgument);
  Flags g("t", "test");
  g.Add("max-body", "32MiB", "limit");
  g.Add("timeout", "250ms", "t");
  const char* ok[] = {"t"};
  REQUIRE(g.Parse(1, ok).ok());
  CHECK(g.GetBytes("max-body").value() == 32 * 1024 * 1024);
  CHECK(g.GetDurationMs("timeout").value() == 250);
  Flags h("t", "test");
  h.Add("n", "12x", "n");
  REQUIRE(h.Parse(1, ok).ok());
  CHECK(!h.GetInt("n").ok());
}

TEST_CASE("host:port parsing") {
  std::string h;
  int p;
  REQUIRE(ParseHostPort("127.0.0.1:8080", &h, &p).ok());
  CHECK(h == "127.0.0.1");
  CHECK(p == 8080);
  REQUIRE(ParseHostPort(":80", &h, &p).ok());
  CHECK(h == "0.0.0.0");
  REQUIRE(ParseHostPort("[::1]:81", &h, &p).ok());
  CHECK(h == "::1");
  CHECK(!ParseHostPort("nohost", &h, &p).ok());
  CHECK(!ParseHostPort("a:70000", &h, &p).ok());
}

TEST_CASE("sha256 and base64url") {
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(IsLowerHex(Sha256Hex("abc")));
  CHECK(IsLowerHex(""));
  CHECK_FALSE(IsLowerHex("BA78"));  // upper case is not what HexEncode writes
  CHECK_FALSE(IsLowerHex("ba7g"));
  CHECK_FALSE(IsLowerHex("ba 7"));
  {
    Sha256Stream st;
    st.Update("a");
    st.Update("");
    st.Update("bc");
    CHECK(st.FinishHex() == Sha256Hex("abc"));
    Sha256Stream empty;
    CHECK(empty.FinishHex() == Sha256Hex(""));
  }
  std::string d;
  for (std::string s : {"", "a", "ab", "abc", "hello/world?\xff"}) {
    std::string enc = Base64UrlEncode(s);
    REQUIRE(Base64UrlDecode(enc, &d));
    CHECK(d == s);
    CHECK(enc.find_first_of("+/=") == std::string::npos);
  }
  REQUIRE(Base64Decode("aGVsbG8=", &d));
  CHECK(d == "hello");
  CHECK(!Base64Decode("a*b", &d));
}

TEST_CASE("FormatBytes: binary units, one decimal when useful") {
  CHECK(FormatBytes(812) == "812 B");
  CHECK(FormatBytes(8 << 20) == "8 MiB");
  CHECK(FormatBytes(1536) == "1.5 KiB");
}

TEST_CASE("AppendXmlText: escapes like HTML and keeps the document well-formed") {
  std::string out;
  AppendXmlText("a<b & \"c\" 'd'\t\x01\x7f\xc2\x85\xef\xbf\xbe\xff", &out);
  CHECK(out == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;\t\xef\xbf\xbd\xef\xbf\xbd");
  CHECK(HtmlEscape("<&>") == "&lt;&amp;&gt;");
}

TEST_CASE("utf-8 validation") {
  CHECK(IsValidUtf8("plain"));
  CHECK(IsValidUtf8("Заметка 笔记 🎉"));
  CHECK(!IsValidUtf8("\xff"));
  CHECK(!IsValidUtf8("\xc0\xaf"));          // overlong '/'
  CHECK(!IsValidUtf8("\xed\xa0\x80"));      // surrogate
  CHECK(!IsValidUtf8("\xe2\x82"));          // truncated
}

TEST_CASE("vault paths") {
  CHECK(CheckVaultPath("Folder/Note name.md").ok());
  CHECK(CheckVaultPath("Заметки/моя.md").ok());
  CHECK(CheckVaultPath("a/../b.md").message().find("..") != std::string::npos);
  CHECK(!CheckVaultPath("/etc/passwd.md").ok());
  CHECK(!CheckVaultPath("C:/x.md").ok());
  CHECK(!CheckVaultPath("a//b.md").ok());
  CHECK(!CheckVaultPath("a\\b.md").ok());
  CHECK(!CheckVaultPath("./a.md").ok());
  CHECK(!CheckVaultPath("").ok());
  CHECK(!CheckVaultPath(std::string("a\0b.md", 6)).ok());
  CHECK(!CheckVaultPath("\xff.md").ok());
}

TEST_CASE("percent coding and html escaping") {
  std::string out;
  REQUIRE(PercentDecode("/a%20b/%D0%B7", &out));
  CHECK(out == "/a b/з");
  CHECK(!PercentDecode("%2", &out));
  CHECK(!PercentDecode("%zz", &out));
  CHECK(PercentEncodePath("/a b/з") == "/a%20b/%D0%B7");
  CHECK(HtmlEscape("<a href=\"x\">&'") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  CHECK(PercentEncodePath("backups/1 a&b+c#d%") == "backups/1%20a%26b%2Bc%23d%25");  // a query value too
}

TEST_CASE("files: a directory fsync") {
  CHECK(SyncDirectory("/tmp").ok());
  auto missing = SyncDirectory("/nonexistent-folio-dir");
  CHECK(missing.code() == Code::kUnavailable);
  CHECK(missing.message().find("/nonexistent-folio-dir") != std::string::npos);
}

TEST_CASE("ascii whitespace trimming") {
  CHECK(TrimAsciiSpace(" \t\r\n\v\fa b\t\r\n") == "a b");
  CHECK(TrimAsciiSpace("x") == "x");
  CHECK(TrimAsciiSpace(" \t ").empty());
  CHECK(TrimAsciiSpace("").empty());
  CHECK(TrimAsciiSpace("\xa0x\xa0") == "\xa0x\xa0");  // ASCII only: a UTF-8 byte is not space
}

TEST_CASE("json writer escapes and nests") {
  JsonWriter w;
  w.BeginObject().Key("a").Int(1).Key("s").String("q\"\n\x01").Key("l").BeginArray().Bool(true).Null().EndArray().EndObject();
  CHECK(w.str() == "{\"a\":1,\"s\":\"q\\\"\\n\\u0001\",\"l\":[true,null]}");
  CHECK(JsonError("too_large", "x") == "{\"error\":{\"code\":\"too_large\",\"message\":\"x\"}}");
  std::string s;
  AppendJsonString("\xff", &s);
  CHECK(s == "\"\\ufffd\"");
}

TEST_CASE("json writer splices the members of an object written earlier") {
  JsonWriter inner;
  inner.BeginObject().Key("a").Int(1).Key("b").BeginArray().String("x").EndArray().EndObject();
  for (std::string stored : {inner.str(), std::string("\"a\":1,\"b\":[\"x\"]")}) {  // braces or, as stored before, none
    JsonWriter w;
    w.BeginObject().RawMembers(stored).Key("c").Bool(true).EndObject();
    CHECK(w.str() == "{\"a\":1,\"b\":[\"x\"],\"c\":true}");
  }
  JsonWriter w;
  w.BeginObject().Key("z").Int(0).RawMembers("{}").RawMembers("").RawMembers("{\"y\":2}").EndObject();
  CHECK(w.str() == "{\"z\":0,\"y\":2}");
}

TEST_CASE("fnv-1a 64 matches the reference values and continues from a state") {
  CHECK(Fnv1a64("") == kFnv1aOffset);
  CHECK(Fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(Fnv1a64("foobar") == 0x85944171f73967e8ull);
  CHECK(Fnv1a64("bar", Fnv1a64("foo")) == Fnv1a64("foobar"));
}

TEST_CASE("gzip round trip, reuse, corruption and bomb limit") {
  GzipCompressor c;
  std::string in(100000, 'x'), z, back;
  for (int i = 0; i < 3; ++i) {
    c.Compress(in, &z);
    REQUIRE(GzipDecompress(z, &back).ok());
    CHECK(back == in);
  }
  CHECK(z.size() < 1000);
  CHECK(GzipDecompress(z, &back, 1000).code() == Code::kTooLarge);
  CHECK(!GzipDecompress(z.substr(0, z.size() / 2), &back).ok());
  CHECK(!GzipDecompress("not gzip", &back).ok());
  // The thread's inflate state is reused after errors, across sizes, and
  // the limit holds exactly at the boundary.
  std::string small = "hello, page", mixed;
  for (int i = 0; i < 5000; ++i) mixed += std::to_string(i * 7919 % 1000) + " ";
  for (const std::string* s : {&small, &mixed, &in, &small}) {
    std::string zz = GzipCompress(*s), out = "stale";
    REQUIRE(GzipDecompress(zz, &out).ok());
    CHECK(out == *s);
    CHECK(GzipDecompress(zz, &out, s->size()).ok());
    CHECK(GzipDecompress(zz, &out, s->size() - 1).code() == Code::kTooLarge);
  }
  std::string wrong_size = GzipCompress(mixed);
  wrong_size[wrong_size.size() - 1] ^= 0x40;  // ISIZE no longer matches: zlib refuses it
  CHECK(GzipDecompress(wrong_size, &back).code() == Code::kInvalidArgument);
  CHECK(GzipDecompress("", &back).code() == Code::kInvalidArgument);
}

TEST_CASE("http date") {
  CHECK(HttpDate(784111777) == "Sun, 06 Nov 1994 08:49:37 GMT");
  CHECK(Iso8601Ms(784111777123) == "1994-11-06T08:49:37.123Z");
}

TEST_CASE("frontmatter dates: day, minute or second, read as UTC; anything else is 0") {
  CHECK(ParseDateMs("1994-11-06") == 784080000000);
  CHECK(ParseDateMs("1994-11-06T08:49") == 784111740000);
  CHECK(ParseDateMs("1994-11-06 08:49:37") == 784111777000);
  CHECK(ParseDateMs("1994-11-06T08:49:37Z") == 784111777000);
  CHECK(ParseDateMs("2024-02-29") == 1709164800000);  // a leap day
  CHECK(ParseDateMs("1970-01-01") == 0);
  for (const char* bad : {"", "yesterday", "2024-13-01", "2024-00-10", "2024-1-5", "24-01-05", "2024-01-05T25:00",
                          "2024-01-05T10", "1969-12-31"}) {
    CHECK_MESSAGE(ParseDateMs(bad) == 0, bad);
  }
}

TEST_CASE("ParseDate: a frontmatter date's parts, zones and fractions; the whole text or nothing") {
  auto p = ParseDate("2024-04-04T10:30:15.250+02:00");
  REQUIRE(p);
  CHECK(p->year == 2024);
  CHECK(p->month == 4);
  CHECK(p->day == 4);
  CHECK(p->hour == 10);
  CHECK(p->minute == 30);
  CHECK(p->second == 15);
  CHECK(p->fraction_ms == 250);
  CHECK(p->zone_minutes == 120);
  CHECK((p->has_time && p->has_seconds && p->has_fraction && p->has_zone));
  CHECK(p->time_at == 10);
  p = ParseDate("2024-04-04");
  REQUIRE(p);
  CHECK(!p->has_time);
  CHECK(!p->has_zone);
  p = ParseDate("2024-04-04 10:30-0530");
  REQUIRE(p);
  CHECK(p->zone_minutes == -330);
  CHECK(!p->has_seconds);
  CHECK(ParseDate("2024-04-04t10:30z"));
  CHECK(ParseDateMs("1994-11-06T08:49:37.5Z") == 784111777500);
  for (const char* bad : {"2023-02-29", "2024-04-31", "2024-04-04T10:30 +02:00", "2024-04-04T10:30:", "2024-04-04T10:30:15.",
                          "2024-04-04T10:30+2", "2024-04-04T10:30Zx", "2024-04-04x", " 2024-04-04", "2024-04-04T24:00"}) {
    CHECK_MESSAGE(!ParseDate(bad), bad);
  }
}

TEST_CASE("thread pool runs every item exactly once") {
  ThreadPool pool(2);
  for (size_t n : {0u, 1u, 2u, 3u, 1000u}) {
    std::vector<std::atomic<int>> hits(n);
    pool.ParallelFor(n, [&](size_t i) { hits[i]++; });
    for (auto& h : hits) CHECK(h.load() == 1);
  }
  std::atomic<int> ran{0};
  { ThreadPool p2(1); for (int i = 0; i < 10; ++i) p2.Submit([&] { ran++; }); }
  CHECK(ran.load() == 10);
}

TEST_CASE("ParallelChunks covers every item once, in contiguous chunks, on as many threads as asked") {
  for (size_t n : {0u, 1u, 2u, 3u, 7u, 1000u}) {
    for (size_t parts : {0u, 1u, 2u, 3u, 4u, 16u}) {
      std::vector<std::atomic<int>> hits(n);
      std::mutex mu;
      std::set<std::thread::id> threads;
      std::atomic<size_t> calls{0};
      ParallelChunks(n, parts, [&](size_t begin, size_t end) {
        CHECK(begin < end + (n == 0 ? 1 : 0));  // never an empty chunk but for n == 0
        for (size_t i = begin; i < end; ++i) hits[i]++;
        calls++;
        std::lock_guard<std::mutex> lock(mu);
        threads.insert(std::this_thread::get_id());
      });
      for (auto& h : hits) CHECK(h.load() == 1);
      size_t want = std::max<size_t>(1, std::min(n, parts));
      CHECK(calls.load() == want);
      CHECK(threads.size() == want);
    }
  }
}

TEST_CASE("service flags: --help exits 0, bad --listen exits 2, good ones go on") {
  {
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    ServiceBasics b;
    const char* argv[] = {"svc", "--listen", "[::1]:81", "--nats", "nats://x:1"};
    CHECK(ParseServiceFlags(&f, 5, argv, &b) == -1);
    CHECK(b.host == "::1");
    CHECK(b.port == 81);
    CHECK(b.nats_url == "nats://x:1");
    CHECK(!b.has_admin());
  }
  {
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    ServiceBasics b;
    const char* argv[] = {"svc", "--admin-listen", "127.0.0.1:0"};
    CHECK(ParseServiceFlags(&f, 3, argv, &b) == -1);
    CHECK(b.has_admin());
    CHECK(b.admin_host == "127.0.0.1");
    CHECK(b.admin_port == 0);
  }
  for (const char* bad : {"nope", "127.0.0.1:9"}) {  // not HOST:PORT; the --listen port
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    ServiceBasics b;
    const char* argv[] = {"svc", "--admin-listen", bad};
    CHECK(ParseServiceFlags(&f, 3, argv, &b) == 2);
  }
  {
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    ServiceBasics b;
    const char* argv[] = {"svc", "--listen", "nope"};
    CHECK(ParseServiceFlags(&f, 3, argv, &b) == 2);
  }
  {
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    ServiceBasics b;
    const char* argv[] = {"svc", "--log-format", "xml"};
    CHECK(ParseServiceFlags(&f, 3, argv, &b) == 2);
  }
  CHECK(AvailableCpus() >= 1);
}

TEST_CASE("service flags: --nats takes a list of servers; --nats-replicas 1..5; bad entries are usage errors") {
  std::vector<std::string> urls;
  REQUIRE(SplitNatsUrls("nats://a:4222, nats://b:4222 ,tls://u:p@c:1,d,[::1]:4222,nats://e", &urls).ok());
  CHECK(urls == std::vector<std::string>{"nats://a:4222", "nats://b:4222", "tls://u:p@c:1", "d", "[::1]:4222",
                                         "nats://e"});
  for (const char* bad : {"", "nats://a:4222,", ",nats://a:4222", "nats://a:4222,,nats://b:4222", "http://a:4222",
                          "nats://:4222", "nats://a:0", "nats://a:65536", "nats://a:x", "nats://a:", "nats://a:4222/x",
                          "nats://a b:4222", "::1:4222", "[::1", "nats://a:4222;nats://b:4222"}) {
    CAPTURE(bad);
    std::vector<std::string> out{"kept"};
    Status s = SplitNatsUrls(bad, &out);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("NATS server URL") != std::string::npos);
    CHECK(out == std::vector<std::string>{"kept"});
  }
  {
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    ServiceBasics b;
    const char* argv[] = {"svc", "--nats", "nats://a:1,nats://b:2", "--nats-replicas", "3"};
    CHECK(ParseServiceFlags(&f, 5, argv, &b) == -1);
    CHECK(b.nats_url == "nats://a:1,nats://b:2");
    CHECK(b.nats_replicas == 3);
  }
  {
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    ServiceBasics b;
    const char* argv[] = {"svc"};
    CHECK(ParseServiceFlags(&f, 1, argv, &b) == -1);
    CHECK(b.nats_replicas == 1);
  }
  for (const char* bad : {"0", "6", "-1", "three"}) {
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    ServiceBasics b;
    const char* argv[] = {"svc", "--nats-replicas", bad};
    CHECK(ParseServiceFlags(&f, 3, argv, &b) == 2);
  }
  {
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    ServiceBasics b;
    const char* argv[] = {"svc", "--nats", "nats://a:4222,nats//b:4222"};
    CHECK(ParseServiceFlags(&f, 3, argv, &b) == 2);
  }
}

TEST_CASE("service flags: --nats-user with its password from the flag, its file or FOLIO_NATS_PASSWORD; both or neither") {
  char tmpl[] = "/tmp/folio-core-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string file = dir + "/nats-password";
  REQUIRE(WriteSecretFile(file, "s3cret\n").ok());
  auto parse = [](std::vector<const char*> argv, ServiceBasics* b) {
    Flags f("svc", "s");
    AddServiceFlags(&f, "127.0.0.1:9");
    argv.insert(argv.begin(), "svc");
    return ParseServiceFlags(&f, static_cast<int>(argv.size()), argv.data(), b);
  };
  {
    ServiceBasics b;
    CHECK(parse({}, &b) == -1);
    CHECK(b.nats_user.empty());
    CHECK(b.nats_password.empty());
    CHECK(b.nats_ca.empty());
  }
  {
    ServiceBasics b;
    CHECK(parse({"--nats-user", "edge", "--nats-password-file", file.c_str(), "--nats-ca", "/ca.pem"}, &b) == -1);
    CHECK(b.nats_user == "edge");
    CHECK(b.nats_password == "s3cret");
    CHECK(b.nats_ca == "/ca.pem");
  }
  {
    ServiceBasics b;
    CHECK(parse({"--nats-user", "edge", "--nats-password", "pw"}, &b) == -1);
    CHECK(b.nats_password == "pw");
  }
  {
    setenv("FOLIO_NATS_USER", "search", 1);
    setenv("FOLIO_NATS_PASSWORD", "from-env", 1);
    ServiceBasics b;
    CHECK(parse({}, &b) == -1);
    CHECK(b.nats_user == "search");
    CHECK(b.nats_password == "from-env");
    unsetenv("FOLIO_NATS_USER");
    unsetenv("FOLIO_NATS_PASSWORD");
  }
  const std::string empty = dir + "/empty";
  REQUIRE(WriteSecretFile(empty, "\n").ok());
  const std::string missing = dir + "/missing";
  // A missing or empty file, both sources, or half of the pair: usage errors.
  for (std::vector<const char*> bad : std::vector<std::vector<const char*>>{
           {"--nats-user", "edge", "--nats-password-file", missing.c_str()},
           {"--nats-user", "edge", "--nats-password-file", empty.c_str()},
           {"--nats-user", "edge", "--nats-password", "pw", "--nats-password-file", file.c_str()},
           {"--nats-user", "edge"},
           {"--nats-password", "pw"}}) {
    ServiceBasics b;
    CHECK(parse(bad, &b) == 2);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("secrets: constant-time compare, random hex, token files created once with mode 0600") {
  CHECK(SameSecret("abc", "abc"));
  CHECK_FALSE(SameSecret("abd", "abc"));
  CHECK_FALSE(SameSecret("ab", "abc"));
  CHECK_FALSE(SameSecret("abcd", "abc"));
  CHECK_FALSE(SameSecret("", ""));  // an unset secret matches nothing
  auto a = RandomHex(24), b = RandomHex(24);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->size() == 48);
  CHECK(IsLowerHex(*a));
  CHECK(*a != *b);
  CHECK(CodeName(Code::kNoSpace) == "no_space");

  char tmpl[] = "/tmp/folio-core-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string dir = tmpl;
  std::string path = dir + "/token";
  bool created = false;
  auto first = ReadOrCreateSecretFile(path, 16, &created);
  REQUIRE(first.ok());
  CHECK(created);
  CHECK(first->size() == 32);
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto again = ReadOrCreateSecretFile(path, 16, &created);
  REQUIRE(again.ok());
  CHECK_FALSE(created);
  CHECK(*again == *first);
  CHECK(ReadSecretFile(path).value() == *first);
  CHECK(ReadSecretFile(dir + "/missing").status().code() == Code::kNotFound);
  // Written whole, 0600, replacing what was there.
  REQUIRE(WriteSecretFile(path, "replaced\n").ok());
  CHECK(ReadSecretFile(path).value() == "replaced");
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // --x or --x-file (or FOLIO_X): the secret, "" if neither, an error if both.
  auto parse = [](std::vector<const char*> argv) {
    Flags f("svc", "s");
    AddSecretFlags(&f, "storage-token", "a token");
    argv.insert(argv.begin(), "svc");
    REQUIRE(f.Parse(static_cast<int>(argv.size()), argv.data()).ok());
    return SecretFromFlags(f, "storage-token");
  };
  CHECK(parse({}).value().empty());
  CHECK(parse({"--storage-token", "abc"}).value() == "abc");
  CHECK(parse({"--storage-token-file", path.c_str()}).value() == "replaced");
  CHECK(parse({"--storage-token", "abc", "--storage-token-file", path.c_str()}).status().code() ==
        Code::kInvalidArgument);
  auto missing_file = parse({"--storage-token-file", "/nonexistent/token"});
  CHECK(missing_file.status().code() == Code::kInvalidArgument);
  CHECK(missing_file.status().message().find("--storage-token-file") != std::string::npos);
  unlink(path.c_str());
  rmdir(dir.c_str());
  CHECK(HmacSha256Hex("key", "The quick brown fox jumps over the lazy dog") ==
        "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
}

TEST_CASE("secrets: the temp file is never written through a planted link") {
  char tmpl[] = "/tmp/folio-core-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl, path = dir + "/token", outside = dir + "/outside";
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  { FILE* f = fopen(outside.c_str(), "w"); fputs("not yours\n", f); fclose(f); }
  REQUIRE(symlink(outside.c_str(), tmp.c_str()) == 0);
  REQUIRE(WriteSecretFile(path, "the secret\n").ok());
  CHECK(ReadSecretFile(outside).value() == "not yours");
  CHECK(ReadSecretFile(path).value() == "the secret");
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(lstat(tmp.c_str(), &st) != 0);  // nothing left behind
  // A stale temp file (a crash) is replaced too.
  { FILE* f = fopen(tmp.c_str(), "w"); fputs("stale", f); fclose(f); }
  REQUIRE(WriteSecretFile(path, "newer\n").ok());
  CHECK(ReadSecretFile(path).value() == "newer");
  unlink(path.c_str());
  unlink(outside.c_str());
  rmdir(dir.c_str());
}

TEST_CASE("secrets: an existing secret file others may read is made 0600 when read") {
  char tmpl[] = "/tmp/folio-core-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl, path = dir + "/token";
  { FILE* f = fopen(path.c_str(), "w"); fputs("old-token\n", f); fclose(f); }
  REQUIRE(chmod(path.c_str(), 0644) == 0);  // as older versions wrote it
  bool created = true;
  auto token = ReadOrCreateSecretFile(path, 16, &created);
  REQUIRE(token.ok());
  CHECK(*token == "old-token");
  CHECK_FALSE(created);
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // A private one is left as it is (0400 stays 0400).
  REQUIRE(chmod(path.c_str(), 0400) == 0);
  REQUIRE(ReadOrCreateSecretFile(path, 16, &created).ok());
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0400);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST_CASE("disk space: available bytes, and a disk-full mark that clears when space returns") {
  const std::string dir = "/tmp";
  auto free = AvailableBytes(dir);
  REQUIRE(free.ok());
  CHECK(*free > 0);
  CHECK(AvailableBytes("/nonexistent-folio-dir/x").status().code() == Code::kUnavailable);
  auto usage = DiskUsageOf(dir);
  REQUIRE(usage.ok());
  CHECK(usage->size_bytes > 0);
  CHECK(usage->available_bytes <= usage->size_bytes);
  CHECK(DiskUsageOf("/nonexistent-folio-dir/x").status().code() == Code::kUnavailable);
  CHECK(CodeName(Code::kDataLoss) == "data_loss");

  DiskFull roomy(dir, "test", /*resume_bytes=*/1);
  CHECK(!roomy.full());
  CHECK(!roomy.Recheck());
  roomy.Observe(Status::Unavailable("an I/O error is not a full disk"));
  CHECK(!roomy.full());
  roomy.Observe(Status::NoSpace("injected"));
  CHECK(roomy.full());
  CHECK(!roomy.Recheck());  // at least 1 byte is free: writes resume
  CHECK(!roomy.full());

  // Needs more than any disk has: only a successful write clears the mark.
  DiskFull greedy(dir, "test", UINT64_MAX);
  greedy.Observe(Status::NoSpace("injected"));
  CHECK(greedy.Recheck());
  CHECK(greedy.full());
  greedy.Observe(Status::Ok());
  CHECK(!greedy.full());
}

TEST_CASE("LockServiceData: creates the folder, one holder at a time, the refusal names the service") {
  char tmpl[] = "/tmp/folio-core-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string data = std::string(tmpl) + "/nested/data";
  {
    auto first = LockServiceData(data, "svc.lock", "folio-x");
    REQUIRE(first.ok());
    struct stat st {};
    CHECK(stat((data + "/svc.lock").c_str(), &st) == 0);
    auto second = LockServiceData(data, "svc.lock", "folio-x");
    REQUIRE(!second.ok());
    CHECK(second.status().message().find("another folio-x uses this --data; stop it first") != std::string::npos);
  }
  CHECK(LockServiceData(data, "svc.lock", "folio-x").ok());  // released with the first
  std::filesystem::remove_all(tmpl);
}

TEST_CASE("memory: ReleaseFreeHeap gives a burst's freed heap back to the kernel") {
  uint64_t start = ResidentBytes();
  REQUIRE(start > 0);
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
  // The sanitizer's allocator is not glibc's: nothing to trim.
  ReleaseFreeHeap();
#else
  // A burst of 256 MiB in small blocks, as rendering a vault's pages makes,
  // with a block kept after them so that free() cannot shrink the heap's top.
  constexpr size_t kBlock = 4000, kBlocks = (256u << 20) / kBlock;
  std::vector<std::unique_ptr<char[]>> burst(kBlocks);
  for (auto& b : burst) {
    b.reset(new char[kBlock]);
    std::memset(b.get(), 1, kBlock);
  }
  auto keep = std::make_unique<char[]>(kBlock);
  std::memset(keep.get(), 2, kBlock);
  uint64_t peak = ResidentBytes();
  CHECK(peak > start + (200u << 20));
  burst.clear();
  burst.shrink_to_fit();
  uint64_t freed = ResidentBytes();
  CHECK(freed > start + (200u << 20));  // glibc kept it: this is what ReleaseFreeHeap is for
  ReleaseFreeHeap();
  uint64_t released = ResidentBytes();
  CHECK(released + (200u << 20) < freed);
  CHECK(keep[0] == 2);
#endif
}

TEST_CASE("memory: HeapInUseBytes counts live allocations, not freed ones") {
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
  CHECK(HeapInUseBytes() == HeapInUseBytes());  // the sanitizer's allocator: not glibc's, nothing to read
#else
  uint64_t start = HeapInUseBytes();
  REQUIRE(start > 0);
  constexpr size_t kBlock = 4000, kBlocks = (64u << 20) / kBlock;
  std::vector<std::unique_ptr<char[]>> live(kBlocks);
  for (auto& b : live) b.reset(new char[kBlock]);
  uint64_t held = HeapInUseBytes();
  CHECK(held >= start + (60u << 20));
  live.clear();
  live.shrink_to_fit();
  CHECK(HeapInUseBytes() + (60u << 20) <= held);
#endif
}

TEST_CASE("memory: KeepLargeBuffersResident serves a MiB from the heap and keeps it resident once freed") {
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
  KeepLargeBuffersResident(size_t{4} << 20);  // a no-op under the sanitizer's allocator
  CHECK(true);
#else
  KeepLargeBuffersResident(size_t{4} << 20);
  constexpr size_t kMiB = size_t{1} << 20;
  const size_t maps = mallinfo2().hblks;
  auto a = std::make_unique<char[]>(kMiB);
  memset(a.get(), 1, kMiB);
  CHECK(mallinfo2().hblks == maps);  // not a mapping of its own (glibc's default above 128 KiB)
  a.reset();
  const uint64_t rss = ResidentBytes();
  auto b = std::make_unique<char[]>(kMiB);
  memset(b.get(), 2, kMiB);
  CHECK(ResidentBytes() < rss + kMiB / 2);  // the freed pages were kept and reused, not faulted in again
#endif
}

TEST_CASE("Utf8Lower: ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic, Armenian; malformed bytes kept") {
  CHECK(folio::Utf8Lower("Guide") == "guide");
  CHECK(folio::Utf8Lower("ГАЙД Ёж") == "гайд ёж");
  CHECK(folio::Utf8Lower("ÉCOLE Ÿ") == "école ÿ");
  CHECK(folio::Utf8Lower("ŁÓDŹ Ő") == "łódź ő");
  CHECK(folio::Utf8Lower("ΕΛΛΗΝΙΚΆ Ώ") == "ελληνικά ώ");
  CHECK(folio::Utf8Lower("ԱԲ") == "աբ");
  CHECK(folio::Utf8Lower("日本語 ß ×") == "日本語 ß ×");
  CHECK(folio::Utf8Lower(std::string("A\xFFZ")) == std::string("a\xFFz"));
}
