#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "connection.h"
#include "server_internal.h"

namespace folio::http {

namespace {

constexpr int kBacklog = 511;

void OnListenerClosed(uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); }

void OnConnection(uv_stream_t* listener, int status) {
  if (status < 0) return;  // e.g. EMFILE: the peer stays in the backlog
  Connection::Accept(static_cast<Server::Impl*>(listener->data), listener);
}

// "127.0.0.1", "::1", "[::1]", "" (= 0.0.0.0) -> sockaddr.
bool ParseAddress(std::string host, int port, sockaddr_storage* out) {
  if (host.empty()) host = "0.0.0.0";
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  memset(out, 0, sizeof(*out));
  if (uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(out)) == 0) return true;
  return uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(out)) == 0;
}

// libuv writes with writev(), so a peer that left turns the next write into
// SIGPIPE, whose default action kills the process. Ignore it unless the
// program chose a disposition of its own; the write then fails with EPIPE.
void IgnoreSigpipeIfDefault() {
  struct sigaction old {};
  if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
}

// libuv 1.44 has no UV_TCP_REUSEPORT, so the socket is made here.
int BindReusePort(const sockaddr_storage& addr, std::string* error) {
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = strerror(errno);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  if (addr.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  socklen_t len = addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    *error = strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

Server::Impl::Impl(Loop* l, const Router* r, ServerOptions o)
    : loop(l), loop_impl(l->impl()), router(r), options(o) {
  IgnoreSigpipeIfDefault();
  loop_impl->AddCloser(this);
}

Server::Impl::~Impl() {
  shutdown_done = nullptr;  // never called once the Server is gone
  if (shutdown_timer != 0) loop->CancelTimer(std::exchange(shutdown_timer, 0));
  CloseForStop();
  loop_impl->RemoveCloser(this);
}

void Server::Impl::CloseForStop() {
  CloseListener();
  CloseConnections();
}

void Server::Impl::CloseConnections() {
  while (connections != nullptr) connections->Close();  // Close unlinks it
}

void Server::Impl::AcceptPending() {
  if (listener == nullptr) return;
  uv_os_fd_t fd;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(listener), &fd) != 0) return;
  // Bounded: on a flooded listener the queue refills as fast as we take.
  for (int i = 0; i < 2 * kBacklog; ++i) {
    int c = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: the queue is empty
    }
    Connection::Adopt(this, c);
  }
}

void Server::Impl::CloseListener() {
  if (listener == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(std::exchange(listener, nullptr)), OnListenerClosed);
}

void Server::Impl::Link(Connection* c) {
  c->next = connections;
  if (connections != nullptr) connections->prev = c;
  connections = c;
  ++open_connections;
}

void Server::Impl::OnConnectionClosed(Connection* c) {
  if (c->prev != nullptr) c->prev->next = c->next;
  if (c->next != nullptr) c->next->prev = c->prev;
  if (connections == c) connections = c->next;
  c->prev = c->next = nullptr;
  --open_connections;
  MaybeFinishShutdown();
}

void Server::Impl::MaybeFinishShutdown() {
  if (!shutting_down || open_connections != 0 || !shutdown_done) return;
  if (shutdown_timer != 0) loop->CancelTimer(std::exchange(shutdown_timer, 0));
  // Posted, not called: the caller may be deep inside a connection callback
  // and `done` may well destroy this Server.
  loop->Post(std::exchange(shutdown_done, nullptr));
}

Status Server::Impl::StartListening(int port_hint) {
  int rc = uv_listen(reinterpret_cast<uv_stream_t*>(listener), kBacklog, OnConnection);
  if (rc != 0) {
    CloseListener();
    return Status::Unavailable(std::string("listen: ") + uv_strerror(rc));
  }
  sockaddr_storage ss;
  int len = sizeof(ss);
  port = port_hint;
  if (uv_tcp_getsockname(listener, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                    : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  }
  return Status::Ok();
}

Server::Server(Loop* loop, const Router* router, ServerOptions options)
    : impl_(std::make_unique<Impl>(loop, router, options)) {}

Server::~Server() = default;

Status Server::Listen(const std::string& host, int port, bool reuse_port) {
  if (impl_->listener != nullptr) return Status::Invalid("server is already listening");
  if (port < 0 || port > 65535) return Status::Invalid("port out of range: " + std::to_string(port));
  sockaddr_storage addr;
  if (!ParseAddress(host, port, &addr)) {
    return Status::Invalid("listen address is not an IP literal: '" + host + "'");
  }
  std::string where = host + ":" + std::to_string(port);
  impl_->listener = new uv_tcp_t;
  uv_tcp_init(&impl_->loop_impl->uv, impl_->listener);
  impl_->listener->data = impl_.get();
  int rc = 0;
  if (reuse_port) {
    std::string error;
    int fd = BindReusePort(addr, &error);
    if (fd < 0) {
      impl_->CloseListener();
      return Status::Unavailable("bind " + where + ": " + error);
    }
    rc = uv_tcp_open(impl_->listener, fd);
    if (rc != 0) close(fd);
  } else {
    rc = uv_tcp_bind(impl_->listener, reinterpret_cast<const sockaddr*>(&addr), 0);
  }
  if (rc != 0) {
    impl_->CloseListener();
    return Status::Unavailable("bind " + where + ": " + uv_strerror(rc));
  }
  Status s = impl_->StartListening(port);
  if (!s.ok()) return Status::Unavailable(where + ": " + s.message());
  return s;
}

Status Server::ListenFd(int fd) {
  if (impl_->listener != nullptr) return Status::Invalid("server is already listening");
  impl_->listener = new uv_tcp_t;
  uv_tcp_init(&impl_->loop_impl->uv, impl_->listener);
  impl_->listener->data = impl_.get();
  int rc = uv_tcp_open(impl_->listener, fd);
  if (rc != 0) {
    impl_->CloseListener();
    // Not libuv's yet (once it is, closing the listener closes it): ours all
    // the same, or a caller's dup of a shared socket would leak (the edge's).
    // UV_EEXIST: another handle on this loop has it.
    if (rc != UV_EEXIST) close(fd);
    return Status::Invalid("fd " + std::to_string(fd) + ": " + uv_strerror(rc));
  }
  return impl_->StartListening(0);
}

Status Server::ListenActivatedOrBind(const std::string& host, int port) {
  if (std::vector<int> fds = SystemdListenFds(); !fds.empty()) return ListenFd(fds[0]);
  return Listen(host, port, /*reuse_port=*/true);
}

int Server::port() const { return impl_->port; }

void Server::Shutdown(std::function<void()> done) {
  Impl* s = impl_.get();
  if (s->shutting_down) {  // again (a second signal): the drain goes on, with this done
    s->shutdown_done = std::move(done);
    s->MaybeFinishShutdown();
    return;
  }
  StopAccepting();  // before shutting_down: those accepted are drained like the others
  s->shutting_down = true;
  s->shutdown_done = std::move(done);
  for (Connection* c = s->connections; c != nullptr;) {
    Connection* next = c->next;  // OnServerShutdown may close (and unlink) c
    c->OnServerShutdown();
    c = next;
  }
  if (s->options.shutdown_timeout_ms > 0 && s->open_connections > 0) {
    s->shutdown_timer = s->loop->After(s->options.shutdown_timeout_ms, [s] {
      s->shutdown_timer = 0;
      s->CloseConnections();
    });
  }
  s->MaybeFinishShutdown();
}

void Server::StopAccepting() {
  impl_->AcceptPending();
  impl_->CloseListener();
}

size_t Server::open_connections() const { return impl_->open_connections; }

uint64_t Server::requests_served() const { return impl_->requests_served; }

std::vector<int> SystemdListenFds() {
  const char* pid = getenv("LISTEN_PID");
  const char* fds = getenv("LISTEN_FDS");
  if (pid == nullptr || fds == nullptr) return {};
  char* end = nullptr;
  long p = strtol(pid, &end, 10);
  if (*end != '\0' || p != static_cast<long>(getpid())) return {};
  long n = strtol(fds, &end, 10);
  if (*end != '\0' || n <= 0 || n > 1024) return {};
  std::vector<int> out;
  for (int fd = 3; fd < 3 + n; ++fd) out.push_back(fd);
  return out;
}

}  // namespace folio::http
