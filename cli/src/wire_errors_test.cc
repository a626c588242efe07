// HTTP failures as the CLI words them (wire.h ErrorForResponse): the code is
// the one reverse map's (http::StatusFromHttp: the body's "code", else the
// status), which decides what api.cc retries (kUnavailable and
// kDeadlineExceeded only); the words stay the CLI's.
#include <doctest/doctest.h>

#include "wire.h"

using namespace folio;
using namespace folio::cli;

namespace {
Status Answer(int status, std::string_view body = "") { return ErrorForResponse("http://h", kPushPath, status, body); }
}  // namespace

TEST_CASE("wire: the error's code comes from the body's code, else the status") {
  // Transient: what api.cc retries.
  CHECK(Answer(503).code() == Code::kUnavailable);
  CHECK(Answer(502, "<html>bad gateway</html>").code() == Code::kUnavailable);
  CHECK(Answer(429).code() == Code::kUnavailable);
  CHECK(Answer(504).code() == Code::kDeadlineExceeded);
  CHECK(Answer(503, R"({"error":{"code":"not_leader","message":"ingest-1 writes"}})").code() == Code::kUnavailable);
  // Not transient: the same request would fail the same way.
  CHECK(Answer(500).code() == Code::kInternal);
  Status lost = Answer(500, R"({"error":{"code":"data_loss","message":"chunk 3 of the blob is damaged"}})");
  CHECK(lost.code() == Code::kDataLoss);
  CHECK(lost.message() == "the server failed on http://h/api/v1/push (HTTP 500): chunk 3 of the blob is damaged");
  CHECK(Answer(507, R"({"error":{"code":"no_space","message":"disk full"}})").code() == Code::kNoSpace);
  CHECK(Answer(422, R"({"error":{"code":"idempotency_key_reused","message":"x"}})").code() == Code::kUnprocessable);
  CHECK(Answer(409).code() == Code::kConflict);
  CHECK(Answer(404, R"({"error":{"code":"stage_not_found","message":"stage s holds no batches"}})").message() ==
        "http://h/api/v1/push (HTTP 404): stage s holds no batches");
  CHECK(Answer(404).message() == "http://h/api/v1/push not found (HTTP 404): is --server a folio-ingest server?");
  CHECK(Answer(403).code() == Code::kPermissionDenied);
  CHECK(Answer(401, R"({"error":{"code":"unauthenticated","message":"x"}})").message() ==
        "the server rejected the token (check --token / FOLIO_TOKEN)");
}
