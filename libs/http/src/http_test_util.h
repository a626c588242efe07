// Test helpers shared by http_test.cc and stream_test.cc: a Server on its own
// loop thread, a raw client socket, and response picking. Tests only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "folio/core/text.h"
#include "folio/http/loop.h"
#include "folio/http/server.h"

namespace folio::http::test {

// Runs fn on the loop thread and returns its result.
template <typename F>
auto OnLoop(Loop& loop, F fn) -> decltype(fn()) {
  auto task = std::make_shared<std::packaged_task<decltype(fn())()>>(std::move(fn));
  auto result = task->get_future();
  loop.Post([task] { (*task)(); });
  return result.get();
}

// A Server on its own loop thread. Add routes, then Start().
struct TestServer {
  Loop loop;
  Router router;
  std::unique_ptr<Server> server;
  std::thread thread;

  void Start(ServerOptions options = {}) {
    server = std::make_unique<Server>(&loop, &router, options);
    REQUIRE(server->Listen("127.0.0.1", 0).ok());
    REQUIRE(server->port() > 0);
    thread = std::thread([this] { loop.Run(); });
  }
  // Stops the loop and joins its thread; the Loop object stays valid, and
  // tasks posted to it from now on are dropped. Idempotent.
  void Stop() {
    loop.Stop();
    if (thread.joinable()) thread.join();
  }
  ~TestServer() {
    Stop();
    server.reset();
  }
  int port() const { return server->port(); }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port()) + path;
  }
};

// A raw client socket with a read-ahead buffer.
struct RawConn {
  int fd = -1;
  std::string pending;

  explicit RawConn(int port, int timeout_s = 3) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{timeout_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~RawConn() { Close(); }
  void Close() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  bool connected = false;

  void Send(std::string_view s) {
    while (!s.empty()) {
      ssize_t n = send(fd, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      s.remove_prefix(static_cast<size_t>(n));
    }
  }
  // Reads more into pending; false on EOF, error or timeout.
  bool Fill() {
    char b[65536];
    ssize_t n = recv(fd, b, sizeof(b), 0);
    if (n <= 0) return false;
    pending.append(b, static_cast<size_t>(n));
    return true;
  }
  // One response: head and (unless head_only or bodiless) Content-Length body.
  std::string ReadResponse(bool head_only = false) {
    size_t end;
    while ((end = pending.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return std::exchange(pending, "");
    }
    std::string head = pending.substr(0, end + 4);
    size_t body_len = 0;
    int status = atoi(head.c_str() + 9);
    std::string lower = AsciiLower(head);
    size_t cl = lower.find("\r\ncontent-length:");
    if (!head_only && status >= 200 && status != 204 && status != 304 && cl != std::string::npos) {
      body_len = static_cast<size_t>(atol(head.c_str() + cl + 17));
    }
    while (pending.size() < end + 4 + body_len) {
      if (!Fill()) break;
    }
    std::string out = pending.substr(0, end + 4 + body_len);
    pending.erase(0, out.size());
    return out;
  }
  // Everything until the peer closes (or the timeout passes).
  std::string ReadToClose() {
    while (Fill()) {
    }
    return std::exchange(pending, "");
  }
  // True if the peer closed the connection (EOF) rather than timing out.
  bool PeerClosed() {
    char b[256];
    ssize_t n;
    while ((n = recv(fd, b, sizeof(b), 0)) > 0) {
    }
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }
};

inline int StatusOf(const std::string& resp) { return resp.size() > 12 ? atoi(resp.c_str() + 9) : 0; }

inline std::string HeaderOf(const std::string& resp, const std::string& name) {
  std::string lower = AsciiLower(resp);
  size_t at = lower.find("\r\n" + AsciiLower(name) + ":");
  if (at == std::string::npos) return "";
  size_t from = at + 3 + name.size();
  while (from < resp.size() && resp[from] == ' ') ++from;
  return resp.substr(from, resp.find("\r\n", from) - from);
}

inline std::string BodyOf(const std::string& resp) {
  size_t end = resp.find("\r\n\r\n");
  return end == std::string::npos ? "" : resp.substr(end + 4);
}

}  // namespace folio::http::test
