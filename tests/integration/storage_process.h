// folio-storage as a real process for tests: a fixture on a temp journal
// directory with fixed write and read tokens (or none: storage makes its
// own), HTTP calls carrying a token, and small file helpers the storage and
// fault tests share (with test_util.h). Test code only; use from the test's thread.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "folio/core/hash.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"
#include "test_util.h"

namespace folio::it {


inline constexpr const char* kWrite = "write-token-for-tests";
inline constexpr const char* kRead = "read-token-for-tests";

class Storage {
 public:
  // With tokens "" the flags are left out: storage generates its own.
  explicit Storage(std::vector<std::string> extra = {}, std::string write = kWrite, std::string read = kRead,
                   std::vector<std::string> env = {})
      : port_(testing::FreePort()), extra_(std::move(extra)), env_(std::move(env)), token_(write) {
    if (!write.empty()) extra_.insert(extra_.end(), {"--write-token", write});
    if (!read.empty()) extra_.insert(extra_.end(), {"--read-token", read});
    Start();
  }
  void Start() {
    proc_.reset();
    std::vector<std::string> argv{testing::BinPath("folio-storage"), "--listen", "127.0.0.1:" + std::to_string(port_),
                                  "--data", data()};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    proc_ = std::make_unique<testing::Process>(argv, env_, dir_.path() + "/storage.log");
    REQUIRE(testing::WaitForHttp(url() + "/readyz", 200, 10000));
  }
  void Kill() { proc_->Kill(); }
  pid_t pid() const { return proc_ ? proc_->pid() : -1; }
  void Stop() { proc_->Stop(15); }  // a clean stop writes a checkpoint
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  std::string data() const { return dir_.path() + "/journal"; }
  std::string Log() const {
    std::ifstream in(dir_.path() + "/storage.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // The token Do() sends (the write token unless changed).
  void UseToken(std::string token) { token_ = std::move(token); }

  http::ClientResponse Do(const std::string& method, const std::string& path, const std::string& body = "",
                          std::vector<std::pair<std::string, std::string>> headers = {}) {
    http::ClientRequest req;
    req.method = method;
    req.url = url() + path;
    req.body = body;
    req.headers = std::move(headers);
    if (!token_.empty()) req.headers.emplace_back("Authorization", "Bearer " + token_);
    auto r = http::Fetch(req);
    return r.ok() ? *r : http::ClientResponse{};
  }
  http::ClientResponse Put(const std::string& data, const std::string& type = "image/png") {
    return Do("PUT", "/blobs/sha256/" + Sha256Hex(data), data, {{"Content-Type", type}});
  }

 private:
  testing::TempDir dir_;
  int port_;
  std::vector<std::string> extra_, env_;
  std::string token_;
  std::unique_ptr<testing::Process> proc_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

inline mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_mode & 0777 : 0;
}

// Runs folio-storage to its exit (it must refuse to start); output in *out.
inline int RunToExit(std::vector<std::string> args, std::string* out) {
  std::string cmd = "'" + testing::BinPath("folio-storage") + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

inline std::string SegmentPath(const std::string& journal_dir) {
  std::string only;
  for (const auto& e : std::filesystem::directory_iterator(journal_dir)) {
    if (e.path().filename().string().starts_with("segment-")) only = e.path().string();
  }
  return only;
}

}  // namespace folio::it
