// Who may call folio-storage: two bearer tokens, two roles.
//
//   write token  (ingest)  every route
//   read token   (edges)   GET and HEAD of /blobs/sha256/<hex> only
//
// Only the routes of api.h are guarded; /livez, /readyz and /metrics stay
// open. Storage holds the tokens' SHA-256 hashes only (tokens.h loads or
// creates them); a presented token is hashed and compared in constant time
// (SameSecret) with each hash.
//
// Pure functions over a request; thread-safe; the TokenHashes are owned by
// the caller (main) and immutable while serving.
#pragma once

#include <string>

#include "folio/core/status.h"
#include "folio/http/server.h"

namespace folio::storage {

// What a route needs.
enum class Access { kRead, kWrite };

// Lower-case hex SHA-256 of each role's token. REQUIRES (to serve): both
// set and different.
struct TokenHashes {
  std::string write_sha256;
  std::string read_sha256;
};

// Ok if the request's bearer token (any case of "Bearer") grants `need`.
// kUnauthenticated if there is no token or it is neither role's;
// kPermissionDenied if it is the read token and `need` is kWrite.
Status Authorize(const TokenHashes& tokens, const http::Request& req, Access need);

// The answer to a failed Authorize: 401 with "WWW-Authenticate: Bearer" or
// 403, each with the JSON error body. REQUIRES: !why.ok().
http::Response Denied(const Status& why);
// Sends Denied(why). REQUIRES: !why.ok().
void SendDenied(http::Responder& resp, const Status& why);

}  // namespace folio::storage
