#include "bundled_mermaid.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/core/text.h"

namespace folio::ingest {
namespace {

constexpr int kUploadAttempts = 3;
constexpr auto kUploadRetryDelay = std::chrono::seconds(1);

Status Upload(const StorageAccess& storage, const std::string& bytes, std::string* sha256) {
  // The attachment path: HEAD first, PUT only if storage lacks it. The
  // stored type is the name's (octet-stream): only the blob page, which
  // names its own type, serves these bytes as script.
  std::vector<PushAttachment> one{{"mermaid.min.js", bytes}};
  Status s;
  for (int attempt = 1; attempt <= kUploadAttempts; ++attempt) {
    s = UploadAttachments(storage, &one);
    if (s.ok() || s.code() != Code::kUnavailable || attempt == kUploadAttempts) break;
    std::this_thread::sleep_for(kUploadRetryDelay);
  }
  *sha256 = one[0].sha256;
  return s;
}

}  // namespace

std::string BesideExecutable(std::string_view name) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return std::string(name);
  std::string path(buf, static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return std::string(name);
  return path.substr(0, slash + 1) + std::string(name);
}

std::string BundledMermaidUrl(std::string_view sha256) {
  return "/assets/" + std::string(sha256.substr(0, 16)) + "/mermaid.min.js";
}

Result<std::string> ReadBundledMermaid(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound(path + " does not exist");
    return Status::Unavailable(path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return Status::Invalid(path + " is not a file");
  if (static_cast<uint64_t>(st.st_size) > kMaxBundledMermaid) {
    return Status::TooLarge(path + " is " + std::to_string(st.st_size) + " bytes, over " +
                            std::to_string(kMaxBundledMermaid) + ": not a mermaid build");
  }
  if (st.st_size == 0) return Status::Invalid(path + " is empty");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())) || in.peek() != EOF) {
    return Status::Unavailable(path + ": could not read it whole (changed while read?)");
  }
  return bytes;
}

void UseBundledMermaid(const std::string& file, SiteOptions* site, BlobsInFlight* in_flight,
                       std::shared_ptr<void>* hold) {
  if (file.empty()) return;  // --mermaid-url names a source
  if (site->storage.url.empty()) {
    log::Info("no --storage: pages load mermaid from its CDN URL (the bundled file is served only through"
              " folio-storage; set --storage, or --mermaid-url)", {{"mermaid_url", site->mermaid_url}});
    return;
  }
  auto bytes = ReadBundledMermaid(file);
  if (!bytes.ok()) {
    log::Warn("no bundled mermaid: pages load it from its CDN URL (install it with scripts/install-deps.sh, or"
              " name it with --mermaid-file)", {{"error", bytes.status().message()}, {"mermaid_url", site->mermaid_url}});
    return;
  }
  std::string sha256;
  if (Status s = Upload(site->storage, *bytes, &sha256); !s.ok()) {
    log::Warn("could not put the bundled mermaid into storage: pages load it from its CDN URL until a restart",
              {{"error", s.message()}, {"mermaid_url", site->mermaid_url}});
    return;
  }
  Sha256Digest d = Sha256(*bytes);
  site->mermaid_url = BundledMermaidUrl(sha256);
  site->mermaid_integrity =
      "sha256-" + Base64Encode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
  site->mermaid_blob = sha256;
  *hold = in_flight->Hold({sha256});
  log::Info("serving the bundled mermaid from the site", {{"url", site->mermaid_url}, {"file", file},
                                                         {"bytes", std::to_string(bytes->size())}});
}

}  // namespace folio::ingest
