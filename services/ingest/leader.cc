#include "leader.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "folio/bus/connect.h"
#include "folio/core/json.h"
#include "folio/core/log.h"
#include "folio/http/loop.h"
#include "folio/metrics/metrics.h"

namespace folio::ingest {

std::string DefaultInstance() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof(host), "ingest");
  return std::string(host) + "-" + std::to_string(getpid());
}

Result<std::unique_ptr<Leadership>> Leadership::Start(const ServiceBasics& basics, const LeaseConfig& config) {
  std::unique_ptr<Leadership> l(new Leadership());
  l->ttl_ms_ = config.ttl_ms;
  bus::BusOptions bo = bus::BusOptionsFor(basics, "folio-ingest", nullptr);  // its own user too (issue 24)
  bus::LeaseOptions lo;
  lo.bucket = kLeaseBucket;
  lo.holder = config.instance.empty() ? DefaultInstance() : config.instance;
  lo.replicas = basics.nats_replicas;
  lo.ttl_ms = config.ttl_ms;
  lo.renew_ms = config.renew_ms;
  Leadership* p = l.get();
  auto lease = bus::KvLease::Start(bo, lo, [p](bool leading, const std::string& holder) { p->OnChange(leading, holder); });
  if (!lease.ok()) return lease.status();
  l->lease_ = std::move(*lease);
  return l;
}

Leadership::~Leadership() { lease_.reset(); }

void Leadership::OnChange(bool leading, const std::string& holder) {
  {
    // Called under mu_, so that OnTakenOver(nullptr) guarantees no call
    // after it returns (main clears it before its loop goes).
    std::lock_guard<std::mutex> lock(mu_);
    if (leading) leading_seen_ = true;
    // Lost with another (or an unknown) holder: taken over. Lost with
    // ourselves as holder: renews fail, the lease may come back.
    if (!leading && holder != instance() && on_taken_over_) on_taken_over_();
  }
  cv_.notify_all();
}

bool Leadership::WaitUntilLeading(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  auto done = [this] { return interrupted_ || (leading_seen_ && lease_->leading()); };
  if (timeout_ms < 0) {
    cv_.wait(lock, done);
  } else {
    cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), done);
  }
  return !interrupted_ && leading_seen_ && lease_->leading();
}

void Leadership::Interrupt() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    interrupted_ = true;
  }
  cv_.notify_all();
}

void Leadership::OnTakenOver(std::function<void()> f) {
  std::lock_guard<std::mutex> lock(mu_);
  on_taken_over_ = std::move(f);
}

std::string Leadership::NotLeaderReason() const {
  if (leading()) return "";
  std::string holder = this->holder();
  if (holder == instance()) return "not leader: the lease could not be renewed (NATS unreachable?); writes wait";
  if (holder.empty()) return "not leader (lease holder unknown: not connected to NATS yet, or the lease is free)";
  return "not leader (held by " + holder + ")";
}

http::Response Leadership::NotLeaderResponse() const {
  std::string holder = this->holder();
  std::string why = leading()                                    ? std::string("it holds the lease and is starting")
                    : holder.empty() || holder == instance() ? std::string("the lease is not held")
                                                             : "the lease is held by " + holder;
  std::string msg = "this folio-ingest (" + instance() + ") is not the writer now: " + why +
                    "; send writes to the leader, or retry after Retry-After";
  http::Response r = http::Response::Json(503, JsonError("not_leader", msg));
  r.headers.emplace_back("Retry-After", std::to_string((ttl_ms_ + 999) / 1000));
  if (!holder.empty()) r.headers.emplace_back("Folio-Leader", holder);
  return r;
}

http::AdmissionCheck LeaderFirst(const Leadership* leader, http::AdmissionCheck next) {
  if (leader == nullptr) return next;
  return [leader, next = std::move(next)](const http::Request& req, http::AdmissionGate gate) {
    if (!leader->leading()) {
      gate.Refuse(leader->NotLeaderResponse());
      return;
    }
    next(req, std::move(gate));
  };
}

struct Standby::Impl {
  // Destroyed bottom-up: the servers (closing their sockets as the loop
  // goes), then the registry and the loop.
  http::Loop loop;
  metrics::Registry registry;
  http::Router router;
  std::unique_ptr<metrics::OpsEndpoints> ops;
  std::unique_ptr<http::Server> server;
  std::thread thread;
};

Standby::Standby(Leadership* leader) : leader_(leader) {}
Standby::~Standby() { Stop(); }

Status Standby::Start(const ServiceBasics& basics) {
  impl_ = std::make_unique<Impl>();
  Leadership* leader = leader_;
  ExportLeaderGauge(&impl_->registry, leader);
  // /livez, /readyz and /metrics where the serving process has them (the
  // admin port with --admin-listen): probes see a live, unready standby.
  impl_->ops = std::make_unique<metrics::OpsEndpoints>(&impl_->loop, &impl_->registry, [leader]() -> std::string {
    return leader->leading() ? "leading; opening (or restoring) --data" : leader->NotLeaderReason();
  }, basics);
  impl_->ops->MountPublic(&impl_->router);
  impl_->router.Handle("GET", "/healthz", [](const http::Request&, http::Responder r) {
    r.Send(http::Response::Json(200, "{\"status\":\"ok\"}"));
  });
  // Every method, so that none gets 405: refused from the headers, any body unread.
  auto refuse = [leader](const http::Request&, http::AdmissionGate gate) { gate.Refuse(leader->NotLeaderResponse()); };
  for (const char* method : {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}) {
    impl_->router.HandlePrefix(method, "/", refuse, [leader](const http::Request&, http::Responder r) {
      r.Send(leader->NotLeaderResponse());
    });
  }
  impl_->router.Fallback([leader](const http::Request&, http::Responder r) { r.Send(leader->NotLeaderResponse()); });
  http::ServerOptions so;
  so.max_body_bytes = 64 << 10;  // never read: the admission check refuses first
  impl_->server = std::make_unique<http::Server>(&impl_->loop, &impl_->router, so);
  // Not SO_REUSEPORT: a leader on this host's port keeps all of it (a
  // standby sharing it would take half the pushes only to refuse them).
  Status bound = impl_->server->Listen(basics.host, basics.port, /*reuse_port=*/false);
  if (!bound.ok()) impl_->server.reset();  // the loop still runs, for the signals
  if (Status admin = impl_->ops->Listen(); !admin.ok() && bound.ok()) bound = admin;
  impl_->loop.OnSignal(SIGTERM, [leader] { leader->Interrupt(); });
  impl_->loop.OnSignal(SIGINT, [leader] { leader->Interrupt(); });
  log::Info("folio-ingest standby: waiting for the lease",
            {{"addr", basics.host + ":" + std::to_string(basics.port)}, {"instance", leader->instance()},
             {"serving", bound.ok() ? "yes" : "no: " + bound.message()}});
  Impl* p = impl_.get();
  impl_->thread = std::thread([p] { p->loop.Run(); });
  return bound;
}

void Standby::Stop() {
  if (!impl_) return;
  Impl* p = impl_.get();
  p->loop.Post([p] { p->ops->Drain(p->server.get(), [p] { p->loop.Stop(); }); });
  p->thread.join();
  p->server.reset();
  p->ops.reset();
  impl_.reset();
}

void ExportLeaderGauge(metrics::Registry* registry, const Leadership* leader) {
  registry->AddScrapedGauge("folio_ingest_leader",
                            "1 while this ingest holds the write lease (folio_ingest_lease); 0: a standby, or its"
                            " renews failed",
                            [leader] { return leader->leading() ? 1.0 : 0.0; });
}

}  // namespace folio::ingest
