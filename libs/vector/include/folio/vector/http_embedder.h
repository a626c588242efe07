// HttpEmbedder: an Embedder that calls an OpenAI-compatible embeddings
// endpoint (OpenAI, vLLM, llama.cpp server, Ollama, text-embeddings-inference)
// over HTTP, with batching, retries and health counters.
//
// Wire: POST <url> with {"model":<model>,"input":[<text>,...]} and, when an
// API key is set, "Authorization: Bearer <key>". The answer must be
// {"data":[{"index":i,"embedding":[<dim numbers>]},...]}: one item per input
// (in any order; "index" defaults to the item's position), each exactly
// `dim` long. Every returned vector is L2-normalised here (norm 1), whatever
// the server sends; a zero vector stays zero. Empty texts are not sent (most
// servers reject them) and get the all-zero vector, as with HashedEmbedder.
//
// Retries: connection errors and timeouts, HTTP 408, 429 and 5xx are retried
// up to max_attempts per batch, sleeping initial_backoff_ms, then doubling,
// capped at max_backoff_ms, each delay drawn uniformly from [d/2, d]
// ("equal jitter"). Nothing else is retried.
//
// Ownership: the embedder copies its options; it keeps no reference to the
// input texts after Embed returns. Threading: Embed blocks (network I/O and
// backoff sleeps: up to max_attempts * (timeout_ms + max_backoff_ms) per
// batch), so never call it on an event-loop thread. Embed, dim, Describe and
// health may run concurrently from any number of threads on one instance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "folio/vector/embedder.h"

namespace folio::vector {

struct HttpEmbedderOptions {
  std::string url;                     // full endpoint, e.g. "http://127.0.0.1:8000/v1/embeddings"; required
  std::string model;                   // sent as "model"; required (may be "" for servers that ignore it)
  size_t dim = 0;                      // length of the model's vectors; required, > 0
  std::string api_key;                 // default "": no Authorization header. Read it from an env var.
  size_t batch_size = 64;              // texts per request; > 0
  int max_attempts = 4;                // per batch, including the first; >= 1
  int64_t initial_backoff_ms = 200;    // first retry delay, doubled per retry; >= 0
  int64_t max_backoff_ms = 5000;       // cap on one retry delay; >= initial_backoff_ms
  int64_t timeout_ms = 30000;          // per request (connect + transfer); > 0
  size_t max_input_bytes = 32 * 1024;  // longer texts are cut at a UTF-8 boundary; >= 4
};

// A snapshot of an embedder's health, for /readyz and metrics.
struct EmbedderHealth {
  bool ok = true;                  // false after a batch failed for a non-input reason; true again after a batch succeeds
  std::string last_error;          // most recent failed request ("" if none); kept after recovery
  int64_t last_error_unix_ms = 0;  // when last_error happened (0 if never)
  uint64_t requests = 0;           // HTTP requests sent (attempts, including retries)
  uint64_t failures = 0;           // requests that failed (transport, HTTP status or bad answer)
  uint64_t retries = 0;            // requests that were retries of a failed one
};

class HttpEmbedder final : public Embedder {
 public:
  // Fails with kInvalidArgument naming the field when an option is out of
  // range or url is not http:// or https://. Sends nothing.
  static Result<std::unique_ptr<HttpEmbedder>> Create(HttpEmbedderOptions options);

  size_t dim() const override { return options_.dim; }
  // "openai:<model>@<url>". Neither the API key nor a "user:password@" in
  // the URL appears (here or in error messages).
  std::string Describe() const override;

  // Embeds texts in batches of batch_size, in order; see the file comment.
  // Fails, without sending anything, with kInvalidArgument naming the first
  // text that is not valid UTF-8. Otherwise stops at the first failed batch:
  //   kUnavailable  retries exhausted, or an HTTP error other than below, or
  //                 a transport error that is not retryable; the message
  //                 names the URL, the attempt count and the last error.
  //   kInvalidArgument  the server rejected the input (HTTP 400, 413, 422);
  //                 the message holds the status and a prefix of the body.
  //   kInternal     the answer is malformed: not JSON, wrong item count, bad
  //                 index, non-numeric or non-finite values, or vectors whose
  //                 length differs from dim (e.g. "server returned 768-dim
  //                 vectors, configured dim is 384"). Not retried.
  // On failure *out is unspecified.
  Status Embed(std::span<const std::string_view> texts,
               std::vector<std::vector<float>>* out) override;

  // Thread-safe snapshot.
  EmbedderHealth health() const;

  const HttpEmbedderOptions& options() const { return options_; }

 private:
  explicit HttpEmbedder(HttpEmbedderOptions options);

  // Sends one batch (already truncated, none empty) with retries; fills
  // (*out)[slots[i]] for each batch[i].
  Status EmbedBatch(std::span<const std::string_view> batch, std::span<const size_t> slots,
                    std::vector<std::vector<float>>* out);
  void RecordAttempt(bool retry);
  void RecordFailure(const std::string& error);
  void RecordBatchResult(bool ok);

  const HttpEmbedderOptions options_;
  const std::string shown_url_;  // options_.url without credentials
  mutable std::mutex mu_;
  EmbedderHealth health_;  // GUARDED_BY(mu_)
};

}  // namespace folio::vector
