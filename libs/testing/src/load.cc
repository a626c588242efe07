// HttpLoad: blocking sockets with poll() deadlines, one thread per connection.
#include "folio/testing/load.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

namespace folio::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxSamples = 8;
constexpr size_t kMaxHead = 64 * 1024;

int MsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// Connects to 127.0.0.1:port within the deadline; -1 and *why on failure.
int Connect(int port, Clock::time_point deadline, std::string* why) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = std::string("socket: ") + strerror(errno);
    return -1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = poll(&p, 1, MsLeft(deadline));
    int err = 0;
    socklen_t len = sizeof err;
    if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      rc = 0;
    } else {
      errno = rc == 0 ? ETIMEDOUT : (err != 0 ? err : errno);
      rc = -1;
    }
  }
  if (rc != 0) {
    *why = std::string("connect: ") + strerror(errno);
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool SendAll(int fd, std::string_view data, Clock::time_point deadline, std::string* why) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, MsLeft(deadline)) <= 0) {
        *why = "send: timed out";
        return false;
      }
      continue;
    }
    *why = std::string("send: ") + strerror(errno);
    return false;
  }
  return true;
}

// Reads more into *buf; false (with *why) on EOF, error or deadline.
bool ReadMore(int fd, std::string* buf, Clock::time_point deadline, std::string* why) {
  char chunk[16384];
  for (;;) {
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      buf->append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) {
      *why = "connection closed by the server before a complete response";
      return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) {
      *why = std::string("recv: ") + strerror(errno);
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, MsLeft(deadline)) <= 0) {
      *why = "recv: timed out";
      return false;
    }
  }
}

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  }
  return true;
}

struct Head {
  int status = 0;
  bool has_length = false;
  uint64_t length = 0;
  bool close = false;
};

// Parses "HTTP/1.1 200 OK\r\n...\r\n\r\n" (without the final blank line's end).
bool ParseHead(std::string_view head, Head* out) {
  if (head.size() < 12 || head.substr(0, 5) != "HTTP/") return false;
  size_t sp = head.find(' ');
  if (sp == std::string_view::npos || sp + 4 > head.size()) return false;
  out->status = 0;
  for (size_t i = sp + 1; i < sp + 4; ++i) {
    if (head[i] < '0' || head[i] > '9') return false;
    out->status = out->status * 10 + (head[i] - '0');
  }
  out->close = head.substr(0, sp) == "HTTP/1.0";
  size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    size_t next = head.find("\r\n", pos + 2);
    std::string_view line = head.substr(pos + 2, next == std::string_view::npos ? std::string_view::npos : next - pos - 2);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string_view name = line.substr(0, colon), value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (IEquals(name, "content-length")) {
        out->has_length = true;
        out->length = std::strtoull(std::string(value).c_str(), nullptr, 10);
      } else if (IEquals(name, "connection")) {
        out->close = IEquals(value, "close");
      }
    }
    pos = next;
  }
  return true;
}

}  // namespace

std::string LoadStats::Describe() const {
  std::string s = std::to_string(requests) + " responses (";
  bool first = true;
  for (const auto& [status, n] : by_status) {
    s += (first ? "" : ", ") + std::to_string(status) + ": " + std::to_string(n);
    first = false;
  }
  s += "), " + std::to_string(errors) + " errors, " + std::to_string(connect_errors) + " connect errors, " +
       std::to_string(reconnects) + " reconnects";
  for (const std::string& e : samples) s += "\n  " + e;
  return s;
}

HttpLoad::HttpLoad(LoadOptions options) : options_(std::move(options)) {}

HttpLoad::~HttpLoad() { Stop(); }

void HttpLoad::Start() {
  stop_ = false;
  for (int i = 0; i < options_.connections; ++i) threads_.emplace_back([this, i] { Run(i); });
}

LoadStats HttpLoad::Stop() {
  stop_ = true;
  for (auto& t : threads_) t.join();
  threads_.clear();
  return Snapshot();
}

LoadStats HttpLoad::Snapshot() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

bool HttpLoad::WaitForResponses(uint64_t n, int timeout_ms) const {
  uint64_t target = Snapshot().requests + n;
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    if (Snapshot().requests >= target) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Snapshot().requests >= target;
}

void HttpLoad::Record(int status, bool error, bool connect_error, bool reconnect, const std::string& what) {
  std::lock_guard<std::mutex> l(mu_);
  if (status != 0) {
    ++stats_.requests;
    ++stats_.by_status[status];
  }
  if (error) ++stats_.errors;
  if (connect_error) ++stats_.connect_errors;
  if (reconnect) ++stats_.reconnects;
  if ((error || connect_error) && stats_.samples.size() < kMaxSamples) stats_.samples.push_back(what);
}

void HttpLoad::Run(int index) {
  const auto& paths = options_.paths;
  size_t next = static_cast<size_t>(index) % (paths.empty() ? 1 : paths.size());
  int fd = -1;
  int on_connection = 0;  // requests sent on fd
  bool connected_before = false;
  std::string buf;
  while (!stop_ && !paths.empty()) {
    auto deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);
    std::string why;
    if (fd < 0) {
      fd = Connect(options_.port, deadline, &why);
      if (fd < 0) {
        Record(0, false, true, false, why);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (connected_before) Record(0, false, false, true, "");
      connected_before = true;
      on_connection = 0;
      buf.clear();
    }
    const std::string& path = paths[next];
    next = (next + 1) % paths.size();
    bool last = options_.requests_per_connection > 0 && ++on_connection >= options_.requests_per_connection;
    std::string req = "GET " + path + " HTTP/1.1\r\nHost: " + options_.host_header + "\r\n" +
                      (options_.accept_gzip ? "Accept-Encoding: gzip\r\n" : "") +
                      (last ? "Connection: close\r\n" : "") + "\r\n";
    Head head;
    bool ok = SendAll(fd, req, deadline, &why);
    size_t end = std::string::npos;
    while (ok && (end = buf.find("\r\n\r\n")) == std::string::npos) {
      ok = buf.size() < kMaxHead && ReadMore(fd, &buf, deadline, &why);
      if (buf.size() >= kMaxHead) why = "response head too large";
    }
    if (ok && !ParseHead(std::string_view(buf).substr(0, end), &head)) {
      ok = false;
      why = "malformed response head: " + buf.substr(0, std::min<size_t>(buf.size(), 80));
    }
    bool bodyless = head.status == 204 || head.status == 304 || (head.status >= 100 && head.status < 200);
    if (ok && !bodyless && !head.has_length) {
      ok = false;
      why = "response without Content-Length";
    }
    uint64_t need = ok ? end + 4 + (bodyless ? 0 : head.length) : 0;
    while (ok && buf.size() < need) ok = ReadMore(fd, &buf, deadline, &why);
    if (!ok) {
      Record(0, true, false, false, "GET " + path + ": " + why);
      close(fd);
      fd = -1;
      continue;
    }
    buf.erase(0, need);
    Record(head.status, false, false, false, "");
    if (head.close || last) {
      close(fd);
      fd = -1;
    }
    if (options_.pause_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(options_.pause_us));
  }
  if (fd >= 0) close(fd);
}

}  // namespace folio::testing
