// folio-edge: serves every page of every site from memory. Watches the KV
// bucket "pages", builds each Page once per update, and hands it to every
// worker's loop; readers are answered with ready bytes. The Host header
// picks the site (site records, bus::SiteKey, map hosts to sites); requests
// for unknown hosts, or without Host, get the --site site.
//
// GET /search forwards the reader's query to the search service over NATS
// ("search.query", on the same connection as the watcher) from a small
// thread pool, and answers with the search page.
//
// Readiness (issue 9): the public port is bound (or, with systemd socket
// activation, accepted from) only once the initial replay of the bucket is
// applied on every worker, so an edge never answers 404 for a page it has
// not loaded yet; until then connections go to the other edges sharing the
// port (SO_REUSEPORT) or wait in the inherited socket's backlog. An edge
// that cannot reach NATS at start keeps retrying and never listens
// publicly. Once ready, losing NATS keeps serving the cached pages.
// --admin-listen is bound at start: /livez 200, /readyz 503 with the reason.
//
// Threads: N workers (each a Loop + Server on the shared port), plus the
// KV watcher thread and the search pool. Worker 0 runs on the main thread
// and also runs the admin server.
#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "folio/bus/bus.h"
#include "folio/bus/connect.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/site_schema.h"
#include "folio/core/config.h"
#include "folio/core/log.h"
#include "folio/core/service.h"
#include "config.h"
#include "page_feed.h"
#include "worker.h"
#include "search_backend.h"

using namespace folio;

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  Flags flags("folio-edge", "Serves every site's pages from memory, fed by NATS JetStream KV.");
  edge::AddEdgeFlags(&flags);
  ServiceBasics basics;
  if (int rc = ParseServiceFlags(&flags, argc, argv, &basics); rc >= 0) return rc;
  auto config = edge::ReadEdgeConfig(flags, basics);
  if (!config.ok()) return FailStartup(config.status());
  const std::string& host = basics.host;
  const int port = basics.port;
  const size_t nworkers = config->threads;
  const std::string& site = config->site;

  metrics::Registry registry;
  edge::ServeCounters counters{
      &registry.NewCounter("folio_edge_requests_total", "Page requests", {{"code", "200"}}),
      &registry.NewCounter("folio_edge_requests_total", "Page requests", {{"code", "304"}}),
      &registry.NewCounter("folio_edge_requests_total", "Page requests", {{"code", "404"}}),
      &registry.NewCounter("folio_edge_requests_total", "Page requests", {{"code", "other"}})};
  bus::BusMetrics bus_metrics(&registry);
  bus::KvWatcherMetrics lag_metrics{
      &registry.NewGauge("folio_edge_bus_lag", "Messages of the pages stream (KV_pages) not yet applied by this edge"),
      &registry.NewGauge("folio_edge_applied_revision", "Revision of the last pages entry this edge applied")};

  std::atomic<bool> ready{false};
  std::atomic<bool> stopping{false};
  std::atomic<int> exit_code{0};
  std::mutex why_mu;
  std::string not_ready_why = "connecting to NATS at " + basics.nats_url;  // GUARDED_BY(why_mu)
  auto set_not_ready = [&](std::string why) {
    std::lock_guard<std::mutex> lock(why_mu);
    not_ready_why = std::move(why);
  };
  auto readiness = [&]() -> std::string {
    if (stopping) return "shutting down";
    if (ready) return "";
    std::lock_guard<std::mutex> lock(why_mu);
    return not_ready_why;
  };

  // Destroyed explicitly below: after the loops stop (its pool posts to them)
  // and before the bus (its pool uses it).
  auto search = std::make_unique<edge::SearchBackend>(config->search, &registry);
  std::unique_ptr<edge::AssetStore> assets;  // likewise destroyed after the loops stop
  if (config->has_storage) assets = std::make_unique<edge::AssetStore>(config->assets, &registry);
  std::vector<std::unique_ptr<edge::Worker>> workers;
  for (size_t i = 0; i < nworkers; ++i) {
    workers.push_back(std::make_unique<edge::Worker>(site, counters, search.get(), assets.get()));
  }
  metrics::OpsEndpoints ops(&workers[0]->loop(), &registry, readiness, basics);
  for (auto& w : workers) ops.MountPublic(&w->router());
  if (Status s = ops.Listen(); !s.ok()) return FailStartup(s);
  auto fds = http::SystemdListenFds();
  log::Info("folio-edge starting; serves once the pages are replayed",
            {{"addr", fds.empty() ? host + ":" + std::to_string(port) : "systemd socket"},
             {"default_site", site}, {"threads", std::to_string(nworkers)}});

  std::vector<edge::Worker*> worker_ptrs;
  for (auto& w : workers) worker_ptrs.push_back(w.get());
  edge::PageFeed feed(std::move(worker_ptrs), &registry);
  auto on_entry = [&feed](bus::KvEntry&& e) { feed.OnEntry(std::move(e)); };
  std::function<void()> shutdown;  // set below; safe from any thread
  // Binds the public listener of worker i, then of the next one, each on
  // its own loop (port 0 picks a port the others then share); ready after
  // the last. A worker that cannot listen stops the edge (exit status 1).
  std::function<void(size_t, int)> listen_from = [&](size_t i, int at_port) {
    edge::Worker* wp = workers[i].get();
    wp->loop().Post([&, i, at_port, wp] {
      if (stopping) return;
      Status s;
      if (fds.empty()) {
        s = wp->server().Listen(host, at_port, /*reuse_port=*/true);
      } else {
        // One inherited socket, shared: each worker's listener owns a copy
        // (ListenFd closes it also when it fails: nothing leaks).
        int fd = i == 0 ? fds[0] : fcntl(fds[0], F_DUPFD_CLOEXEC, 0);
        s = fd < 0 ? Status::Unavailable("dup of the systemd socket failed") : wp->server().ListenFd(fd);
      }
      if (!s.ok()) {
        log::Error("cannot listen; stopping", {{"error", s.message()}});
        exit_code = 1;
        shutdown();
        return;
      }
      if (i + 1 < workers.size()) {
        listen_from(i + 1, wp->server().port());
        return;
      }
      ready = true;
      log::Info("folio-edge listening; ready",
                {{"addr", fds.empty() ? host + ":" + std::to_string(wp->server().port()) : "systemd socket"},
                 {"pages", std::to_string(feed.pages())}});
    });
  };
  auto on_replayed = [&] {
    // Listen once every worker has applied everything replayed so far.
    set_not_ready("replay applied; binding the public port");
    auto pending = std::make_shared<std::atomic<size_t>>(workers.size());
    for (auto& w : workers) {
      w->loop().Post([pending, &listen_from, port] {
        if (--*pending == 0) listen_from(0, port);
      });
    }
  };

  // Connect and watch on a side thread, retrying until NATS answers.
  std::unique_ptr<bus::Bus> bus_conn;
  std::unique_ptr<bus::KvWatcher> watcher;
  std::thread connector([&] {
    bus::BusOptions o = bus::BusOptionsFor(basics, "folio-edge", &bus_metrics);
    auto watch = [&](bus::Bus* b) -> Status {
      set_not_ready("replaying the pages bucket");
      auto w = bus::KvWatcher::Start(b, bus::kPagesBucket, on_entry, on_replayed, lag_metrics);
      if (!w.ok()) return Status(w.status().code(), "cannot watch the pages bucket: " + w.status().message());
      watcher = std::move(*w);
      search->SetBus(b);
      return Status::Ok();
    };
    auto on_failure = [&](const Status& s) {
      log::Warn("cannot watch pages; retrying", {{"error", s.message()}});
      set_not_ready(s.message());
    };
    auto wait = [&](int64_t ms) {
      for (int64_t i = 0; i < ms / 100 && !stopping; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return !stopping;
    };
    if (stopping) return;
    bus_conn = bus::ConnectRetrying(o, watch, on_failure, wait);
    if (bus_conn) log::Info("watching pages", {{"url", o.url}});
  });

  // SIGTERM (issue 10): readiness turns first; every worker stops
  // accepting, and only once all have does any drain its connections (a
  // client told `Connection: close` reconnects at once, and must not land
  // in a sibling's listener that is about to close and reset it); once
  // every worker has drained, the admin server (on worker 0's loop,
  // answering probes meanwhile) drains, and worker 0's loop stops last.
  shutdown = [&] {
    if (stopping.exchange(true)) return;
    log::Info("shutting down");
    ops.BeginDrain();
    edge::Worker* w0 = workers[0].get();
    auto drain_all = [&workers, &ops, w0] {
      auto left = std::make_shared<std::atomic<size_t>>(workers.size());
      for (size_t i = 0; i < workers.size(); ++i) {
        edge::Worker* wp = workers[i].get();
        wp->loop().Post([wp, i, left, w0, &ops] {
          wp->server().Shutdown([wp, i, left, w0, &ops] {
            if (i != 0) wp->loop().Stop();
            if (--*left > 0) return;
            w0->loop().Post([w0, &ops] { ops.Drain(nullptr, [w0] { w0->loop().Stop(); }); });
          });
        });
      }
    };
    auto closed = std::make_shared<std::atomic<size_t>>(workers.size());
    for (auto& w : workers) {
      edge::Worker* wp = w.get();
      wp->loop().Post([wp, closed, drain_all] {
        wp->server().StopAccepting();
        if (--*closed == 0) drain_all();
      });
    }
  };
  workers[0]->loop().OnSignal(SIGTERM, shutdown);
  workers[0]->loop().OnSignal(SIGINT, shutdown);

  std::vector<std::thread> threads;
  for (size_t i = 1; i < nworkers; ++i) threads.emplace_back([&, i] { workers[i]->loop().Run(); });
  workers[0]->loop().Run();
  for (auto& t : threads) t.join();
  connector.join();
  search.reset();  // runs what is queued (the loops still exist), joins the pool
  assets.reset();  // likewise
  watcher.reset();
  bus_conn.reset();
  log::Info("folio-edge stopped");
  return exit_code;
}
