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
#include "folio/bus/schema.h"
#include "folio/core/config.h"
#include "folio/core/log.h"
#include "folio/core/secret.h"
#include "folio/core/service.h"
#include "page_feed.h"
#include "worker.h"
#include "search_backend.h"

using namespace folio;

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  Flags flags("folio-edge", "Serves every site's pages from memory, fed by NATS JetStream KV.");
  AddServiceFlags(&flags, "127.0.0.1:8081");
  flags.Add("site", "default", "site served when the Host header names no known site");
  flags.Add("threads", "0", "serving threads (0 = CPUs available to the process)");
  flags.Add("search-threads", "8", "threads making search requests to the search service");
  flags.Add("search-max-in-flight", "64", "searches in flight at once; more are answered 503");
  flags.Add("search-timeout-ms", "2000", "how long a search may take before the reader gets 503");
  flags.Add("storage", "", "folio-storage URL (http://127.0.0.1:8083): /assets/ misses are fetched from it; \"\" = off");
  AddSecretFlags(&flags, "storage-token",
                 "folio-storage's read token (it writes it to <its data>/read-token on its first start); required"
                 " with --storage");
  flags.Add("asset-cache", "256MiB", "bytes of assets kept in memory (objects over 1/8 of it are served, not kept)");
  ServiceBasics basics;
  if (int rc = ParseServiceFlags(&flags, argc, argv, &basics); rc >= 0) return rc;
  const std::string& host = basics.host;
  const int port = basics.port;
  auto threads_flag = flags.GetInt("threads");
  if (!threads_flag.ok()) return FailStartup(threads_flag.status());
  size_t nworkers = *threads_flag > 0 ? static_cast<size_t>(*threads_flag) : AvailableCpus();
  auto search_threads = flags.GetInt("search-threads");
  auto search_max = flags.GetInt("search-max-in-flight");
  auto search_timeout = flags.GetInt("search-timeout-ms");
  for (const Status* st : {&search_threads.status(), &search_max.status(), &search_timeout.status()}) {
    if (!st->ok()) return FailStartup(*st);
  }
  if (*search_threads < 1 || *search_threads > 256) return FailStartup(Status::Invalid("--search-threads must be in 1..256"));
  if (*search_max < 0 || *search_max > 100'000) return FailStartup(Status::Invalid("--search-max-in-flight must be in 0..100000"));
  if (*search_timeout < 1 || *search_timeout > 60'000) return FailStartup(Status::Invalid("--search-timeout-ms must be in 1..60000"));
  edge::SearchOptions search_opts;
  search_opts.threads = static_cast<size_t>(*search_threads);
  search_opts.max_in_flight = static_cast<size_t>(*search_max);
  search_opts.timeout_ms = *search_timeout;
  const std::string site = flags.Get("site");
  if (!bus::IsValidSiteName(site)) return FailStartup(Status::Invalid("--site must match [a-z0-9-]{1,63}"));

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
  auto search = std::make_unique<edge::SearchBackend>(search_opts, &registry);
  std::unique_ptr<edge::AssetStore> assets;  // likewise destroyed after the loops stop
  if (!flags.Get("storage").empty()) {
    auto cache = flags.GetBytes("asset-cache");
    if (!cache.ok()) return FailStartup(cache.status());
    edge::AssetOptions ao;
    ao.storage_url = flags.Get("storage");
    while (!ao.storage_url.empty() && ao.storage_url.back() == '/') ao.storage_url.pop_back();
    auto token = SecretFromFlags(flags, "storage-token");
    if (!token.ok()) return FailStartup(token.status());
    if (token->empty()) {
      return FailStartup(Status::Invalid("--storage needs --storage-token (or --storage-token-file, FOLIO_STORAGE_TOKEN): "
                                  "folio-storage's read token, which it writes to <its data>/read-token on its "
                                  "first start"));
    }
    ao.storage_token = *token;
    ao.cache_bytes = static_cast<size_t>(std::max<int64_t>(*cache, 0));
    assets = std::make_unique<edge::AssetStore>(ao, &registry);
  }
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

  // SIGTERM (issue 10): readiness turns first; every worker drains its
  // public server; once all have, the admin server (on worker 0's loop,
  // answering probes meanwhile) drains, and worker 0's loop stops last.
  shutdown = [&] {
    if (stopping.exchange(true)) return;
    log::Info("shutting down");
    ops.BeginDrain();
    auto left = std::make_shared<std::atomic<size_t>>(workers.size());
    edge::Worker* w0 = workers[0].get();
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
