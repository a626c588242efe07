#include "folio/testing/testing.h"
#include "folio/testing/load.h"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace folio::testing {

namespace {

// A tiny blocking HTTP server for HttpLoad's test: answers "ok" with
// keep-alive; every 3rd request on a connection says Connection: close;
// "/drop" closes the connection without an answer.
class TinyServer {
 public:
  TinyServer() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    listen(fd_, 64);
    thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~TinyServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    for (auto& t : conns_) t.join();
  }
  int port() const { return port_; }

 private:
  void AcceptLoop() {
    for (;;) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      conns_.emplace_back([this, c] { Serve(c); });
    }
  }
  void Serve(int c) {
    std::string buf;
    char chunk[4096];
    for (int n = 1; !stop_; ++n) {
      size_t end;
      while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
        ssize_t got = recv(c, chunk, sizeof chunk, 0);
        if (got <= 0) {
          close(c);
          return;
        }
        buf.append(chunk, static_cast<size_t>(got));
      }
      bool drop = buf.rfind("GET /drop ", 0) == 0;
      buf.erase(0, end + 4);
      if (drop) break;
      std::string resp = std::string("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n") +
                         (n % 3 == 0 ? "Connection: close\r\n" : "") + "\r\nok";
      send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
      if (n % 3 == 0) break;
    }
    close(c);
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::thread> conns_;
};

}  // namespace

TEST_CASE("HttpLoad counts responses, reconnects after Connection: close, and errors") {
  TinyServer server;
  LoadOptions o;
  o.port = server.port();
  o.paths = {"/a", "/b"};
  o.connections = 2;
  {
    HttpLoad load(o);
    load.Start();
    CHECK(load.WaitForResponses(60, 10000));
    LoadStats s = load.Stop();
    INFO(s.Describe());
    CHECK(s.Count(200) == s.requests);
    CHECK(s.errors == 0);
    CHECK(s.connect_errors == 0);
    CHECK(s.reconnects >= 10);  // every 3rd answer closes
  }
  {
    o.requests_per_connection = 2;  // the client asks to close first
    HttpLoad load(o);
    load.Start();
    CHECK(load.WaitForResponses(60, 10000));
    LoadStats s = load.Stop();
    INFO(s.Describe());
    CHECK(s.errors == 0);
    CHECK(s.reconnects >= s.requests / 2 - 2);
    o.requests_per_connection = 0;
  }
  o.paths = {"/a", "/drop"};
  o.connections = 1;
  HttpLoad dropping(o);
  dropping.Start();
  CHECK(dropping.WaitForResponses(5, 10000));
  LoadStats s = dropping.Stop();
  INFO(s.Describe());
  CHECK(s.errors >= 5);  // every /drop is a request without an answer
  CHECK(!s.samples.empty());

  LoadOptions closed;
  closed.port = FreePort();
  closed.paths = {"/"};
  closed.connections = 1;
  HttpLoad refused(closed);
  refused.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  LoadStats r = refused.Stop();
  CHECK(r.connect_errors > 0);
  CHECK(r.requests == 0);
}

TEST_CASE("TempDir is created and removed with its contents") {
  std::string path;
  {
    TempDir dir;
    path = dir.path();
    CHECK(std::filesystem::is_directory(path));
    std::filesystem::create_directories(path + "/a/b");
    std::ofstream(path + "/a/b/f") << "x";
  }
  CHECK(!std::filesystem::exists(path));
}

TEST_CASE("FreePort returns a usable port") {
  int port = FreePort();
  CHECK(port > 0);
  CHECK(port < 65536);
}

TEST_CASE("Process passes env, logs output and reports the exit status") {
  TempDir dir;
  std::string log = dir.path() + "/out.log";
  Process p({"sh", "-c", "echo out=$FOLIO_X; echo err >&2; exit 3"}, {"FOLIO_X=42"}, log);
  int status = p.Stop(0, 5000);  // signal 0: just wait
  REQUIRE(status != -1);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  std::stringstream ss;
  ss << std::ifstream(log).rdbuf();
  CHECK(ss.str() == "out=42\nerr\n");
}

TEST_CASE("Process passes a listening socket as systemd does: fd 3, LISTEN_FDS=1, LISTEN_PID=<child pid>") {
  TempDir dir;
  std::string log = dir.path() + "/out.log";
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(fd, 16) == 0);
  char target[128] = {};
  REQUIRE(readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), target, sizeof target - 1) > 0);
  Process p({"sh", "-c", "echo \"$LISTEN_FDS $LISTEN_PID $$ $(readlink /proc/$$/fd/3)\""}, {}, log, fd);
  int status = p.Stop(0, 5000);
  REQUIRE(status != -1);
  CHECK(WEXITSTATUS(status) == 0);
  std::stringstream ss;
  ss << std::ifstream(log).rdbuf();
  std::string pid = std::to_string(p.pid());
  CHECK(ss.str() == "1 " + pid + " " + pid + " " + target + "\n");
  close(fd);
}

TEST_CASE("Process::Stop signals the whole process group") {
  Process p({"sh", "-c", "sleep 30 & sleep 30; wait"});
  CHECK(p.Running());
  int status = p.Stop(SIGTERM, 5000);
  REQUIRE(status != -1);
  CHECK(WIFSIGNALED(status));
  CHECK(!p.Running());
}

TEST_CASE("WaitForHttp gives up on a closed port") {
  std::string url = "http://127.0.0.1:" + std::to_string(FreePort()) + "/";
  CHECK(!WaitForHttp(url, 200, 100));
}

TEST_CASE("NatsServer answers on its port") {
  NatsServer server;
  CHECK(server.url() == "nats://127.0.0.1:" + std::to_string(server.port()));
  server.Restart();
  CHECK(server.port() > 0);
}

}  // namespace folio::testing
