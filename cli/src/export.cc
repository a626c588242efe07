#include "export.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <system_error>

#include "export_path.h"
#include "folio/core/gzip.h"
#include "folio/core/text.h"
#include "folio/http/client.h"
#include "wire.h"

namespace folio::cli {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxUrls = 4'000'000;      // bounds a server that never says "last page"
constexpr size_t kMaxBodyBytes = 1u << 30;  // an identity body (inflated gzip) larger is refused
constexpr std::string_view kNotFoundUrl = "/_folio/404";

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "folio: %s\n", message.c_str());
  return code;
}

// Writes `bytes` to root/rel through a temporary file and a rename.
Status WriteAtomic(const fs::path& root, const std::string& rel, std::string_view bytes) {
  fs::path target = root / fs::u8path(rel);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) return Status::Unavailable("cannot create " + target.parent_path().string() + ": " + ec.message());
  fs::path tmp = target;
  tmp += ".folio-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) return Status::Unavailable("cannot write " + tmp.string());
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status::Unavailable("cannot write " + target.string() + ": " + ec.message());
  }
  return Status::Ok();
}

// Whether DIR may be written: missing (then created), or an empty folder,
// or any folder with --force.
Status PrepareDir(const ExportOptions& o) {
  std::error_code ec;
  if (!fs::exists(o.dir, ec)) {
    fs::create_directories(o.dir, ec);
    if (ec) return Status::Unavailable("cannot create " + o.dir.string() + ": " + ec.message());
    return Status::Ok();
  }
  if (!fs::is_directory(o.dir, ec)) return Status::Invalid(o.dir.string() + " exists and is not a directory");
  if (!o.force && !fs::is_empty(o.dir, ec)) {
    return Status::Invalid(o.dir.string() +
                            " is not empty; export into an empty or new folder, or pass --force to write into it"
                            " (files of the same name are replaced, others are kept)");
  }
  return Status::Ok();
}

struct Tally {
  size_t pages = 0, gz = 0, redirects = 0, failed = 0;
  uint64_t bytes = 0;
};

// Fetches `url` from the edge and writes its file (and .gz twin). A URL the
// edge does not serve is counted in tally->failed and reported; only a
// write error (the disk) is returned.
Status ExportOne(const ExportOptions& o, const std::string& edge, const std::string& url, Tally* tally) {
  http::ClientRequest req;
  req.url = edge + PercentEncodePath(url);
  req.timeout_ms = o.server.timeout_ms;
  req.headers = {{"Accept-Encoding", "gzip"}};
  Result<http::ClientResponse> resp = http::Fetch(req);
  if (!resp.ok()) return Status(resp.status().code(), "cannot reach " + edge + ": " + resp.status().message());
  if (resp->status == 301 || resp->status == 302 || resp->status == 308) {
    ++tally->redirects;
    return Status::Ok();
  }
  const bool is_404_page = url == kNotFoundUrl;
  if (resp->status != (is_404_page ? 404 : 200)) {
    ++tally->failed;
    std::fprintf(stderr, "folio: %s%s answered %d; not exported\n", edge.c_str(), url.c_str(), resp->status);
    return Status::Ok();
  }
  Result<std::string> rel = ExportPath(url, resp->Header("Content-Type"));
  if (!rel.ok()) return rel.status();
  std::string identity;
  const bool gzipped = resp->Header("Content-Encoding") == "gzip";
  if (gzipped) {
    if (Status st = GzipDecompress(resp->body, &identity, kMaxBodyBytes); !st.ok()) {
      return Status::Invalid(edge + url + ": the gzip body does not inflate: " + st.message());
    }
    if (Status st = WriteAtomic(o.dir, *rel + ".gz", resp->body); !st.ok()) return st;
    ++tally->gz;
    tally->bytes += resp->body.size();
  }
  const std::string& body = gzipped ? identity : resp->body;
  if (Status st = WriteAtomic(o.dir, *rel, body); !st.ok()) return st;
  ++tally->pages;
  tally->bytes += body.size();
  return Status::Ok();
}

}  // namespace

int RunExport(const ExportOptions& o) {
  std::string edge = o.edge;
  if (edge.empty()) {
    Result<Manifest> manifest = FetchManifest(o.server);
    if (!manifest.ok()) return Fail(2, manifest.status().message());
    edge = manifest->site_url;
    if (edge.empty()) {
      return Fail(2, "the server has no --base-url, so the site's address is unknown; pass --edge URL (an edge"
                     " serving the site)");
    }
  }
  while (edge.ends_with('/')) edge.pop_back();
  if (!edge.starts_with("http://") && !edge.starts_with("https://")) {
    return Fail(2, "--edge must be an http:// or https:// URL, not '" + edge + "'");
  }
  // The first page before DIR is touched: a wrong token or server fails first.
  Result<ExportPage> page = FetchExportPage(o.server, "");
  if (!page.ok()) return Fail(2, page.status().message());
  if (Status st = PrepareDir(o); !st.ok()) return Fail(2, st.message());
  Tally tally;
  size_t seen = 0;
  for (;;) {
    for (const std::string& url : page->urls) {
      if (Status st = ExportOne(o, edge, url, &tally); !st.ok()) return Fail(2, st.message());
    }
    seen += page->urls.size();
    if (page->next.empty()) break;
    if (seen > kMaxUrls) return Fail(2, "the server listed more than 4,000,000 URLs; stopped");
    std::string after = page->next;
    page = FetchExportPage(o.server, after);
    if (!page.ok()) return Fail(2, page.status().message());
    if (!page->urls.empty() && page->urls.front() <= after) {
      return Fail(2, o.server.url + ": the export pages are not in order; stopped");
    }
  }
  std::printf("exported %zu files (%zu with a .gz twin, %.1f MB) to %s; %zu redirects left out%s\n", tally.pages,
              tally.gz, static_cast<double>(tally.bytes) / 1e6, o.dir.string().c_str(), tally.redirects,
              tally.failed ? (", " + std::to_string(tally.failed) + " URLs not served by the edge").c_str() : "");
  return tally.failed ? 1 : 0;
}

}  // namespace folio::cli
