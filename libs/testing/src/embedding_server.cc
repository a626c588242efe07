// EmbeddingTestServer: an OpenAI-style embeddings endpoint on a Loop thread.
#include "folio/testing/embedding_server.h"

#include <simdjson.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>

#include "folio/core/json.h"
#include "folio/core/status.h"
#include "folio/http/loop.h"
#include "folio/http/server.h"
#include "folio/vector/embedder.h"

namespace folio::testing {

namespace {

constexpr char kPath[] = "/v1/embeddings";

std::string OpenAiError(int status, std::string_view message) {
  JsonWriter w;
  w.BeginObject().Key("error").BeginObject();
  w.Key("message").String(message);
  w.Key("type").String(status >= 500 ? "server_error" : "invalid_request_error");
  w.Key("param").Null().Key("code").Int(status);
  w.EndObject().EndObject();
  return w.Take();
}

struct EmbeddingRequest {
  std::string model;
  std::vector<std::string> inputs;
};

Status ParseRequest(simdjson::dom::parser& parser, std::string_view body, EmbeddingRequest* out) {
  simdjson::dom::element root;
  simdjson::dom::object obj;
  if (parser.parse(body.data(), body.size()).get(root) || root.get_object().get(obj)) {
    return Status::Invalid("body is not a JSON object");
  }
  std::string_view model;
  if (!obj["model"].get_string().get(model)) out->model = model;
  simdjson::dom::element input;
  if (obj["input"].get(input)) return Status::Invalid("'input' is required");
  std::string_view one;
  simdjson::dom::array many;
  if (!input.get_string().get(one)) {
    out->inputs.emplace_back(one);
  } else if (!input.get_array().get(many)) {
    for (simdjson::dom::element e : many) {
      if (e.get_string().get(one)) return Status::Invalid("'input' items must be strings");
      out->inputs.emplace_back(one);
    }
  } else {
    return Status::Invalid("'input' must be a string or an array of strings");
  }
  if (out->inputs.empty()) return Status::Invalid("'input' must not be empty");
  for (const std::string& s : out->inputs) {
    if (s.empty()) return Status::Invalid("'input' items must not be empty strings");
  }
  return Status::Ok();
}

// Floats are widened to double (exact) and printed shortest-round-trip, so
// the client parses back the very float HashedEmbedder produced.
void AppendFloat(float f, std::string* out) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<double>(f));
  out->append(buf, ec == std::errc() ? end : buf);
}

std::string RenderAnswer(const std::string& model, const std::vector<std::vector<float>>& vectors,
                         size_t tokens) {
  std::string out = R"({"object":"list","data":[)";
  for (size_t i = 0; i < vectors.size(); ++i) {
    if (i > 0) out += ',';
    out += R"({"object":"embedding","index":)" + std::to_string(i) + R"(,"embedding":[)";
    for (size_t j = 0; j < vectors[i].size(); ++j) {
      if (j > 0) out += ',';
      AppendFloat(vectors[i][j], &out);
    }
    out += "]}";
  }
  out += R"(],"model":)";
  AppendJsonString(model, &out);
  out += R"(,"usage":{"prompt_tokens":)" + std::to_string(tokens) +
         R"(,"total_tokens":)" + std::to_string(tokens) + "}}";
  return out;
}

}  // namespace

struct EmbeddingTestServer::Impl {
  explicit Impl(size_t d) : dim(d), embedder(d) {}

  void OnEmbeddings(const http::Request& req, http::Responder r);
  http::Response Answer(const Status& parsed, const EmbeddingRequest& er, int inject,
                        const std::string& raw);

  const size_t dim;
  vector::HashedEmbedder embedder;  // loop thread only
  simdjson::dom::parser parser;     // loop thread only
  http::Loop loop;
  http::Router router;
  std::unique_ptr<http::Server> server;
  std::thread thread;
  int port = 0;

  mutable std::mutex mu;
  int failing = 0;                          // GUARDED_BY(mu)
  int fail_next = 0;                        // GUARDED_BY(mu)
  int fail_next_status = 0;                 // GUARDED_BY(mu)
  int64_t delay_ms = 0;                     // GUARDED_BY(mu)
  std::string raw_response;                 // GUARDED_BY(mu)
  uint64_t requests = 0;                    // GUARDED_BY(mu)
  std::vector<size_t> batch_sizes;          // GUARDED_BY(mu)
  std::vector<std::string> models;          // GUARDED_BY(mu)
  std::vector<std::string> authorizations;  // GUARDED_BY(mu)
  std::vector<std::string> inputs;          // GUARDED_BY(mu)
};

void EmbeddingTestServer::Impl::OnEmbeddings(const http::Request& req, http::Responder r) {
  EmbeddingRequest er;
  Status parsed = ParseRequest(parser, req.body, &er);
  int inject = 0;
  int64_t delay = 0;
  std::string raw;
  {
    std::lock_guard<std::mutex> lock(mu);
    ++requests;
    batch_sizes.push_back(parsed.ok() ? er.inputs.size() : 0);
    models.push_back(er.model);
    authorizations.emplace_back(req.GetHeader("Authorization"));
    inputs.insert(inputs.end(), er.inputs.begin(), er.inputs.end());
    if (failing != 0) {
      inject = failing;
    } else if (fail_next > 0) {
      --fail_next;
      inject = fail_next_status;
    }
    delay = delay_ms;
    raw = raw_response;
  }
  http::Response resp = Answer(parsed, er, inject, raw);
  if (delay <= 0) {
    r.Send(std::move(resp));
    return;
  }
  // Loop callbacks are copyable std::functions; the move-only pieces ride in shared_ptrs.
  auto responder = std::make_shared<http::Responder>(std::move(r));
  auto answer = std::make_shared<http::Response>(std::move(resp));
  loop.After(static_cast<uint64_t>(delay), [responder, answer] { responder->Send(std::move(*answer)); });
}

http::Response EmbeddingTestServer::Impl::Answer(const Status& parsed, const EmbeddingRequest& er,
                                                 int inject, const std::string& raw) {
  if (inject != 0) return http::Response::Json(inject, OpenAiError(inject, "injected failure"));
  if (!parsed.ok()) return http::Response::Json(400, OpenAiError(400, parsed.message()));
  if (!raw.empty()) return http::Response::Json(200, raw);
  std::vector<std::string_view> views(er.inputs.begin(), er.inputs.end());
  std::vector<std::vector<float>> vectors;
  Status st = embedder.Embed(views, &vectors);
  if (!st.ok()) return http::Response::Json(400, OpenAiError(400, st.message()));
  size_t tokens = 0;
  for (const std::string& s : er.inputs) tokens += s.size() / 4 + 1;
  return http::Response::Json(200, RenderAnswer(er.model, vectors, tokens));
}

EmbeddingTestServer::EmbeddingTestServer(size_t dim) : impl_(std::make_unique<Impl>(dim)) {
  Impl* impl = impl_.get();
  impl->router.Handle("POST", kPath, [impl](const http::Request& req, http::Responder r) {
    impl->OnEmbeddings(req, std::move(r));
  });
  http::ServerOptions options;
  options.max_body_bytes = 64 << 20;  // big batches of long texts
  impl->server = std::make_unique<http::Server>(&impl->loop, &impl->router, options);
  Status st = impl->server->Listen("127.0.0.1", 0);
  if (!st.ok()) {
    fprintf(stderr, "EmbeddingTestServer: cannot listen: %s\n", st.ToString().c_str());
    abort();
  }
  impl->port = impl->server->port();
  impl->thread = std::thread([impl] { impl->loop.Run(); });
}

EmbeddingTestServer::~EmbeddingTestServer() {
  impl_->loop.Stop();
  impl_->thread.join();
  impl_->server.reset();  // after the loop stopped (Server's contract)
}

std::string EmbeddingTestServer::url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port) + kPath;
}
int EmbeddingTestServer::port() const { return impl_->port; }
size_t EmbeddingTestServer::dim() const { return impl_->dim; }

void EmbeddingTestServer::SetFailing(int status) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->failing = status;
}

void EmbeddingTestServer::FailNext(int n, int status) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->fail_next = n;
  impl_->fail_next_status = status;
}

void EmbeddingTestServer::SetDelayMs(int64_t ms) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->delay_ms = ms;
}

void EmbeddingTestServer::SetRawResponse(std::string body) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->raw_response = std::move(body);
}

uint64_t EmbeddingTestServer::requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->requests;
}

std::vector<size_t> EmbeddingTestServer::batch_sizes() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->batch_sizes;
}

std::vector<std::string> EmbeddingTestServer::models() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->models;
}

std::vector<std::string> EmbeddingTestServer::authorizations() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->authorizations;
}

std::vector<std::string> EmbeddingTestServer::inputs() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->inputs;
}

void EmbeddingTestServer::ClearRecords() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->requests = 0;
  impl_->batch_sizes.clear();
  impl_->models.clear();
  impl_->authorizations.clear();
  impl_->inputs.clear();
}

}  // namespace folio::testing
