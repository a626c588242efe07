// The ingest API's error answers: every non-200 answer of folio-ingest's
// /api/v1/* routes carries the one JSON error body of libs/http
// (http::ErrorBody in folio/http/client.h; written by Response::Error,
// read by http::DecodeErrorBody), so this API adds no codec of its own, only
// the codes it uses beside CodeName's. Pure; any thread.
//
// Wire shape: {"error":{"code":"invalid_argument","message":"...","path":"a.md"}}
// "path": the vault file a push failed on, only when one did. "message" is
// for people; programs read "code". Codes and statuses (HttpStatusFor):
//   invalid_argument 400  the body, a query value or a header is malformed
//   unauthenticated  401  no token, or one no site knows
//   not_found        404  (stage_not_found: a commit of a stage with no batches)
//   too_large        413  a note, attachment, push or stage over its limit
//   unprocessable    422  a note that crashed ingest, refused until it changes
//   idempotency_key_reused 422  an Idempotency-Key sent again with another body
//   unavailable      503  storage or NATS away; not_leader: another replica
//                         writes (with Retry-After)
//   no_space         507  ingest's disk is full
//   internal         500  a bug; the detail stays in ingest's log
// A client maps an answer back with http::StatusFromHttp, which reads "code"
// and falls back to the status for the codes of this API that no Code names.
// Versioning: codes are only added; a reader treats an unknown one by its
// HTTP status.
#pragma once

#include <string_view>

#include "folio/http/client.h"

namespace folio::ingest_api {

using ErrorBody = http::ErrorBody;

// The codes of this API that are not CodeName's.
inline constexpr std::string_view kStageNotFound = "stage_not_found";
inline constexpr std::string_view kIdempotencyKeyReused = "idempotency_key_reused";
inline constexpr std::string_view kNotLeader = "not_leader";

}  // namespace folio::ingest_api
