#include "folio/http/client.h"

#include <curl/curl.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "folio/core/text.h"

namespace folio::http {

namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) abort();
  });
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  static_cast<ClientResponse*>(user)->body.append(data, size * n);
  return size * n;
}

size_t OnHeaderLine(char* data, size_t size, size_t n, void* user) {
  auto* resp = static_cast<ClientResponse*>(user);
  std::string_view line(data, size * n);
  if (StartsWith(line, "HTTP/")) {
    resp->headers.clear();  // a new response (after 100 Continue) starts over
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    resp->headers.emplace_back(std::string(TrimAsciiSpace(line.substr(0, colon))),
                               std::string(TrimAsciiSpace(line.substr(colon + 1))));
  }
  return size * n;
}

// The 2xx body goes to a file; anything else is kept for the error message.
struct FileSink {
  CURL* curl;
  FILE* file;
  ClientResponse* resp;
  bool write_failed = false;
};

size_t OnBodyToFile(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<FileSink*>(user);
  long status = 0;
  curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    sink->resp->body.append(data, size * n);
    return size * n;
  }
  if (fwrite(data, 1, size * n, sink->file) != size * n) {
    sink->write_failed = true;
    return 0;  // aborts the transfer
  }
  return size * n;
}

Status FromCurl(CURLcode rc, const char* detail) {
  std::string msg = std::string(curl_easy_strerror(rc)) + (detail[0] ? std::string(": ") + detail : "");
  switch (rc) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return Status::Invalid(msg);
    case CURLE_OUT_OF_MEMORY:
      return Status::Internal(msg);
    default:  // connect, resolve, timeout, reset, empty reply, TLS...
      return Status::Unavailable(msg);
  }
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

std::string ClientResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreAsciiCase(k, name)) return v;
  }
  return {};
}

// in/out: optional files for the request and 2xx response bodies.
static Result<ClientResponse> Perform(const ClientRequest& req, FILE* in, FILE* out) {
  GlobalInit();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return Status::Internal("curl_easy_init failed");
  CURL* c = curl.get();
  ClientResponse resp;
  char error[CURL_ERROR_SIZE] = {};
  std::unique_ptr<curl_slist, CurlDeleter> headers;
  bool has_expect = false;
  for (const auto& [k, v] : req.headers) {
    // "Name;" is curl's way to send a header with an empty value.
    std::string line = v.empty() ? k + ";" : k + ": " + v;
    headers.reset(curl_slist_append(headers.release(), line.c_str()));
    if (EqualsIgnoreAsciiCase(k, "expect")) has_expect = true;
  }
  // curl would otherwise wait for "100 Continue" on larger bodies.
  if (!has_expect) headers.reset(curl_slist_append(headers.release(), "Expect:"));

  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: CURLOPT_PROTOCOLS is deprecated
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout_ms));
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  FileSink sink{c, out, &resp};
  if (out) {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBodyToFile);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  } else {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp);
  }
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeaderLine);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &resp);
  if (req.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (in) {
    // CURLOPT_UPLOAD reads with fread from CURLOPT_READDATA by default.
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READDATA, in);
    if (req.method != "PUT") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    if (fseeko(in, 0, SEEK_END) == 0) {
      curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(ftello(in)));
      rewind(in);
    }
  } else if (req.method != "GET" || !req.body.empty()) {
    if (req.method != "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    if (!req.body.empty() || req.method == "POST" || req.method == "PUT") {
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.data());
    }
  }
  CURLcode rc = curl_easy_perform(c);
  if (sink.write_failed) return Status::Unavailable("cannot write the response body to a file");
  if (rc != CURLE_OK) return FromCurl(rc, error);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  resp.status = static_cast<int>(status);
  return resp;
}

Result<ClientResponse> Fetch(const ClientRequest& req) { return Perform(req, nullptr, nullptr); }

Result<ClientResponse> FetchFile(const ClientRequest& req, const std::string& body_path,
                                 const std::string& response_path) {
  struct Closer {
    void operator()(FILE* f) const { fclose(f); }
  };
  std::unique_ptr<FILE, Closer> in, out;
  if (!body_path.empty()) {
    in.reset(fopen(body_path.c_str(), "rbe"));
    if (!in) return Status::Unavailable("cannot open " + body_path + " to upload");
  }
  if (!response_path.empty()) {
    out.reset(fopen(response_path.c_str(), "wbe"));
    if (!out) return Status::Unavailable("cannot create " + response_path);
  }
  auto r = Perform(req, in.get(), out.get());
  if (out && fclose(out.release()) != 0 && r.ok()) return Status::Unavailable("cannot write " + response_path);
  return r;
}

Result<ClientResponse> Get(const std::string& url,
                           std::vector<std::pair<std::string, std::string>> headers) {
  ClientRequest req;
  req.url = url;
  req.headers = std::move(headers);
  return Fetch(req);
}

}  // namespace folio::http
