// Tests of HttpEmbedder against a real HTTP server (EmbeddingTestServer,
// libs/testing) on a loopback port, and of its wire helpers.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "folio/core/text.h"
#include "folio/http/client.h"
#include "folio/testing/embedding_server.h"
#include "folio/testing/testing.h"
#include "folio/vector/embedder.h"
#include "folio/vector/http_embedder.h"
#include "http_embedder_internal.h"

using folio::Code;
using folio::Status;
using folio::testing::EmbeddingTestServer;
using namespace folio::vector;

namespace {

HttpEmbedderOptions Options(const EmbeddingTestServer& server, size_t dim) {
  HttpEmbedderOptions o;
  o.url = server.url();
  o.model = "test-model";
  o.dim = dim;
  o.initial_backoff_ms = 1;  // keep retry tests fast
  o.max_backoff_ms = 2;
  o.timeout_ms = 5000;
  return o;
}

std::unique_ptr<HttpEmbedder> Make(const HttpEmbedderOptions& o) {
  auto e = HttpEmbedder::Create(o);
  REQUIRE_MESSAGE(e.ok(), e.status().ToString());
  return std::move(e).value();
}

std::vector<float> Hashed(size_t dim, std::string_view text) {
  HashedEmbedder h(dim);
  std::vector<float> v;
  REQUIRE(h.EmbedOne(text, &v).ok());
  return v;
}

double Norm(const std::vector<float>& v) {
  double n = 0;
  for (float x : v) n += static_cast<double>(x) * x;
  return std::sqrt(n);
}

void CheckNear(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  CHECK(worst < 1e-6f);
}

bool Contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("http embedder: round trip gives HashedEmbedder's vectors, normalised") {
  EmbeddingTestServer server(64);
  auto e = Make(Options(server, 64));
  CHECK(e->dim() == 64);
  CHECK(e->Describe() == "openai:test-model@" + server.url());
  CHECK(HashedEmbedder(384).Describe() == "hashed-384");

  std::vector<std::string_view> texts = {"the quick brown fox", "東京の天気", "", "Ünïcödé wörds"};
  std::vector<std::vector<float>> out;
  REQUIRE(e->Embed(texts, &out).ok());
  REQUIRE(out.size() == 4);
  for (size_t i : {0u, 1u, 3u}) {
    CheckNear(out[i], Hashed(64, texts[i]));
    CHECK(std::fabs(Norm(out[i]) - 1.0) < 1e-6);
  }
  CHECK(out[2] == std::vector<float>(64, 0.0f));  // empty text: zero vector, not sent
  CHECK(server.requests() == 1);
  CHECK(server.batch_sizes() == std::vector<size_t>{3});
  CHECK(server.models() == std::vector<std::string>{"test-model"});
  CHECK(server.inputs() == std::vector<std::string>{"the quick brown fox", "東京の天気", "Ünïcödé wörds"});
  CHECK(server.authorizations() == std::vector<std::string>{""});  // no key, no header

  // Nothing to send: no request.
  std::vector<std::string_view> empties = {"", ""};
  REQUIRE(e->Embed(empties, &out).ok());
  CHECK(out.size() == 2);
  REQUIRE(e->Embed({}, &out).ok());
  CHECK(out.empty());
  CHECK(server.requests() == 1);

  EmbedderHealth h = e->health();
  CHECK(h.ok);
  CHECK(h.requests == 1);
  CHECK(h.failures == 0);
  CHECK(h.retries == 0);
  CHECK(h.last_error.empty());
}

TEST_CASE("http embedder: batches of batch_size, order kept") {
  EmbeddingTestServer server(32);
  auto e = Make(Options(server, 32));  // batch_size 64 by default
  std::vector<std::string> owned;
  for (int i = 0; i < 150; ++i) owned.push_back("note number " + std::to_string(i) + " about topic " + std::to_string(i % 7));
  std::vector<std::string_view> texts(owned.begin(), owned.end());
  std::vector<std::vector<float>> out;
  REQUIRE(e->Embed(texts, &out).ok());
  CHECK(server.requests() == 3);
  CHECK(server.batch_sizes() == std::vector<size_t>{64, 64, 22});
  CHECK(server.inputs() == owned);
  REQUIRE(out.size() == 150);
  for (size_t i : {0u, 63u, 64u, 127u, 128u, 149u}) CheckNear(out[i], Hashed(32, texts[i]));
  CHECK(e->health().requests == 3);
}

TEST_CASE("http embedder: Authorization header carries the API key") {
  EmbeddingTestServer server(16);
  HttpEmbedderOptions o = Options(server, 16);
  o.api_key = "sk-test-123";
  o.batch_size = 2;
  auto e = Make(o);
  std::vector<std::string_view> texts = {"a", "b", "c"};
  std::vector<std::vector<float>> out;
  REQUIRE(e->Embed(texts, &out).ok());
  CHECK(server.authorizations() == std::vector<std::string>{"Bearer sk-test-123", "Bearer sk-test-123"});
  CHECK(!Contains(e->Describe(), "sk-test"));

  // Credentials in the URL stay out of Describe and error messages.
  HttpEmbedderOptions creds = o;
  creds.url = "http://user:secret@127.0.0.1:" + std::to_string(folio::testing::FreePort()) + "/v1/embeddings";
  creds.max_attempts = 1;
  auto c = Make(creds);
  CHECK(Contains(c->Describe(), "@http://127.0.0.1:"));
  CHECK(!Contains(c->Describe(), "secret"));
  Status st = c->Embed(texts, &out);
  CHECK(st.code() == Code::kUnavailable);
  CHECK(!Contains(st.message(), "secret"));
  CHECK(!Contains(c->health().last_error, "secret"));
}

TEST_CASE("http embedder: retries 503 and 429, then succeeds") {
  EmbeddingTestServer server(16);
  auto e = Make(Options(server, 16));  // max_attempts 4
  std::vector<std::string_view> texts = {"retry me"};
  std::vector<std::vector<float>> out;

  server.FailNext(2, 503);
  REQUIRE(e->Embed(texts, &out).ok());
  CheckNear(out[0], Hashed(16, "retry me"));
  CHECK(server.requests() == 3);
  EmbedderHealth h = e->health();
  CHECK(h.ok);
  CHECK(h.requests == 3);
  CHECK(h.failures == 2);
  CHECK(h.retries == 2);
  CHECK(Contains(h.last_error, "HTTP 503"));
  CHECK(h.last_error_unix_ms > 0);

  server.FailNext(1, 429);
  REQUIRE(e->Embed(texts, &out).ok());
  CHECK(server.requests() == 5);
  CHECK(Contains(e->health().last_error, "HTTP 429"));
}

TEST_CASE("http embedder: backoff doubles with jitter in [d/2, d]") {
  EmbeddingTestServer server(16);
  HttpEmbedderOptions o = Options(server, 16);
  o.initial_backoff_ms = 40;
  o.max_backoff_ms = 5000;
  auto e = Make(o);
  server.FailNext(2, 500);
  std::vector<std::string_view> texts = {"slow"};
  std::vector<std::vector<float>> out;
  auto start = std::chrono::steady_clock::now();
  REQUIRE(e->Embed(texts, &out).ok());
  auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed >= std::chrono::milliseconds(20 + 40));  // >= 40/2 + 80/2
  CHECK(server.requests() == 3);
}

TEST_CASE("http embedder: 400 is not retried and keeps health ok") {
  EmbeddingTestServer server(16);
  auto e = Make(Options(server, 16));
  server.SetFailing(400);
  std::vector<std::string_view> texts = {"x"};
  std::vector<std::vector<float>> out;
  Status st = e->Embed(texts, &out);
  CHECK(st.code() == Code::kInvalidArgument);
  CHECK(Contains(st.message(), "HTTP 400"));
  CHECK(Contains(st.message(), "injected failure"));  // a prefix of the body
  CHECK(Contains(st.message(), server.url()));
  CHECK(server.requests() == 1);
  EmbedderHealth h = e->health();
  CHECK(h.ok);
  CHECK(h.failures == 1);
  CHECK(h.retries == 0);
}

TEST_CASE("http embedder: 401 is not retried and makes health not ok") {
  EmbeddingTestServer server(16);
  auto e = Make(Options(server, 16));
  server.SetFailing(401);
  std::vector<std::string_view> texts = {"x"};
  std::vector<std::vector<float>> out;
  Status st = e->Embed(texts, &out);
  CHECK(st.code() == Code::kUnavailable);
  CHECK(Contains(st.message(), "HTTP 401"));
  CHECK(server.requests() == 1);
  CHECK(!e->health().ok);
}

TEST_CASE("http embedder: persistent 503 gives kUnavailable; health recovers") {
  EmbeddingTestServer server(16);
  HttpEmbedderOptions o = Options(server, 16);
  o.max_attempts = 2;
  auto e = Make(o);
  server.SetFailing(503);
  std::vector<std::string_view> texts = {"a", "b"};
  std::vector<std::vector<float>> out;
  Status st = e->Embed(texts, &out);
  CHECK(st.code() == Code::kUnavailable);
  CHECK(Contains(st.message(), server.url()));
  CHECK(Contains(st.message(), "2 attempt(s) failed"));
  CHECK(Contains(st.message(), "HTTP 503"));
  CHECK(server.requests() == 2);
  EmbedderHealth h = e->health();
  CHECK(!h.ok);
  CHECK(Contains(h.last_error, "HTTP 503"));
  CHECK(h.last_error_unix_ms > 0);
  CHECK(h.requests == 2);
  CHECK(h.failures == 2);
  CHECK(h.retries == 1);

  server.SetFailing(0);
  REQUIRE(e->Embed(texts, &out).ok());
  h = e->health();
  CHECK(h.ok);
  CHECK(Contains(h.last_error, "HTTP 503"));  // kept after recovery
  CHECK(h.requests == 3);
}

TEST_CASE("http embedder: connection refused and timeouts are retried, then kUnavailable") {
  std::vector<std::string_view> texts = {"a"};
  std::vector<std::vector<float>> out;
  {
    HttpEmbedderOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(folio::testing::FreePort()) + "/v1/embeddings";
    o.dim = 8;
    o.max_attempts = 3;
    o.initial_backoff_ms = 1;
    auto e = Make(o);
    Status st = e->Embed(texts, &out);
    CHECK(st.code() == Code::kUnavailable);
    CHECK(Contains(st.message(), o.url));
    CHECK(Contains(st.message(), "3 attempt(s) failed"));
    CHECK(e->health().requests == 3);
    CHECK(!e->health().ok);
  }
  {
    EmbeddingTestServer server(8);
    HttpEmbedderOptions o = Options(server, 8);
    o.max_attempts = 2;
    o.timeout_ms = 100;
    auto e = Make(o);
    server.SetDelayMs(500);
    Status st = e->Embed(texts, &out);
    CHECK(st.code() == Code::kUnavailable);
    CHECK(server.requests() == 2);
    server.SetDelayMs(0);
    REQUIRE(e->Embed(texts, &out).ok());
    CHECK(e->health().ok);
  }
}

TEST_CASE("http embedder: dim mismatch is kInternal and not retried") {
  EmbeddingTestServer server(32);
  auto e = Make(Options(server, 16));
  std::vector<std::string_view> texts = {"a"};
  std::vector<std::vector<float>> out;
  Status st = e->Embed(texts, &out);
  CHECK(st.code() == Code::kInternal);
  CHECK(Contains(st.message(), "dim mismatch"));
  CHECK(Contains(st.message(), "returned 32-dim"));
  CHECK(Contains(st.message(), "configured dim is 16"));
  CHECK(server.requests() == 1);
  CHECK(!e->health().ok);
}

TEST_CASE("http embedder: malformed answers are kInternal") {
  EmbeddingTestServer server(4);
  auto e = Make(Options(server, 4));
  std::vector<std::string_view> two = {"first", "second"};
  std::vector<std::vector<float>> out;

  server.SetRawResponse("<html>oops</html>");
  Status st = e->Embed(two, &out);
  CHECK(st.code() == Code::kInternal);
  CHECK(Contains(st.message(), "not JSON"));
  server.SetRawResponse(R"({"data":[{"index":0,"embedding":[1,0,0,0]}]})");
  st = e->Embed(two, &out);
  CHECK(st.code() == Code::kInternal);
  CHECK(Contains(st.message(), "1 embeddings for 2 inputs"));
  CHECK(server.requests() == 2);  // neither retried

  // Out of order by index: sorted back; values normalised.
  server.SetRawResponse(R"({"data":[{"index":1,"embedding":[0,0,3,4]},{"index":0,"embedding":[2,0,0,0]}]})");
  REQUIRE(e->Embed(two, &out).ok());
  CHECK(out[0] == std::vector<float>{1, 0, 0, 0});
  CHECK(std::fabs(out[1][2] - 0.6f) < 1e-7f);
  CHECK(std::fabs(out[1][3] - 0.8f) < 1e-7f);
}

TEST_CASE("http embedder wire: ParseEmbeddingResponse rejects bad shapes") {
  std::vector<std::vector<float>> out;
  auto parse = [&](std::string_view body, size_t n = 2, size_t dim = 2) {
    return ParseEmbeddingResponse(body, n, dim, &out);
  };
  CHECK(parse(R"({"data":[{"embedding":[1,0]},{"embedding":[0,0]}]})").ok());  // index defaults to position
  CHECK(out[0] == std::vector<float>{1, 0});
  CHECK(out[1] == std::vector<float>{0, 0});  // zero stays zero
  CHECK(parse(R"({"data":[{"embedding":[-1e-3,2.5e1]},{"embedding":[7,-7]}]})").ok());
  CHECK(std::fabs(Norm(out[1]) - 1.0) < 1e-6);

  struct Case {
    const char* body;
    const char* want;
  };
  for (const Case& c : {
           Case{"", "not JSON"},
           Case{R"({"object":"list"})", "no \"data\" array"},
           Case{R"({"data":{}})", "no \"data\" array"},
           Case{R"({"data":[1,2]})", "is not an object"},
           Case{R"({"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[1,0]}]})", "repeated"},
           Case{R"({"data":[{"index":0,"embedding":[1,0]},{"index":2,"embedding":[1,0]}]})", "out of range"},
           Case{R"({"data":[{"index":-1,"embedding":[1,0]},{"index":1,"embedding":[1,0]}]})", "non-integer"},
           Case{R"({"data":[{"index":0,"embedding":"AAAA"},{"index":1,"embedding":[1,0]}]})", "no \"embedding\" array"},
           Case{R"({"data":[{"index":0,"embedding":[1,"x"]},{"index":1,"embedding":[1,0]}]})", "non-numeric"},
           Case{R"({"data":[{"index":0,"embedding":[1,1e300]},{"index":1,"embedding":[1,0]}]})", "non-finite"},
           Case{R"({"data":[{"index":0,"embedding":[1,0,0]},{"index":1,"embedding":[1,0,0]}]})", "dim mismatch"},
       }) {
    CAPTURE(c.body);
    Status st = parse(c.body);
    CHECK(st.code() == Code::kInternal);
    CHECK(Contains(st.message(), c.want));
  }
}

TEST_CASE("http embedder: long inputs are cut at a UTF-8 boundary") {
  EmbeddingTestServer server(16);
  HttpEmbedderOptions o = Options(server, 16);
  o.max_input_bytes = 101;
  auto e = Make(o);
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "é";  // 200 bytes
  std::vector<std::string_view> texts = {accents, "short"};
  std::vector<std::vector<float>> out;
  REQUIRE(e->Embed(texts, &out).ok());
  std::vector<std::string> seen = server.inputs();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].size() == 100);  // 101 would split an 'é'
  CHECK(folio::IsValidUtf8(seen[0]));
  CHECK(seen[0] == accents.substr(0, 100));
  CHECK(seen[1] == "short");
  CheckNear(out[0], Hashed(16, accents.substr(0, 100)));

  // The default cap is 32 KiB.
  server.ClearRecords();
  auto d = Make(Options(server, 16));
  std::string big(40000, 'a');
  texts = {big};
  REQUIRE(d->Embed(texts, &out).ok());
  REQUIRE(server.inputs().size() == 1);
  CHECK(server.inputs()[0].size() == 32 * 1024);

  CHECK(TruncateUtf8("a😀b", 4) == "a");
  CHECK(TruncateUtf8("a😀b", 5) == "a😀");
  CHECK(TruncateUtf8("abc", 3) == "abc");
  CHECK(TruncateUtf8("abc", 0) == "");
}

TEST_CASE("http embedder: invalid UTF-8 is rejected before any request") {
  EmbeddingTestServer server(16);
  auto e = Make(Options(server, 16));
  std::vector<std::string_view> texts = {"fine", "bad \xff byte"};
  std::vector<std::vector<float>> out;
  Status st = e->Embed(texts, &out);
  CHECK(st.code() == Code::kInvalidArgument);
  CHECK(Contains(st.message(), "text 1"));
  CHECK(server.requests() == 0);
  CHECK(e->health().requests == 0);
  CHECK(e->health().ok);
}

TEST_CASE("http embedder: Create validates options") {
  HttpEmbedderOptions good;
  good.url = "http://127.0.0.1:1/v1/embeddings";
  good.dim = 8;
  CHECK(HttpEmbedder::Create(good).ok());
  auto bad = [&](auto mutate, std::string_view field) {
    HttpEmbedderOptions o = good;
    mutate(o);
    auto r = HttpEmbedder::Create(o);
    CAPTURE(field);
    REQUIRE(!r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(Contains(r.status().message(), field));
  };
  bad([](HttpEmbedderOptions& o) { o.url = "ftp://x/"; }, "url");
  bad([](HttpEmbedderOptions& o) { o.url = ""; }, "url");
  bad([](HttpEmbedderOptions& o) { o.dim = 0; }, "dim");
  bad([](HttpEmbedderOptions& o) { o.api_key = "a\r\nX-Evil: 1"; }, "api_key");
  bad([](HttpEmbedderOptions& o) { o.batch_size = 0; }, "batch_size");
  bad([](HttpEmbedderOptions& o) { o.max_attempts = 0; }, "max_attempts");
  bad([](HttpEmbedderOptions& o) { o.initial_backoff_ms = -1; }, "initial_backoff_ms");
  bad([](HttpEmbedderOptions& o) { o.max_backoff_ms = 100; o.initial_backoff_ms = 200; }, "max_backoff_ms");
  bad([](HttpEmbedderOptions& o) { o.timeout_ms = 0; }, "timeout_ms");
  bad([](HttpEmbedderOptions& o) { o.max_input_bytes = 3; }, "max_input_bytes");
}

TEST_CASE("http embedder: Embed from several threads at once") {
  EmbeddingTestServer server(16);
  HttpEmbedderOptions o = Options(server, 16);
  o.batch_size = 3;
  auto e = Make(o);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::string a = "thread " + std::to_string(t), b = "more words", c = "x y z", d = "tail";
      std::vector<std::string_view> texts = {a, b, c, d};
      std::vector<std::vector<float>> out;
      for (int i = 0; i < 5; ++i) {
        if (!e->Embed(texts, &out).ok() || out.size() != 4 || out[0] != Hashed(16, a)) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  CHECK(server.requests() == 4 * 5 * 2);
  CHECK(e->health().requests == 4 * 5 * 2);
}

TEST_CASE("embedding test server: OpenAI request forms and errors") {
  EmbeddingTestServer server(8);
  auto post = [&](std::string body) {
    folio::http::ClientRequest req;
    req.method = "POST";
    req.url = server.url();
    req.headers = {{"Content-Type", "application/json"}};
    req.body = std::move(body);
    auto r = folio::http::Fetch(req);
    REQUIRE(r.ok());
    return std::move(r).value();
  };
  auto one = post(R"({"model":"m","input":"hello"})");
  CHECK(one.status == 200);
  CHECK(Contains(one.body, R"("index":0)"));
  CHECK(Contains(one.body, R"("model":"m")"));
  CHECK(post(R"({"input":[1,2]})").status == 400);
  CHECK(post(R"({"input":[""]})").status == 400);
  CHECK(post(R"({"input":[]})").status == 400);
  CHECK(post("not json").status == 400);
  CHECK(server.requests() == 5);
  CHECK(server.batch_sizes() == std::vector<size_t>{1, 0, 0, 0, 0});
  CHECK(folio::http::Get(server.url()).value().status == 405);

  server.FailNext(1, 502);
  auto failed = post(R"({"input":["a"]})");
  CHECK(failed.status == 502);
  CHECK(Contains(failed.body, "server_error"));
  CHECK(post(R"({"input":["a"]})").status == 200);
}

TEST_CASE("http embedder wire: BodyPrefix is short and printable") {
  CHECK(BodyPrefix("short") == "short");
  CHECK(BodyPrefix("a\nb\x01\xff" "c") == "a b  c");
  CHECK(BodyPrefix(std::string(300, 'x'), 10) == std::string(10, 'x') + "...");
  CHECK(BodyPrefix("ééé", 5) == "éé...");
}
