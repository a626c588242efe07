// HttpEmbedder: batching, retries with backoff, health counters. The wire
// format is in http_embedder_wire.cc.
#include "folio/vector/http_embedder.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <random>
#include <thread>
#include <utility>

#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/http/client.h"
#include "http_embedder_internal.h"

namespace folio::vector {

namespace {

Status CheckOptions(const HttpEmbedderOptions& o) {
  auto bad = [](const char* field, const char* want) {
    return Status::Invalid(std::string("embedder option ") + field + ": " + want);
  };
  bool http = StartsWith(o.url, "http://") && o.url.size() > 7;
  bool https = StartsWith(o.url, "https://") && o.url.size() > 8;
  if (!http && !https) return bad("url", "must start with http:// or https://");
  if (o.url.find_first_of(" \r\n\t") != std::string::npos) return bad("url", "must not contain whitespace");
  if (o.dim == 0) return bad("dim", "must be > 0");
  if (o.api_key.find_first_of("\r\n") != std::string::npos) return bad("api_key", "must be one line");
  if (o.batch_size == 0) return bad("batch_size", "must be > 0");
  if (o.max_attempts < 1) return bad("max_attempts", "must be >= 1");
  if (o.initial_backoff_ms < 0) return bad("initial_backoff_ms", "must be >= 0");
  if (o.max_backoff_ms < o.initial_backoff_ms) return bad("max_backoff_ms", "must be >= initial_backoff_ms");
  if (o.timeout_ms <= 0) return bad("timeout_ms", "must be > 0");
  if (o.max_input_bytes < 4) return bad("max_input_bytes", "must be >= 4");
  return Status::Ok();
}

// Delay before retry number `retry` (1 = the first retry): initial * 2^(retry-1),
// capped, then drawn uniformly from [d/2, d].
int64_t BackoffMs(const HttpEmbedderOptions& o, int retry) {
  int64_t d = o.initial_backoff_ms;
  for (int i = 1; i < retry && d < o.max_backoff_ms && d <= std::numeric_limits<int64_t>::max() / 2; ++i) {
    d *= 2;
  }
  d = std::min(d, o.max_backoff_ms);
  if (d <= 1) return d;
  // Seeded per thread without std::random_device, which may throw.
  thread_local std::mt19937_64 rng{static_cast<uint64_t>(MonotonicUs()) ^
                                   std::hash<std::thread::id>()(std::this_thread::get_id())};
  return std::uniform_int_distribution<int64_t>(d / 2, d)(rng);
}

// The URL without "user:password@", for messages and Describe.
std::string RedactUrl(const std::string& url) {
  size_t start = url.find("://");
  if (start == std::string::npos) return url;
  start += 3;
  size_t end = url.find_first_of("/?#", start);
  size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + url.substr(at + 1);
}

bool IsRetryableStatus(int status) { return status == 408 || status == 429 || (status >= 500 && status < 600); }

// Statuses meaning "this input is unacceptable" rather than "the service is broken".
bool IsInputRejection(int status) { return status == 400 || status == 413 || status == 422; }

}  // namespace

Result<std::unique_ptr<HttpEmbedder>> HttpEmbedder::Create(HttpEmbedderOptions options) {
  Status st = CheckOptions(options);
  if (!st.ok()) return st;
  return std::unique_ptr<HttpEmbedder>(new HttpEmbedder(std::move(options)));
}

HttpEmbedder::HttpEmbedder(HttpEmbedderOptions options)
    : options_(std::move(options)), shown_url_(RedactUrl(options_.url)) {}

std::string HttpEmbedder::Describe() const { return "openai:" + options_.model + "@" + shown_url_; }

EmbedderHealth HttpEmbedder::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_;
}

void HttpEmbedder::RecordAttempt(bool retry) {
  std::lock_guard<std::mutex> lock(mu_);
  ++health_.requests;
  if (retry) ++health_.retries;
}

void HttpEmbedder::RecordFailure(const std::string& error) {
  int64_t now = NowUnixMs();
  std::lock_guard<std::mutex> lock(mu_);
  ++health_.failures;
  health_.last_error = error;
  health_.last_error_unix_ms = now;
}

void HttpEmbedder::RecordBatchResult(bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  health_.ok = ok;
}

Status HttpEmbedder::Embed(std::span<const std::string_view> texts,
                           std::vector<std::vector<float>>* out) {
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!IsValidUtf8(texts[i])) return Status::Invalid("text " + std::to_string(i) + " is not valid UTF-8");
  }
  out->assign(texts.size(), {});
  std::vector<std::string_view> batch;
  std::vector<size_t> slots;
  batch.reserve(std::min(options_.batch_size, texts.size()));
  slots.reserve(batch.capacity());
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].empty()) {
      (*out)[i].assign(options_.dim, 0.0f);  // not sent: servers reject empty input
      continue;
    }
    batch.push_back(TruncateUtf8(texts[i], options_.max_input_bytes));
    slots.push_back(i);
    if (batch.size() == options_.batch_size) {
      Status st = EmbedBatch(batch, slots, out);
      if (!st.ok()) return st;
      batch.clear();
      slots.clear();
    }
  }
  if (!batch.empty()) return EmbedBatch(batch, slots, out);
  return Status::Ok();
}

Status HttpEmbedder::EmbedBatch(std::span<const std::string_view> batch, std::span<const size_t> slots,
                                std::vector<std::vector<float>>* out) {
  http::ClientRequest req;
  req.method = "POST";
  req.url = options_.url;
  req.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  if (!options_.api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + options_.api_key);
  req.body = EmbeddingRequestBody(options_.model, batch);
  req.timeout_ms = options_.timeout_ms;
  const std::string where = "embedder " + shown_url_;

  std::string last_error;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(std::chrono::milliseconds(BackoffMs(options_, attempt - 1)));
    RecordAttempt(attempt > 1);
    Result<http::ClientResponse> resp = http::Fetch(req);
    if (!resp.ok()) {
      last_error = resp.status().message();
      RecordFailure(last_error);
      if (resp.status().code() == Code::kUnavailable) continue;  // connect, timeout, reset
      RecordBatchResult(false);
      return Status::Unavailable(where + ": " + last_error);
    }
    int status = resp->status;
    if (status >= 200 && status < 300) {
      std::vector<std::vector<float>> vectors;
      Status st = ParseEmbeddingResponse(resp->body, batch.size(), options_.dim, &vectors);
      if (!st.ok()) {
        RecordFailure(st.message());
        RecordBatchResult(false);
        return Status::Internal(where + ": " + st.message());
      }
      for (size_t i = 0; i < slots.size(); ++i) (*out)[slots[i]] = std::move(vectors[i]);
      RecordBatchResult(true);
      return Status::Ok();
    }
    last_error = "HTTP " + std::to_string(status) + ": " + BodyPrefix(resp->body);
    RecordFailure(last_error);
    if (IsRetryableStatus(status)) continue;
    // The service answered sensibly about this input: health is unchanged.
    if (IsInputRejection(status)) return Status::Invalid(where + " rejected the input: " + last_error);
    RecordBatchResult(false);
    return Status::Unavailable(where + ": " + last_error);
  }
  RecordBatchResult(false);
  return Status::Unavailable(where + ": " + std::to_string(options_.max_attempts) +
                             " attempt(s) failed; last error: " + last_error);
}

}  // namespace folio::vector
