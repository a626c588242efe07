#include "folio/storage_client/storage_client.h"

#include <simdjson.h>

#include <utility>

#include "folio/core/hash.h"
#include "folio/core/text.h"

namespace folio::storage_client {

namespace {

constexpr int kListPage = 1000;

Status Malformed(std::string_view what) {
  return Status::Unavailable("storage answered malformed JSON for " + std::string(what));
}

}  // namespace

std::string BlobPath(std::string_view hex) { return "/blobs/sha256/" + std::string(hex); }
std::string ObjectPath(std::string_view name) { return "/objects/" + std::string(name); }

Status ParseBlobListing(std::string_view json, BlobListing* out) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array blobs;
  BlobListing page;
  if (parser.parse(json.data(), json.size()).get(doc) || doc["blobs"].get_array().get(blobs) ||
      doc["truncated"].get_bool().get(page.truncated)) {
    return Malformed("a blob listing");
  }
  for (simdjson::dom::element b : blobs) {
    std::string_view hex;
    if (b["sha256"].get_string().get(hex) || hex.size() != 64 || !IsLowerHex(hex)) {
      return Malformed("a blob listing (an entry without a 64-digit sha256)");
    }
    page.sha256.emplace_back(hex);
  }
  *out = std::move(page);
  return Status::Ok();
}

Status ParseObjectListing(std::string_view json, ObjectListing* out) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array objects;
  ObjectListing page;
  if (parser.parse(json.data(), json.size()).get(doc) || doc["objects"].get_array().get(objects) ||
      doc["truncated"].get_bool().get(page.truncated)) {
    return Malformed("an object listing");
  }
  for (simdjson::dom::element o : objects) {
    std::string_view name;
    ObjectListing::Entry e;
    if (o["name"].get_string().get(name) || o["seq"].get_int64().get(e.seq)) {
      return Malformed("an object listing (an entry without name and seq)");
    }
    e.name = std::string(name);
    page.objects.push_back(std::move(e));
  }
  *out = std::move(page);
  return Status::Ok();
}

Client::Client(Access access, TokenRole role, FaultPolicy policy)
    : access_(std::move(access)), role_(role), policy_(policy) {
  while (!access_.url.empty() && access_.url.back() == '/') access_.url.pop_back();
}

http::ClientRequest Client::Request(std::string method, std::string_view path_and_query, int64_t timeout_ms) const {
  http::ClientRequest req;
  req.method = std::move(method);
  req.url = access_.url + std::string(path_and_query);
  req.headers.emplace_back("Authorization", "Bearer " + access_.token);
  req.timeout_ms = timeout_ms;
  return req;
}

Result<http::ClientResponse> Client::HeadBlob(std::string_view hex, int64_t timeout_ms) const {
  return http::Fetch(Request("HEAD", BlobPath(hex), timeout_ms));
}

Result<http::ClientResponse> Client::GetBlob(std::string_view hex, int64_t timeout_ms) const {
  return http::Fetch(Request("GET", BlobPath(hex), timeout_ms));
}

Result<http::ClientResponse> Client::GetBlobRange(std::string_view sha256, uint64_t offset, uint64_t n,
                                                  int64_t timeout_ms) const {
  http::ClientRequest get = Request("GET", BlobPath(sha256), timeout_ms);
  get.headers.emplace_back("Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + n - 1));
  return http::Fetch(get);
}

Result<http::ClientResponse> Client::PutBlob(std::string_view sha256, std::string body, std::string_view content_type,
                                             int64_t timeout_ms) const {
  http::ClientRequest put = Request("PUT", BlobPath(sha256), timeout_ms);
  put.headers.emplace_back("Content-Type", std::string(content_type));
  put.body = std::move(body);
  return http::Fetch(put);
}

Result<http::ClientResponse> Client::DeleteBlob(std::string_view sha256, int64_t timeout_ms) const {
  return http::Fetch(Request("DELETE", BlobPath(sha256), timeout_ms));
}

Result<http::ClientResponse> Client::PutObjectFile(std::string_view name, int keep, std::string_view content_type,
                                                   const std::string& path, int64_t timeout_ms) const {
  http::ClientRequest req = Request("PUT", ObjectPath(name) + "?keep=" + std::to_string(keep), timeout_ms);
  req.headers.emplace_back("Content-Type", std::string(content_type));
  return http::FetchFile(req, path, "");
}

Result<http::ClientResponse> Client::GetObjectFile(std::string_view name, const std::string& path,
                                                   int64_t timeout_ms) const {
  return http::FetchFile(Request("GET", ObjectPath(name), timeout_ms), "", path);
}

Result<std::vector<std::string>> Client::ListAllBlobs(int64_t timeout_ms) const {
  std::vector<std::string> all;
  for (std::string after;;) {
    std::string query = "/blobs?limit=" + std::to_string(kListPage) + (after.empty() ? "" : "&after=" + after);
    auto r = http::Fetch(Request("GET", query, timeout_ms));
    if (!r.ok() || r->status != 200) return Error("listing blobs", r);
    BlobListing page;
    if (Status s = ParseBlobListing(r->body, &page); !s.ok()) return s;
    all.insert(all.end(), page.sha256.begin(), page.sha256.end());
    if (!page.truncated || page.sha256.empty()) break;
    after = page.sha256.back();
  }
  return all;
}

Result<std::vector<ObjectListing::Entry>> Client::ListAllObjects(std::string_view prefix, int64_t timeout_ms) const {
  std::vector<ObjectListing::Entry> all;
  for (std::string after;;) {
    // Names are whatever was stored (one may hold ' ', '&', '+', '#'):
    // encoded, or paging past the first page breaks.
    std::string query = "/objects?limit=" + std::to_string(kListPage) + "&prefix=" + PercentEncodePath(prefix) +
                        (after.empty() ? "" : "&after=" + PercentEncodePath(after));
    auto r = http::Fetch(Request("GET", query, timeout_ms));
    if (!r.ok() || r->status != 200) return Error("listing objects under " + std::string(prefix), r);
    ObjectListing page;
    if (Status s = ParseObjectListing(r->body, &page); !s.ok()) return s;
    if (!page.objects.empty()) after = page.objects.back().name;
    for (ObjectListing::Entry& e : page.objects) all.push_back(std::move(e));
    if (!page.truncated || page.objects.empty()) break;
  }
  return all;
}

Status Client::Error(std::string_view what, const Result<http::ClientResponse>& r) const {
  std::string m(what);
  if (!m.empty()) m += ": ";
  if (!r.ok()) return Status::Unavailable(m + "storage unreachable: " + r.status().message());
  const int status = r->status;
  if (status == 401 || status == 403) {
    if (role_ == TokenRole::kRead) {
      return Status::Unavailable(m + "storage refused the edge's token (HTTP " + std::to_string(status) +
                                 "): --storage-token must be folio-storage's read token (its <data>/read-token)");
    }
    if (status == 401) {
      return Status::Unavailable(m + "storage refused ingest's token (HTTP 401): --storage-token must be "
                                     "folio-storage's write token (its <data>/write-token)");
    }
    return Status::Unavailable(m + "storage refused ingest's token for this (HTTP 403): --storage-token is "
                                   "folio-storage's read token; ingest needs the write token (its <data>/write-token)");
  }
  m += "storage answered HTTP " + std::to_string(status) + " " + r->body.substr(0, 300);
  if (policy_ == FaultPolicy::kRetryable || status == 503) return Status::Unavailable(std::move(m));
  if (status == 500 && r->body.find("\"data_loss\"") != std::string::npos) return Status::DataLoss(std::move(m));
  return Status::Internal(std::move(m));
}

}  // namespace folio::storage_client
