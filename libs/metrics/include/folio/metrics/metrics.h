// Metrics: one prometheus-cpp registry per process, and the operational
// endpoints every service exposes: /metrics (Prometheus text format),
// /livez (the process runs its loop) and /readyz (ready to serve; 503 with
// a JSON reason otherwise).
//
// Ownership: Registry is owned by main and outlives the Router it is
// mounted on. Threading: counters/gauges/histograms are lock-free atomics,
// safe from any thread; Mount* are called before serving starts.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "folio/http/server.h"

namespace folio::metrics {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;
using Labels = std::map<std::string, std::string>;

class Registry {
 public:
  Registry();
  prometheus::Registry& raw() { return *registry_; }

  // Each call with the same name reuses the family; labels pick the series.
  Counter& NewCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& NewGauge(const std::string& name, const std::string& help, const Labels& labels = {});
  // Buckets in seconds, e.g. {0.001, 0.01, 0.1, 1}.
  Histogram& NewHistogram(const std::string& name, const std::string& help,
                          const std::vector<double>& buckets, const Labels& labels = {});

  // The registry in Prometheus text exposition format.
  std::string Serialize() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
};

// Readiness: empty string = ready; otherwise the reason it is not.
using ReadinessCheck = std::function<std::string()>;

// Mounts GET /metrics, /livez, /readyz on router.
void MountOpsEndpoints(http::Router* router, Registry* registry, ReadinessCheck ready);

}  // namespace folio::metrics
