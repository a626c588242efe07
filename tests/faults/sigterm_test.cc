// Fault test (issue 10, "restarts that drop nothing"): SIGTERM on every
// service, in the order operators rely on. Each service runs as a real
// process with --admin-listen; a request is half sent on its public port
// (head or body); then SIGTERM. What must hold, for ingest, edge, search and
// storage alike:
//  - /readyz on the admin port answers 503 "shutting down" while the drain
//    runs (a load balancer stops sending; the admin port keeps answering
//    probes until the public port has drained);
//  - the half-sent request, completed after the SIGTERM, gets the same
//    answer it gets from a running service, with `Connection: close`;
//  - the public port refuses new connections (the listener is closed);
//  - the process exits with status 0.
// And without --admin-listen, /readyz on the public port says the same on a
// connection opened before the SIGTERM.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../integration/cluster.h"
#include "folio/core/hash.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"

using namespace folio;
using namespace folio::it;

namespace {

constexpr int kWaitMs = 60'000;  // generous: a slow, noisy machine, sanitizer builds

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{kWaitMs / 1000, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// One raw HTTP/1.1 request sent in two parts: the first on construction,
// the rest by Finish(), which then reads until the server closes.
class SlowRequest {
 public:
  SlowRequest(int port, std::string request, size_t split) : request_(std::move(request)), split_(split) {
    fd_ = Connect(port);
    REQUIRE(fd_ >= 0);
    REQUIRE(SendAll(fd_, std::string_view(request_).substr(0, split_)));
  }
  ~SlowRequest() {
    if (fd_ >= 0) close(fd_);
  }
  // The raw response: head and Content-Length bytes of body ("" if none came).
  std::string Finish() {
    if (!SendAll(fd_, std::string_view(request_).substr(split_))) return "";
    std::string out;
    char buf[16384];
    for (;;) {
      size_t head = out.find("\r\n\r\n");
      if (head != std::string::npos) {
        size_t cl = out.find("Content-Length: ");
        size_t body = cl == std::string::npos || cl > head ? 0 : std::strtoul(out.c_str() + cl + 16, nullptr, 10);
        if (out.size() >= head + 4 + body) break;
      }
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  // Whether the server closes the connection (EOF) within ms, sending
  // nothing more.
  bool ClosedByServer(int ms) {
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char c;
    return recv(fd_, &c, 1, 0) == 0;
  }

 private:
  int fd_ = -1;
  std::string request_;
  size_t split_;
};

// Whether another socket can bind and listen on 127.0.0.1:port with
// SO_REUSEPORT: only if the service's listener has it too (a handover).
bool CanSharePort(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);  // never listened: takes no connection of the service's
  return ok;
}

// "HTTP/1.1 200 OK\r\n..." -> 200; 0 if not a response.
int StatusOf(const std::string& raw) {
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || raw.size() < 12) return 0;
  return std::atoi(raw.c_str() + 9);
}

// One folio service process on a public port and (optionally) an admin port.
class Service {
 public:
  Service(const std::string& dir, const std::string& name, std::vector<std::string> args, bool admin = true)
      : log_(dir + "/" + name + ".log"), port_(testing::FreePort()), admin_port_(admin ? testing::FreePort() : 0) {
    std::vector<std::string> argv{testing::BinPath(name), "--listen", "127.0.0.1:" + std::to_string(port_)};
    if (admin) argv.insert(argv.end(), {"--admin-listen", "127.0.0.1:" + std::to_string(admin_port_)});
    argv.insert(argv.end(), args.begin(), args.end());
    proc_ = std::make_unique<testing::Process>(argv, std::vector<std::string>{}, log_);
  }
  int port() const { return port_; }
  std::string AdminUrl(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(admin_port_) + path;
  }
  std::string PublicUrl(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  void Signal(int signum) { kill(proc_->pid(), signum); }
  int Wait() { return proc_->Stop(0, kWaitMs); }  // signal 0: only waits
  std::string Log() const { return log_ + ":\n" + ReadFile(log_); }

 private:
  std::string log_;
  int port_, admin_port_;
  std::unique_ptr<testing::Process> proc_;
};

// How a drained service tells the client in flight that its connection ends.
enum class CloseSignal {
  // `Connection: close` on the answer: one server, whose Shutdown stops
  // accepting and starts draining in one loop turn.
  kHeader,
  // Several servers on one port (the edge's workers): all stop accepting,
  // then each starts draining, so an answer may fall between the two and
  // promise keep-alive. Then the server must close the idle connection
  // after its grace (1 s), never leave it open.
  kHeaderOrClose,
};

// The SIGTERM drill on `svc`: `request` (raw, split at `split`) must get
// `expected`, or (0) the answer a running service gives it, after the SIGTERM.
void DrainDrill(Service& svc, const std::string& request, size_t split, int expected = 0,
                CloseSignal close_signal = CloseSignal::kHeader) {
  INFO(svc.Log());
  REQUIRE(testing::WaitForHttp(svc.AdminUrl("/readyz"), 200, kWaitMs));
  if (expected == 0) expected = StatusOf(SlowRequest(svc.port(), request, request.size()).Finish());
  REQUIRE(expected != 0);
  CHECK(CanSharePort(svc.port()));  // SO_REUSEPORT: a new process could bind it now

  SlowRequest in_flight(svc.port(), request, split);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the server read the first part
  svc.Signal(SIGTERM);
  // Readiness turns first, and the admin port keeps answering while the
  // public port drains (our request holds the drain open).
  http::ClientResponse ready;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = http::Get(svc.AdminUrl("/readyz"));
    if (r.ok()) ready = *r;
    if (ready.status == 503) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(ready.status == 503);
  CHECK(ready.body.find("shutting down") != std::string::npos);
  // Then the listener closes: new connections are refused (nothing else
  // shares this port). The edge's workers close theirs just after readiness
  // turned, hence the poll.
  bool refused = false;
  while (!refused && std::chrono::steady_clock::now() < deadline) {
    int fd = Connect(svc.port());
    refused = fd < 0;
    if (fd >= 0) close(fd);
    else break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(refused);

  std::string answer = in_flight.Finish();
  CHECK(StatusOf(answer) == expected);
  bool close_header = answer.find("Connection: close") != std::string::npos;
  if (close_signal == CloseSignal::kHeader || close_header) {
    CHECK(close_header);
  } else {
    CHECK(in_flight.ClosedByServer(10'000));
  }
  int status = svc.Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

std::string PushRequest(int n) {
  std::string body = PushBody({{"sig/note " + std::to_string(n) + ".md", "# Note\n\nText.\n"}});
  return "POST /api/v1/push HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + std::string(kToken) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace

TEST_CASE("faults: SIGTERM drains folio-ingest: readyz 503, the push in flight commits, exit 0") {
  testing::NatsServer nats;
  testing::TempDir dir;
  Service ingest(dir.path(), "folio-ingest",
                 {"--nats", nats.url(), "--data", dir.path() + "/ingest", "--token", kToken});
  // A second folio-ingest on the same data never writes (issue 23): it
  // waits for the lease as a standby with --data closed, answering its
  // port 503 (not_leader); SIGTERM ends it.
  REQUIRE(testing::WaitForHttp(ingest.AdminUrl("/readyz"), 200, kWaitMs));
  {
    Service twin(dir.path(), "folio-ingest",
                 {"--nats", nats.url(), "--data", dir.path() + "/ingest", "--token", kToken});
    INFO(twin.Log());
    CHECK(testing::WaitForHttp(twin.PublicUrl("/readyz"), 503, kWaitMs));
    CHECK(twin.Log().find("standby: waiting for the lease") != std::string::npos);
    CHECK(twin.Log().find("locked by another process") == std::string::npos);
    twin.Signal(SIGTERM);
    int twin_status = twin.Wait();
    CHECK(WIFEXITED(twin_status));
    CHECK(WEXITSTATUS(twin_status) == 0);
  }
  std::string req = PushRequest(1);
  DrainDrill(ingest, req, req.size() - 10);  // the body's tail comes after the SIGTERM
}

TEST_CASE("faults: SIGTERM drains folio-edge: readyz 503, the page in flight is served, exit 0") {
  Cluster c({}, /*start_services=*/false);
  c.StartIngest();
  REQUIRE(c.Push(PushBody({{"a.md", "# A\n\nText.\n"}})).status == 200);
  Service edge(c.dir(), "folio-edge", {"--nats", c.nats().url(), "--threads", "2"});
  std::string req = "GET /a HTTP/1.1\r\nHost: t\r\n\r\n";
  // The head's last CRLF comes after the SIGTERM.
  DrainDrill(edge, req, req.size() - 2, 0, CloseSignal::kHeaderOrClose);
}

TEST_CASE("faults: SIGTERM drains folio-search: readyz 503, the query in flight is answered, exit 0") {
  testing::NatsServer nats;
  testing::TempDir dir;
  Service search(dir.path(), "folio-search", {"--nats", nats.url(), "--data", dir.path() + "/search"});
  std::string req = "GET /api/v1/search?q=note&mode=text HTTP/1.1\r\nHost: t\r\n\r\n";
  DrainDrill(search, req, req.size() - 2);
}

TEST_CASE("faults: SIGTERM drains folio-storage: readyz 503, the upload in flight is stored, exit 0") {
  testing::TempDir dir;
  Service storage(dir.path(), "folio-storage",
                  {"--data", dir.path() + "/storage", "--write-token", kStorageWriteToken, "--read-token",
                   kStorageReadToken});
  std::string body(64 * 1024, 'x');
  std::string req = "PUT /blobs/sha256/" + Sha256Hex(body) + " HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " +
                    std::string(kStorageWriteToken) + "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\n\r\n" + body;
  DrainDrill(storage, req, req.size() - 1000, 201);  // 201: stored
  // What was stored during the drain survives the restart.
  Service again(dir.path(), "folio-storage",
                {"--data", dir.path() + "/storage", "--write-token", kStorageWriteToken, "--read-token",
                 kStorageReadToken});
  REQUIRE(testing::WaitForHttp(again.AdminUrl("/readyz"), 200, kWaitMs));
  auto r = http::Get(again.PublicUrl("/blobs/sha256/" + Sha256Hex(body)),
                     {{"Authorization", "Bearer " + std::string(kStorageReadToken)}});
  REQUIRE(r.ok());
  CHECK(r->status == 200);
  CHECK(r->body == body);
}

TEST_CASE("faults: without --admin-listen, /readyz on the public port says 503 shutting down during the drain") {
  testing::NatsServer nats;
  testing::TempDir dir;
  Service ingest(dir.path(), "folio-ingest",
                 {"--nats", nats.url(), "--data", dir.path() + "/ingest", "--token", kToken}, /*admin=*/false);
  INFO(ingest.Log());
  REQUIRE(testing::WaitForHttp(ingest.PublicUrl("/readyz"), 200, kWaitMs));
  // A probe half sent before the SIGTERM is completed during the drain.
  std::string probe = "GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n";
  SlowRequest in_flight(ingest.port(), probe, probe.size() - 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ingest.Signal(SIGTERM);
  // The service logs "shutting down" as it starts the drain.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (ReadFile(dir.path() + "/folio-ingest.log").find("shutting down") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string answer = in_flight.Finish();
  CHECK(StatusOf(answer) == 503);
  CHECK(answer.find("shutting down") != std::string::npos);
  CHECK(answer.find("Connection: close") != std::string::npos);
  int status = ingest.Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
