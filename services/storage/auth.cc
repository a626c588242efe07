#include "auth.h"

#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/secret.h"

namespace folio::storage {

Status Authorize(const TokenHashes& tokens, const http::Request& req, Access need) {
  std::string_view token = req.BearerToken();
  if (token.empty()) {
    return Status::Unauthenticated(
        "this request needs a bearer token (Authorization: Bearer TOKEN): storage's write token, or its read "
        "token for GET and HEAD of /blobs/sha256/<hex>");
  }
  // Hash first: both comparisons then take the same time whatever was sent.
  std::string hash = Sha256Hex(token);
  bool write = SameSecret(hash, tokens.write_sha256);
  bool read = SameSecret(hash, tokens.read_sha256);
  if (write) return Status::Ok();
  if (!read) return Status::Unauthenticated("the bearer token is neither storage's write token nor its read token");
  if (need == Access::kRead) return Status::Ok();
  return Status::PermissionDenied(
      "the read token may only GET or HEAD /blobs/sha256/<hex>; this request needs storage's write token");
}

http::Response Denied(const Status& why) {
  http::Response r = http::Response::Error(why);
  if (why.code() == Code::kUnauthenticated) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

void SendDenied(http::Responder& resp, const Status& why) { resp.Send(Denied(why)); }

}  // namespace folio::storage
