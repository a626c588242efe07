// Metrics: one prometheus-cpp registry per process, and the operational
// endpoints every service exposes: /metrics (Prometheus text format),
// /livez (the process runs its loop) and /readyz (ready to serve; 503 with
// a JSON reason otherwise), on the public port or, with --admin-listen, only
// on an admin address of their own (OpsEndpoints).
//
// Every Registry also exports the process_* metrics (process.h) and
// folio_http_request_duration_seconds{route,code} (requests.h) of the
// routers OpsEndpoints serves.
//
// Ownership: Registry is owned by main and outlives the Router it is
// mounted on. Threading: counters/gauges/histograms are lock-free atomics,
// safe from any thread; Mount* are called before serving starts.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "folio/core/service.h"
#include "folio/core/status.h"
#include "folio/http/server.h"
#include "folio/metrics/process.h"
#include "folio/metrics/requests.h"

namespace folio::metrics {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;
using Labels = std::map<std::string, std::string>;

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;
  prometheus::Registry& raw() { return *registry_; }
  // The request-latency observer (requests.h) for a Router (Router::Observe).
  http::RequestObserver* request_observer() { return requests_.get(); }

  // Each call with the same name reuses the family; labels pick the series.
  Counter& NewCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& NewGauge(const std::string& name, const std::string& help, const Labels& labels = {});
  // Buckets in seconds, e.g. {0.001, 0.01, 0.1, 1}.
  Histogram& NewHistogram(const std::string& name, const std::string& help,
                          const std::vector<double>& buckets, const Labels& labels = {});

  // The registry, then the process metrics, then `extra` (families computed
  // by the caller at scrape time), in Prometheus text exposition format.
  std::string Serialize(std::vector<prometheus::MetricFamily> extra = {}) const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<RequestMetrics> requests_;
  ProcessCollector process_;
};

// Readiness: empty string = ready; otherwise the reason it is not.
using ReadinessCheck = std::function<std::string()>;

// Mounts GET /metrics, /livez, /readyz on router (route class "ops").
// /metrics also reports folio_ready (gauge: 1 when `ready` says ready, else
// 0), computed at scrape time, so alerts see readiness, not only `up`.
void MountOpsEndpoints(http::Router* router, Registry* registry, ReadinessCheck ready);

// Where a service answers /metrics, /livez and /readyz: by default on its
// public router(s) (one box: probes and scrapes on the one port); with
// --admin-listen (ServiceBasics::has_admin) only on a second http::Server on
// the service's loop, with a router of its own, so the public port serves
// no /metrics (there it is a path like any unknown one).
// Threading: construct, MountPublic and Listen before the loop runs (or on
// its thread); Drain on the loop thread. `ready` runs on whichever loop
// thread serves /readyz. REQUIRES: registry and loop outlive this object.
class OpsEndpoints {
 public:
  OpsEndpoints(http::Loop* loop, Registry* registry, ReadinessCheck ready, const ServiceBasics& basics);
  ~OpsEndpoints();
  OpsEndpoints(const OpsEndpoints&) = delete;
  OpsEndpoints& operator=(const OpsEndpoints&) = delete;

  // Mounts the endpoints on a public router, unless an admin address takes
  // them; either way the router reports its requests to the registry's
  // request metrics (Router::Observe).
  void MountPublic(http::Router* router) const;
  // Binds the admin address and logs it ("admin endpoints listening"); Ok
  // and nothing to do without one. kUnavailable if it cannot be bound.
  Status Listen();
  // A service's shutdown (SIGTERM), in this order: /readyz answers 503
  // "shutting down" at once, on the public and the admin port alike (a load
  // balancer stops sending); `public_server` (the public http::Server on
  // this loop; nullptr if none) drains (http::Server::Shutdown: stops
  // accepting, answers what clients already sent, bounded by its
  // shutdown_timeout_ms); then the admin server, which kept answering
  // probes meanwhile, drains too (bounded by 2 s); then done runs on the
  // loop thread. Servers on other loops (the edge's other workers) drain
  // on their own. A second call (a second signal) lets the drain go on and
  // replaces a done not yet called. REQUIRES: loop thread.
  void Drain(http::Server* public_server, std::function<void()> done);
  // Step 1 of Drain alone: /readyz answers 503 "shutting down" from now on.
  // For a service whose public servers run on several loops (the edge):
  // BeginDrain, shut those down, then Drain(nullptr, done). Any thread.
  void BeginDrain();
  // True once BeginDrain or Drain was called. Any thread.
  bool draining() const;
  bool separate() const { return admin_ != nullptr; }
  // The admin port bound (after Listen), else 0.
  int port() const;

 private:
  http::Loop* loop_;
  Registry* registry_;
  std::shared_ptr<std::atomic<bool>> draining_ = std::make_shared<std::atomic<bool>>(false);
  ReadinessCheck ready_;  // the service's check, behind draining_
  bool draining_started_ = false;     // loop thread only
  std::function<void()> drain_done_;  // loop thread only
  std::string admin_host_;
  int admin_port_;
  http::Router admin_router_;
  std::unique_ptr<http::Server> admin_;
};

}  // namespace folio::metrics
