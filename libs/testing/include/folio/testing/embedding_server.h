// EmbeddingTestServer: a real HTTP server (folio::http::Server on its own
// Loop thread, 127.0.0.1, a free port) that answers POST /v1/embeddings like
// OpenAI, with deterministic vectors from folio::vector::HashedEmbedder(dim):
// similar texts get similar vectors, so tests of search quality mean
// something. For tests only; lives in the folio_testing_embedding target
// (folio_testing itself depends on no folio lib).
//
// Request: {"model":"...","input":"text" | ["text",...]}; anything else is
// answered 400 with an OpenAI-style {"error":{...}} body. Answer:
// {"object":"list","data":[{"object":"embedding","index":i,"embedding":[...]}],
//  "model":...,"usage":{...}}, floats printed so that they parse back to the
// exact float HashedEmbedder produced.
//
// Every request to the path is recorded (even failed or injected-failure
// ones): count, batch size, model, Authorization header, input texts.
//
// Ownership: the server owns its Loop, Server and thread; the destructor
// stops the loop (unanswered delayed requests are dropped, the client sees
// the connection close) and joins. Threading: every method is safe from any
// thread; the loop thread serves requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace folio::testing {

class EmbeddingTestServer {
 public:
  // Starts serving before returning; aborts if it cannot listen.
  // REQUIRES: dim > 0.
  explicit EmbeddingTestServer(size_t dim = 384);
  ~EmbeddingTestServer();
  EmbeddingTestServer(const EmbeddingTestServer&) = delete;
  EmbeddingTestServer& operator=(const EmbeddingTestServer&) = delete;

  // "http://127.0.0.1:<port>/v1/embeddings".
  std::string url() const;
  int port() const;
  size_t dim() const;

  // Failure injection. SetFailing: every request is answered `status` with an
  // OpenAI-style error body until SetFailing(0). FailNext: the next n
  // requests are answered `status` (checked after SetFailing). SetDelayMs:
  // each answer (failed or not) is sent after ms milliseconds (0 = at once).
  void SetFailing(int status);
  void FailNext(int n, int status);
  void SetDelayMs(int64_t ms);
  // Answers every request 200 with exactly `body` (for malformed-answer
  // tests) until called with "".
  void SetRawResponse(std::string body);

  // What was seen, in arrival order.
  uint64_t requests() const;
  std::vector<size_t> batch_sizes() const;           // 0 for unparseable requests
  std::vector<std::string> models() const;           // "" when absent
  std::vector<std::string> authorizations() const;   // "" when absent
  std::vector<std::string> inputs() const;           // every input text, flattened
  // Forgets what was seen (switches are unchanged).
  void ClearRecords();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace folio::testing
