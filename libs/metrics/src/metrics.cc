#include "folio/metrics/metrics.h"

#include <cmath>

#include <prometheus/text_serializer.h>

#include <utility>

#include "folio/core/json.h"
#include "folio/core/log.h"

namespace folio::metrics {

namespace {
constexpr std::string_view kOpsClass = "ops";
}  // namespace

Registry::Registry()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(std::make_unique<RequestMetrics>(registry_.get())) {}

Registry::~Registry() = default;

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

void Registry::AddScrapedGauge(const std::string& name, const std::string& help, std::function<double()> read) {
  scraped_.push_back({name, help, prometheus::MetricType::Gauge, std::move(read)});
}

void Registry::AddScrapedCounter(const std::string& name, const std::string& help, std::function<double()> read) {
  scraped_.push_back({name, help, prometheus::MetricType::Counter, std::move(read)});
}

void Registry::AddCollector(std::function<std::vector<prometheus::MetricFamily>()> collect) {
  collectors_.push_back(std::move(collect));
}

std::string Registry::Serialize(std::vector<prometheus::MetricFamily> extra) const {
  prometheus::TextSerializer s;
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (auto& f : process_.Collect()) families.push_back(std::move(f));
  for (const Scraped& m : scraped_) {
    prometheus::ClientMetric sample;
    double v = m.read();
    if (std::isnan(v)) continue;  // unknown for now: left out
    if (m.type == prometheus::MetricType::Counter) {
      sample.counter.value = v;
    } else {
      sample.gauge.value = v;
    }
    families.push_back({m.name, m.help, m.type, {sample}});
  }
  for (const auto& collect : collectors_) {
    for (auto& f : collect()) families.push_back(std::move(f));
  }
  for (auto& f : extra) families.push_back(std::move(f));
  return s.Serialize(families);
}

void ExportBodyBudget(Registry* registry, const http::BodyBudget* budget) {
  registry->AddScrapedGauge("folio_http_body_bytes_in_flight",
                            "Request body bytes held now (reserved from the budget: --max-inflight-body-bytes)",
                            [budget] { return static_cast<double>(budget->in_flight()); });
  registry->AddScrapedGauge("folio_http_body_bytes_in_flight_peak", "The most request body bytes held at once since start",
                            [budget] { return static_cast<double>(budget->peak()); });
  registry->AddScrapedGauge("folio_http_body_budget_bytes",
                            "Bound on the request body bytes held at once (--max-inflight-body-bytes)",
                            [budget] { return static_cast<double>(budget->limit()); });
  registry->AddScrapedCounter("folio_http_body_budget_refusals_total",
                              "Requests refused before their body was read because it did not fit the budget (503,"
                              " or 413 when larger than the whole budget)",
                              [budget] { return static_cast<double>(budget->refusals()); });
}

namespace {

prometheus::MetricFamily Flag(const char* name, const char* help, bool on) {
  prometheus::ClientMetric m;
  m.gauge.value = on ? 1 : 0;
  return {name, help, prometheus::MetricType::Gauge, {m}};
}

std::string Ask(const std::function<std::string()>& check) { return check ? check() : std::string(); }

}  // namespace

void MountOpsEndpoints(http::Router* router, Registry* registry, ReadinessCheck ready, DegradedCheck degraded) {
  // These take no body (413: before it is read when Content-Length says so):
  // on a service's public port they need no token, so they must hold none.
  router->Handle("GET", "/metrics", [registry, ready, degraded](const http::Request&, http::Responder r) {
    http::Response resp;
    resp.headers.emplace_back("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    resp.headers.emplace_back("Cache-Control", "no-store");
    resp.body = registry->Serialize(
        {Flag("folio_ready", "1 when /readyz answers 200 (ready to serve), else 0", Ask(ready).empty()),
         Flag("folio_degraded", "1 while /readyz answers 200 with \"degraded\": ready, short of a dependency",
              !Ask(degraded).empty())});
    r.Send(std::move(resp));
  }, kOpsClass, /*max_body_bytes=*/0);
  router->Handle("GET", "/livez", [](const http::Request&, http::Responder r) {
    r.Send(http::Response::Json(200, "{\"status\":\"live\"}"));
  }, kOpsClass, /*max_body_bytes=*/0);
  router->Handle("GET", "/readyz", [ready, degraded](const http::Request&, http::Responder r) {
    if (std::string why = Ask(ready); !why.empty()) {
      r.Send(http::Response::Json(503, JsonError("unavailable", why)));
      return;
    }
    JsonWriter w;
    w.BeginObject().Key("status").String("ready");
    if (std::string short_of = Ask(degraded); !short_of.empty()) w.Key("degraded").String(short_of);
    w.EndObject();
    r.Send(http::Response::Json(200, w.Take()));
  }, kOpsClass, /*max_body_bytes=*/0);
}

OpsEndpoints::OpsEndpoints(http::Loop* loop, Registry* registry, ReadinessCheck ready, const ServiceBasics& basics,
                           DegradedCheck degraded)
    : loop_(loop),
      registry_(registry),
      degraded_(std::move(degraded)),
      admin_host_(basics.admin_host),
      admin_port_(basics.admin_port) {
  // Draining wins over the service's own check: a load balancer must stop
  // sending before the listener goes (issue 10).
  ready_ = [draining = draining_, inner = std::move(ready)]() -> std::string {
    if (draining->load()) return "shutting down";
    return inner ? inner() : std::string();
  };
  if (!basics.has_admin()) return;
  MountOpsEndpoints(&admin_router_, registry_, ready_, degraded_);
  admin_router_.Observe(registry_->request_observer());
  http::ServerOptions o;
  o.max_body_bytes = 0;  // probes and scrapes send no bodies
  // The admin server drains last (see Drain): a probe or scrape then in
  // flight is answered; idle probe connections need no grace.
  o.shutdown_idle_grace_ms = 0;
  o.shutdown_timeout_ms = 2000;
  admin_ = std::make_unique<http::Server>(loop_, &admin_router_, o);
}

OpsEndpoints::~OpsEndpoints() = default;

void OpsEndpoints::MountPublic(http::Router* router) const {
  router->Observe(registry_->request_observer());
  if (!separate()) MountOpsEndpoints(router, registry_, ready_, degraded_);
}

Status OpsEndpoints::Listen() {
  if (!admin_) return Status::Ok();
  if (Status s = admin_->Listen(admin_host_, admin_port_); !s.ok()) return s;
  log::Info("admin endpoints listening", {{"addr", admin_host_ + ":" + std::to_string(admin_->port())}});
  return Status::Ok();
}

void OpsEndpoints::BeginDrain() { draining_->store(true); }

void OpsEndpoints::Drain(http::Server* public_server, std::function<void()> done) {
  BeginDrain();
  if (draining_started_) {  // a second signal: the drain goes on, with this done
    drain_done_ = std::move(done);
    return;
  }
  draining_started_ = true;
  drain_done_ = std::move(done);
  // The public server first; the admin server keeps listening meanwhile, so
  // probes on it see /readyz 503 "shutting down" for the whole drain.
  auto then_admin = [this] {
    auto finish = [this] {
      if (auto done = std::exchange(drain_done_, nullptr)) done();
    };
    if (admin_) admin_->Shutdown(finish);
    else loop_->Post(finish);
  };
  if (public_server != nullptr) public_server->Shutdown(then_admin);
  else then_admin();
}

bool OpsEndpoints::draining() const { return draining_->load(); }

int OpsEndpoints::port() const { return admin_ ? admin_->port() : 0; }

}  // namespace folio::metrics
