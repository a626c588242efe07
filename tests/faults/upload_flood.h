// Helpers of the upload-flood tests (abuse_bodies_test.cc, issue 22): many
// raw uploads at once, each sending junk body bytes as fast as the server
// takes them while watching for the answer, and a sampler of a process's
// resident memory. Test code only.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../integration/test_util.h"

namespace folio::it {

// What one upload saw.
struct UploadOutcome {
  int status = 0;            // 0: no answer
  std::string head, body;    // the answer's head (lower-cased names kept as sent) and body
  uint64_t sent = 0;         // body bytes sent when the answer was complete
  uint64_t body_bytes = 0;   // the body it meant to send
  bool answered_early() const { return status != 0 && sent < body_bytes; }
  std::string Header(const std::string& name) const {
    std::string lower = head;
    for (char& ch : lower) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
    std::string want = "\r\n" + name + ":";
    for (char& ch : want) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
    size_t at = lower.find(want);
    if (at == std::string::npos) return "";
    size_t from = at + want.size();
    while (from < head.size() && head[from] == ' ') ++from;
    return head.substr(from, head.find("\r\n", from) - from);
  }
};

// Whether `got` holds a whole answer (head plus Content-Length body); fills
// the outcome's status, head and body when it does.
inline bool WholeAnswer(const std::string& got, UploadOutcome* out) {
  size_t end = got.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  UploadOutcome probe;
  probe.head = got.substr(0, end + 2);
  size_t length = static_cast<size_t>(atol(probe.Header("content-length").c_str()));
  if (got.size() < end + 4 + length) return false;
  out->status = atoi(got.c_str() + 9);
  out->head = probe.head;
  out->body = got.substr(end + 4, length);
  return true;
}

// Sends `head` (request line and headers, ending "\r\n\r\n") and then
// body_bytes junk bytes as fast as the socket takes them, reading at the
// same time; stops sending once the answer is whole (as curl does when it
// gets an answer mid-upload). `go` lets many uploads start together.
inline UploadOutcome RawUpload(int port, const std::string& head, uint64_t body_bytes, std::barrier<>* go,
                               int timeout_s = 60) {
  UploadOutcome out;
  out.body_bytes = body_bytes;
  int fd = Connect(port);
  go->arrive_and_wait();
  if (fd < 0) return out;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::string pending = head;
  size_t head_left = head.size();
  const std::string junk(256 * 1024, 'x');
  std::string got;
  char buf[65536];
  bool sending = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, static_cast<short>(POLLIN | (sending ? POLLOUT : 0)), 0};
    if (poll(&p, 1, 100) <= 0) continue;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n > 0) got.append(buf, static_cast<size_t>(n));
      if (WholeAnswer(got, &out) || n == 0 || (n < 0 && errno != EAGAIN)) break;
    }
    if (sending && (p.revents & POLLOUT)) {
      if (pending.empty() && out.sent < body_bytes) pending = junk.substr(0, std::min<uint64_t>(junk.size(), body_bytes - out.sent));
      ssize_t n = pending.empty() ? 0 : send(fd, pending.data(), pending.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN) sending = false;  // reset by the server: read what it answered
      if (n > 0) {
        size_t k = static_cast<size_t>(n);
        size_t of_head = std::min<size_t>(k, head_left);
        head_left -= of_head;
        out.sent += k - of_head;
        pending.erase(0, k);
      }
      if (pending.empty() && out.sent == body_bytes) sending = false;
    }
  }
  close(fd);
  return out;
}

// A process's memory from /proc/<pid>/status ("VmRSS", "VmHWM"), in bytes; 0
// if unreadable.
inline uint64_t ProcStatusBytes(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10) * 1024;
  }
  return 0;
}

// Samples a process's VmRSS every 2 ms until stopped; the highest is the
// peak. Resets the kernel's own high-water mark (VmHWM) at start when it
// may, so that the two can be compared.
class RssSampler {
 public:
  explicit RssSampler(pid_t pid) : pid_(pid) {
    std::ofstream("/proc/" + std::to_string(pid) + "/clear_refs") << "5";  // VmHWM := VmRSS
    start_ = ProcStatusBytes(pid, "VmRSS");
    peak_ = start_;
    thread_ = std::thread([this] {
      while (!stop_) {
        peak_ = std::max<uint64_t>(peak_, ProcStatusBytes(pid_, "VmRSS"));
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  ~RssSampler() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint64_t start() const { return start_; }
  // The highest of the samples and the kernel's high-water mark since start.
  uint64_t peak() const { return std::max<uint64_t>(peak_, ProcStatusBytes(pid_, "VmHWM")); }
  uint64_t now() const { return ProcStatusBytes(pid_, "VmRSS"); }

 private:
  pid_t pid_;
  uint64_t start_ = 0;
  std::atomic<uint64_t> peak_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

inline double MiB(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace folio::it
