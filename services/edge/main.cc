// folio-edge: serves every page of every site from memory. Watches the KV
// bucket "pages", builds each Page once per update, and hands it to every
// worker's loop; readers are answered with ready bytes. The Host header
// picks the site (site records, bus::SiteKey, map hosts to sites); requests
// for unknown hosts, or without Host, get the --site site.
//
// GET /_/search forwards the reader's query to the search service over NATS
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
//
// Wiring only: the NATS link is in pages_connector.h, the page feed in
// page_feed.h, readiness, the public port and the SIGTERM sequence in
// lifecycle.h.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "folio/core/config.h"
#include "folio/core/log.h"
#include "folio/core/service.h"
#include "config.h"
#include "lifecycle.h"
#include "page_feed.h"
#include "pages_connector.h"
#include "folio/core/time.h"
#include "search_backend.h"
#include "view_stats.h"
#include "worker.h"

using namespace folio;

namespace {

edge::ServeCounters NewServeCounters(metrics::Registry* registry) {
  auto code = [registry](const char* c) -> metrics::Counter* {
    return &registry->NewCounter("folio_edge_requests_total", "Page requests", {{"code", c}});
  };
  return edge::ServeCounters{code("200"), code("304"), code("404"), code("other"),
                             &registry->NewCounter("folio_edge_corrupt_bodies_total",
                                                   "Identity answers refused (500): the page's gzip body did not inflate")};
}

std::vector<std::unique_ptr<edge::Worker>> NewWorkers(size_t n, const std::string& site,
                                                      const edge::ServeCounters& counters,
                                                      edge::SearchBackend* search, edge::AssetStore* assets,
                                                      edge::Signins* signins) {
  std::vector<std::unique_ptr<edge::Worker>> workers;
  for (size_t i = 0; i < n; ++i) {
    workers.push_back(std::make_unique<edge::Worker>(site, counters, search, assets, signins));
  }
  return workers;
}

std::vector<edge::Worker*> Pointers(const std::vector<std::unique_ptr<edge::Worker>>& workers) {
  std::vector<edge::Worker*> out;
  for (auto& w : workers) out.push_back(w.get());
  return out;
}

// Runs worker 0's loop on this thread and the others on threads of their
// own, until every loop has stopped.
void RunWorkers(const std::vector<edge::Worker*>& workers) {
  std::vector<std::thread> threads;
  for (size_t i = 1; i < workers.size(); ++i) threads.emplace_back([w = workers[i]] { w->loop().Run(); });
  workers[0]->loop().Run();
  for (auto& t : threads) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  Flags flags("folio-edge", "Serves every site's pages from memory, fed by NATS JetStream KV.");
  edge::AddEdgeFlags(&flags);
  ServiceBasics basics;
  if (int rc = ParseServiceFlags(&flags, argc, argv, &basics); rc >= 0) return rc;
  auto config = edge::ReadEdgeConfig(flags, basics);
  if (!config.ok()) return FailStartup(config.status());

  metrics::Registry registry;
  edge::ServeCounters counters = NewServeCounters(&registry);
  edge::PagesConnector connector(basics, &registry);
  edge::EdgeState state("connecting to NATS at " + basics.nats_url);

  // Destroyed explicitly below: after the loops stop (its pool posts to them)
  // and before the bus (its pool uses it).
  auto search = std::make_unique<edge::SearchBackend>(config->search, &registry);
  std::unique_ptr<edge::AssetStore> assets;  // likewise destroyed after the loops stop
  if (config->has_storage) assets = std::make_unique<edge::AssetStore>(config->assets, &registry);
  // Likewise: private sites' sign-ins (its pool posts to the loops).
  auto signins = std::make_unique<edge::Signins>(config->signin, &registry);
  auto owned_workers = NewWorkers(config->threads, config->site, counters, search.get(), assets.get(), signins.get());
  const std::vector<edge::Worker*> workers = Pointers(owned_workers);
  // Page views (view_counter.h): one counter per worker, merged by readers.
  edge::ViewCounters views(workers.size());
  for (size_t i = 0; i < workers.size(); ++i) workers[i]->CountViews(views.worker(i), &views);
  registry.AddCollector([&views] { return edge::ViewMetricFamilies(views, edge::UtcDay(NowUnixMs())); });
  metrics::OpsEndpoints ops(&workers[0]->loop(), &registry, [&state] { return state.Readiness(); }, basics);
  for (edge::Worker* w : workers) ops.MountPublic(&w->router());
  if (Status s = ops.Listen(); !s.ok()) return FailStartup(s);
  auto fds = http::SystemdListenFds();
  log::Info("folio-edge starting; serves once the pages are replayed",
            {{"addr", fds.empty() ? basics.host + ":" + std::to_string(basics.port) : "systemd socket"},
             {"default_site", config->site}, {"threads", std::to_string(config->threads)}});

  auto shutdown = [&state, &workers, &ops] {  // safe from any thread
    if (state.stopping.exchange(true)) return;
    log::Info("shutting down");
    edge::StopWorkers(workers, &ops);
  };
  edge::PageFeed feed(workers, &registry);
  edge::PublicPort public_port(workers, basics.host, basics.port, fds, &state, shutdown,
                               [&feed] { return feed.pages(); });
  connector.Start([&feed](bus::KvEntry&& e) { feed.OnEntry(std::move(e)); },
                  [&feed, &public_port] {
                    feed.OnReplayed();  // the last replay batch, ahead of the port's barrier
                    public_port.OnReplayed();
                  },
                  search.get(), &state);
  workers[0]->loop().OnSignal(SIGTERM, shutdown);
  workers[0]->loop().OnSignal(SIGINT, shutdown);

  RunWorkers(workers);
  connector.Join();
  search.reset();  // runs what is queued (the loops still exist), joins the pool
  assets.reset();  // likewise
  signins.reset();  // likewise
  connector.Close();
  log::Info("folio-edge stopped");
  return state.exit_code;
}
