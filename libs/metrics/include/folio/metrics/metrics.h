// Metrics: one prometheus-cpp registry per process, and the operational
// endpoints every service exposes: /metrics (Prometheus text format),
// /livez (the process runs its loop) and /readyz (ready to serve; 503 with
// a JSON reason otherwise), on the public port or, with --admin-listen, only
// on an admin address of their own (OpsEndpoints).
//
// Every Registry also exports the process_* metrics (process.h) and
// folio_http_request_duration_seconds{route,code} (requests.h) of the
// routers OpsEndpoints serves. Scraped metrics (AddScraped*) are read from
// their source at each scrape, so they agree with anything else that reads
// that source at the same moment (a /readyz answer, say).
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
#include "folio/http/body_budget.h"
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

  // A gauge / counter without labels whose value `read` gives at each
  // scrape, instead of being Set by a periodic refresh that lags its source.
  // `read` runs on the thread that serves /metrics, maybe on several at
  // once: thread-safe, quick, no I/O (read an atomic). Call before serving.
  // A NaN from `read` leaves the metric out of that scrape (unknown for now).
  void AddScrapedGauge(const std::string& name, const std::string& help, std::function<double()> read);
  void AddScrapedCounter(const std::string& name, const std::string& help, std::function<double()> read);

  // Families whose series `collect` computes at each scrape (a bounded set
  // of labelled series that changes: the edge's most viewed pages). Same
  // rules as AddScrapedGauge: thread-safe, quick, no I/O. Call before serving.
  void AddCollector(std::function<std::vector<prometheus::MetricFamily>()> collect);

  // The registry, then the process metrics, the scraped ones, the collectors', then `extra`
  // (families computed by the caller at scrape time), in Prometheus text
  // exposition format.
  std::string Serialize(std::vector<prometheus::MetricFamily> extra = {}) const;

 private:
  struct Scraped {
    std::string name, help;
    prometheus::MetricType type;
    std::function<double()> read;
  };
  std::shared_ptr<prometheus::Registry> registry_;
  std::vector<Scraped> scraped_;  // written before serving, then read-only
  std::vector<std::function<std::vector<prometheus::MetricFamily>()>> collectors_;  // likewise
  std::unique_ptr<RequestMetrics> requests_;
  ProcessCollector process_;
};

// The request-body budget of a service (http/body_budget.h), read at each
// scrape: folio_http_body_bytes_in_flight, folio_http_body_bytes_in_flight_peak
// and folio_http_body_budget_bytes (gauges: now, the highest so far, the
// limit), folio_http_body_budget_refusals_total (counter: requests answered
// 503 or 413 for it). REQUIRES: budget outlives the registry's scrapes.
void ExportBodyBudget(Registry* registry, const http::BodyBudget* budget);

// Readiness: empty string = ready; otherwise the reason it is not.
using ReadinessCheck = std::function<std::string()>;
// Ready, but short of something: empty string = nothing missing; otherwise
// what is missing and what still works ("storage unreachable: pushes with
// attachments fail; ..."). For a dependency only part of the service's work
// needs: a load balancer should keep sending (the rest works), an operator
// should know.
using DegradedCheck = std::function<std::string()>;

// Mounts GET /metrics, /livez, /readyz on router (route class "ops"); they
// take no body (a route body limit of 0: 413, before the body is read when
// Content-Length announces it).
// /readyz: 503 {"error":{"code":"unavailable","message":<why>}} while `ready`
// gives a reason; else 200 {"status":"ready"}, or, while `degraded` gives a
// reason, 200 {"status":"ready","degraded":<reason>}. /metrics also reports
// folio_ready (1 when /readyz answers 200) and folio_degraded (1 while
// `degraded` gives a reason), computed at scrape time, so alerts see
// readiness, not only `up`. `degraded` may be null (never degraded).
void MountOpsEndpoints(http::Router* router, Registry* registry, ReadinessCheck ready,
                       DegradedCheck degraded = nullptr);

// Where a service answers /metrics, /livez and /readyz: by default on its
// public router(s) (one box: probes and scrapes on the one port); with
// --admin-listen (ServiceBasics::has_admin) only on a second http::Server on
// the service's loop, with a router of its own, so the public port serves
// no /metrics (there it is a path like any unknown one).
// Threading: construct, MountPublic and Listen before the loop runs (or on
// its thread); Drain on the loop thread. `ready` runs on whichever loop
// thread serves /readyz (and `degraded` likewise; null: never degraded).
// REQUIRES: registry and loop outlive this object.
class OpsEndpoints {
 public:
  OpsEndpoints(http::Loop* loop, Registry* registry, ReadinessCheck ready, const ServiceBasics& basics,
               DegradedCheck degraded = nullptr);
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
  DegradedCheck degraded_;
  bool draining_started_ = false;     // loop thread only
  std::function<void()> drain_done_;  // loop thread only
  std::string admin_host_;
  int admin_port_;
  http::Router admin_router_;
  std::unique_ptr<http::Server> admin_;
};

}  // namespace folio::metrics
