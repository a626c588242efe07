// Small helpers the integration and fault tests share: polling with a
// deadline, deterministic random bytes, files of a test's vault, one series
// of a /metrics text, and a raw HTTP exchange on a loopback port (for what a well-behaved client
// cannot send). Test code only; use from the test's thread.
#pragma once

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>

namespace folio::it {

// Polls until `pred` holds; false once timeout_ms passed without (generous
// deadlines: a slow, shared machine and sanitizer builds).
template <typename Pred>
bool Eventually(Pred pred, int timeout_ms = 15000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// n bytes, the same for the same seed.
inline std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    for (size_t j = 0; j < 8 && i + j < n; ++j) s[i + j] = static_cast<char>(v >> (8 * j));
  }
  return s;
}

// Writes text to file, creating its folders first.
inline void WriteFile(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

// A file's bytes; "" if it cannot be read.
inline std::string ReadFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The value of `series` ("name" or "name{labels}") in a Prometheus text, or -1.
inline double Metric(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

// A new connection to 127.0.0.1:port, or -1.
inline int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `raw` on a new connection and reads until the server closes it (or
// 10 s pass). Returns everything the server sent; *closed says whether it
// closed the connection. bytewise: one byte per write, 200 us apart (the
// server may close at a bad byte; the rest is then not sent).
inline std::string Exchange(int port, const std::string& raw, bool* closed, bool bytewise = false) {
  int fd = Connect(port);
  REQUIRE(fd >= 0);
  if (!bytewise) {
    REQUIRE(send(fd, raw.data(), raw.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(raw.size()));
  }
  for (size_t i = 0; bytewise && i < raw.size(); ++i) {
    if (send(fd, &raw[i], 1, MSG_NOSIGNAL) != 1) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::string got;
  char buf[8192];
  *closed = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      *closed = true;
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return got;
}

}  // namespace folio::it
