#include "folio/storage_client/storage_client.h"

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>

#include "folio/core/hash.h"
#include "folio/core/text.h"

namespace folio::storage_client {

namespace {

constexpr int kListPage = 1000;

Status Malformed(std::string_view what) {
  return Status::Unavailable("storage answered malformed JSON for " + std::string(what));
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '/')) s.remove_suffix(1);
  return s;
}

// "" if `url` is http(s)://host[:port][/path], else why not.
std::string WhyNotUrl(std::string_view url) {
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    rest = url.substr(8);
  } else {
    return "does not start with http:// or https://";
  }
  std::string_view host = rest.substr(0, rest.find('/'));
  if (host.empty() || host.front() == ':') return "names no host";
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '?' || c == '#') return "holds a blank, '?' or '#'";
  }
  if (size_t colon = host.rfind(':'); colon != std::string_view::npos && host.back() != ']') {
    std::string_view port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) {
      return "has a port that is not a number";
    }
  }
  return "";
}

// The sticky choice of every list this process talks to: a few lists per
// process (ingest's, the edge's), so never pruned.
std::shared_ptr<std::atomic<size_t>> PreferredFor(const std::string& list) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<std::atomic<size_t>>>* by_list =
      new std::map<std::string, std::shared_ptr<std::atomic<size_t>>>();  // GUARDED_BY(mu); never destroyed
  std::lock_guard<std::mutex> lock(mu);
  auto& p = (*by_list)[list];
  if (!p) p = std::make_shared<std::atomic<size_t>>(0);
  return p;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Worth asking the next replica: not reached, timed out, or 503 (draining,
// or its disk failed: storage refuses writes until restarted).
bool ShouldFailOver(const Result<http::ClientResponse>& r) { return !r.ok() || r->status == 503; }

}  // namespace

Result<std::vector<std::string>> ParseUrlList(std::string_view list, std::string_view flag) {
  std::vector<std::string> out;
  if (Trim(list).empty()) return out;
  size_t n = 0;
  for (size_t start = 0;; ++n) {
    size_t comma = list.find(',', start);
    std::string_view entry = Trim(list.substr(start, comma == std::string_view::npos ? list.npos : comma - start));
    std::string why = entry.empty() ? "is empty" : WhyNotUrl(entry);
    if (!why.empty()) {
      return Status::Invalid(std::string(flag) + ": entry " + std::to_string(n + 1) + " (\"" + std::string(entry) +
                             "\") " + why + "; expected one URL or several separated by ',', e.g. "
                             "http://storage-0:8083,http://storage-1:8083");
    }
    out.emplace_back(entry);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<std::string> NormalizeUrlList(std::string_view list, std::string_view flag) {
  auto urls = ParseUrlList(list, flag);
  if (!urls.ok()) return urls.status();
  std::string joined;
  for (const std::string& u : *urls) joined += (joined.empty() ? "" : ",") + u;
  return joined;
}

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
  for (size_t start = 0; start <= access_.url.size();) {
    size_t comma = std::min(access_.url.find(',', start), access_.url.size());
    std::string_view entry = Trim(std::string_view(access_.url).substr(start, comma - start));
    if (!entry.empty() && WhyNotUrl(entry).empty()) replicas_.emplace_back(entry);
    start = comma + 1;
  }
  access_.url.clear();
  for (const std::string& u : replicas_) access_.url += (access_.url.empty() ? "" : ",") + u;
  if (!replicas_.empty()) preferred_ = PreferredFor(access_.url);
}

const std::string& Client::preferred_url() const { return replicas_[preferred_->load() % replicas_.size()]; }

http::ClientRequest Client::RequestTo(const std::string& base, std::string method, std::string_view path_and_query,
                                      int64_t timeout_ms) const {
  http::ClientRequest req;
  req.method = std::move(method);
  req.url = base + std::string(path_and_query);
  req.headers.emplace_back("Authorization", "Bearer " + access_.token);
  req.timeout_ms = timeout_ms;
  return req;
}

http::ClientRequest Client::Request(std::string method, std::string_view path_and_query, int64_t timeout_ms) const {
  return RequestTo(replicas_.empty() ? std::string() : preferred_url(), std::move(method), path_and_query, timeout_ms);
}

Result<http::ClientResponse> Client::WithFailover(int64_t timeout_ms, const Attempt& attempt) const {
  if (replicas_.empty()) return Status::Unavailable("no storage URL configured");
  const size_t n = replicas_.size();
  const size_t first = preferred_->load() % n;
  if (n == 1) return attempt(replicas_[0], timeout_ms);
  const int64_t deadline = NowMs() + kFailoverTimeouts * timeout_ms;
  Result<http::ClientResponse> r = Status::Unavailable("no storage replica tried");
  size_t tried = 0;
  for (; tried < n; ++tried) {
    const size_t i = (first + tried) % n;
    const int64_t left = deadline - NowMs();
    if (tried > 0 && left <= 0) break;
    r = attempt(replicas_[i], tried == 0 ? timeout_ms : std::min(timeout_ms, left));
    if (!ShouldFailOver(r)) {
      if (i != first) preferred_->store(i);  // sticky: the next call starts here
      return r;
    }
    size_t expected = i;  // rotate, unless another thread moved on already
    preferred_->compare_exchange_strong(expected, (i + 1) % n);
  }
  if (r.ok()) return r;  // every replica tried answered 503: the caller maps it
  return Status::Unavailable(r.status().message() + " (tried " + std::to_string(tried) + " of " + std::to_string(n) +
                             " storage replicas: " + access_.url + ")");
}

Result<http::ClientResponse> Client::Get(std::string_view path_and_query, int64_t timeout_ms) const {
  return WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
    return http::Fetch(RequestTo(base, "GET", path_and_query, t));
  });
}

Result<http::ClientResponse> Client::HeadBlob(std::string_view hex, int64_t timeout_ms) const {
  const std::string path = BlobPath(hex);
  return WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
    return http::Fetch(RequestTo(base, "HEAD", path, t));
  });
}

Result<http::ClientResponse> Client::GetBlob(std::string_view hex, int64_t timeout_ms) const {
  const std::string path = BlobPath(hex);
  return WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
    return http::Fetch(RequestTo(base, "GET", path, t));
  });
}

Result<http::ClientResponse> Client::GetBlobRange(std::string_view sha256, uint64_t offset, uint64_t n,
                                                  int64_t timeout_ms) const {
  const std::string path = BlobPath(sha256);
  const std::string range = "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + n - 1);
  return WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
    http::ClientRequest get = RequestTo(base, "GET", path, t);
    get.headers.emplace_back("Range", range);
    return http::Fetch(get);
  });
}

Result<http::ClientResponse> Client::PutBlob(std::string_view sha256, std::string body, std::string_view content_type,
                                             int64_t timeout_ms) const {
  const std::string path = BlobPath(sha256);
  http::ClientRequest put;
  put.body = std::move(body);  // kept across attempts: each replica gets the whole body again
  return WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
    http::ClientRequest req = RequestTo(base, "PUT", path, t);
    req.headers.emplace_back("Content-Type", std::string(content_type));
    req.body.swap(put.body);
    Result<http::ClientResponse> r = http::Fetch(req);
    req.body.swap(put.body);
    return r;
  });
}

Result<http::ClientResponse> Client::DeleteBlob(std::string_view sha256, int64_t timeout_ms) const {
  const std::string path = BlobPath(sha256);
  return WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
    return http::Fetch(RequestTo(base, "DELETE", path, t));
  });
}

Result<http::ClientResponse> Client::PutObjectFile(std::string_view name, int keep, std::string_view content_type,
                                                   const std::string& path, int64_t timeout_ms) const {
  const std::string target = ObjectPath(name) + "?keep=" + std::to_string(keep);
  return WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
    http::ClientRequest req = RequestTo(base, "PUT", target, t);
    req.headers.emplace_back("Content-Type", std::string(content_type));
    return http::FetchFile(req, path, "");  // the file is read from its start on every attempt
  });
}

Result<http::ClientResponse> Client::GetObjectFile(std::string_view name, const std::string& path,
                                                   int64_t timeout_ms) const {
  const std::string target = ObjectPath(name);
  return WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
    return http::FetchFile(RequestTo(base, "GET", target, t), "", path);  // truncates what a failed attempt wrote
  });
}

Result<std::vector<std::string>> Client::ListAllBlobs(int64_t timeout_ms) const {
  std::vector<std::string> all;
  for (std::string after;;) {
    std::string query = "/blobs?limit=" + std::to_string(kListPage) + (after.empty() ? "" : "&after=" + after);
    auto r = WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
      return http::Fetch(RequestTo(base, "GET", query, t));
    });
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
    auto r = WithFailover(timeout_ms, [&](const std::string& base, int64_t t) {
      return http::Fetch(RequestTo(base, "GET", query, t));
    });
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
  // The one reverse map (http::StatusFromHttp) reads the body's "code": a
  // 500 saying "data_loss" is damage retrying will not mend.
  const Code code = http::StatusFromHttp(status, r->body).code();
  if (policy_ == FaultPolicy::kRetryable || code == Code::kUnavailable) return Status::Unavailable(std::move(m));
  if (code == Code::kDataLoss) return Status::DataLoss(std::move(m));
  return Status::Internal(std::move(m));
}

}  // namespace folio::storage_client
