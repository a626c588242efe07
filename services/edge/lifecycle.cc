#include "lifecycle.h"

#include <fcntl.h>

#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include "folio/core/log.h"

namespace folio::edge {

namespace {

// A handover on a shared port (SO_REUSEPORT) is clean only when the kernel
// moves the connections queued on a closing listener to a sibling
// (net.ipv4.tcp_migrate_req, Linux 5.14+); otherwise it resets the few whose
// handshake lands between the old edge's last accept and its close. Said
// once at start, where the operator can act on it (deploy/RESTARTS.md).
void WarnIfHandoverResets() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_migrate_req");
  std::string value;
  if (!(in >> value) || value != "0") return;  // 1, or a kernel without it: nothing to say
  log::Warn("net.ipv4.tcp_migrate_req is 0: a handover on this port (a new edge started before this one stops) "
            "can reset a connection the kernel queued for the old edge as it closed its socket; set it to 1 "
            "(sysctl -w net.ipv4.tcp_migrate_req=1) or use socket activation");
}

}  // namespace

void EdgeState::SetNotReady(std::string why) {
  std::lock_guard<std::mutex> lock(mu_);
  why_ = std::move(why);
}

std::string EdgeState::Readiness() const {
  if (stopping) return "shutting down";
  if (ready) return "";
  std::lock_guard<std::mutex> lock(mu_);
  return why_;
}

PublicPort::PublicPort(std::vector<Worker*> workers, std::string host, int port, std::vector<int> fds,
                       EdgeState* state, std::function<void()> shutdown, std::function<size_t()> pages)
    : workers_(std::move(workers)), host_(std::move(host)), port_(port), fds_(std::move(fds)), state_(state),
      shutdown_(std::move(shutdown)), pages_(std::move(pages)) {}

void PublicPort::OnReplayed() {
  state_->SetNotReady("replay applied; binding the public port");
  auto pending = std::make_shared<std::atomic<size_t>>(workers_.size());
  for (Worker* w : workers_) {
    w->loop().Post([this, pending] {
      if (--*pending == 0) ListenFrom(0, port_);
    });
  }
}

void PublicPort::ListenFrom(size_t i, int at_port) {
  Worker* wp = workers_[i];
  wp->loop().Post([this, i, at_port, wp] {
    if (state_->stopping) return;
    Status s;
    if (fds_.empty()) {
      s = wp->server().Listen(host_, at_port, /*reuse_port=*/true);
    } else {
      // One inherited socket, shared: each worker's listener owns a copy
      // (ListenFd closes it also when it fails: nothing leaks).
      int fd = i == 0 ? fds_[0] : fcntl(fds_[0], F_DUPFD_CLOEXEC, 0);
      s = fd < 0 ? Status::Unavailable("dup of the systemd socket failed") : wp->server().ListenFd(fd);
    }
    if (!s.ok()) {
      log::Error("cannot listen; stopping", {{"error", s.message()}});
      state_->exit_code = 1;
      shutdown_();
      return;
    }
    if (i + 1 < workers_.size()) {
      ListenFrom(i + 1, wp->server().port());
      return;
    }
    state_->ready = true;
    if (fds_.empty()) WarnIfHandoverResets();
    log::Info("folio-edge listening; ready",
              {{"addr", fds_.empty() ? host_ + ":" + std::to_string(wp->server().port()) : "systemd socket"},
               {"pages", std::to_string(pages_())}});
  });
}

void StopWorkers(const std::vector<Worker*>& workers, metrics::OpsEndpoints* ops) {
  ops->BeginDrain();
  Worker* w0 = workers[0];
  // Phase 2, once every listener is closed: each worker drains; the last
  // to finish has worker 0's loop drain the admin server, then stop.
  auto drain_all = [workers, ops, w0] {
    auto left = std::make_shared<std::atomic<size_t>>(workers.size());
    for (size_t i = 0; i < workers.size(); ++i) {
      Worker* wp = workers[i];
      wp->loop().Post([wp, i, left, w0, ops] {
        wp->server().Shutdown([wp, i, left, w0, ops] {
          if (i != 0) wp->loop().Stop();
          if (--*left > 0) return;
          w0->loop().Post([w0, ops] { ops->Drain(nullptr, [w0] { w0->loop().Stop(); }); });
        });
      });
    }
  };
  // Phase 1: every worker stops accepting.
  auto closed = std::make_shared<std::atomic<size_t>>(workers.size());
  for (Worker* wp : workers) {
    wp->loop().Post([wp, closed, drain_all] {
      wp->server().StopAccepting();
      if (--*closed == 0) drain_all();
    });
  }
}

}  // namespace folio::edge
