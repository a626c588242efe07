#include "folio/metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include "folio/core/json.h"

namespace folio::metrics {

Registry::Registry() : registry_(std::make_shared<prometheus::Registry>()) {}

Counter& Registry::NewCounter(const std::string& name, const std::string& help, const Labels& labels) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(*registry_).Add(labels);
}

Gauge& Registry::NewGauge(const std::string& name, const std::string& help, const Labels& labels) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(*registry_).Add(labels);
}

Histogram& Registry::NewHistogram(const std::string& name, const std::string& help,
                                  const std::vector<double>& buckets, const Labels& labels) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(*registry_).Add(labels, buckets);
}

std::string Registry::Serialize() const {
  prometheus::TextSerializer s;
  return s.Serialize(registry_->Collect());
}

void MountOpsEndpoints(http::Router* router, Registry* registry, ReadinessCheck ready) {
  router->Handle("GET", "/metrics", [registry](const http::Request&, http::Responder r) {
    http::Response resp;
    resp.headers.emplace_back("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    resp.headers.emplace_back("Cache-Control", "no-store");
    resp.body = registry->Serialize();
    r.Send(std::move(resp));
  });
  router->Handle("GET", "/livez", [](const http::Request&, http::Responder r) {
    r.Send(http::Response::Json(200, "{\"status\":\"live\"}"));
  });
  router->Handle("GET", "/readyz", [ready](const http::Request&, http::Responder r) {
    std::string why = ready ? ready() : std::string();
    if (why.empty()) {
      r.Send(http::Response::Json(200, "{\"status\":\"ready\"}"));
    } else {
      r.Send(http::Response::Json(503, JsonError("unavailable", why)));
    }
  });
}

}  // namespace folio::metrics
