// folio-search: consumes the "notes" stream with a durable consumer, embeds
// notes, keeps vector and full-text indexes (Engine), publishes each note's
// related list on the "related" stream for ingest, and answers queries over
// NATS (search.query, search.related) and HTTP (/api/v1/search,
// /api/v1/related: http_api.h). Wiring only; the work is in Engine and libs/.
// Several replicas may run, each with its own --data and --replica-id; each
// answers NATS queries once caught up with the stream (indexer.h).
//
// Threads: the main loop serves HTTP and hands queries to the query pool;
// the indexer thread (indexer.h) owns the NATS consumer and runs every
// Engine::Apply; NATS.c runs the responders' handlers on its own threads.
#include <csignal>
#include <cstdlib>

#include <filesystem>
#include <memory>
#include <thread>

#include "engine.h"
#include "config.h"
#include "http_api.h"
#include "indexer.h"
#include "folio/bus/bus.h"
#include "folio/bus/connect.h"
#include "folio/core/config.h"
#include "folio/core/files.h"
#include "folio/core/log.h"
#include "folio/core/service.h"
#include "folio/core/thread_pool.h"
#include "folio/http/server.h"
#include "folio/metrics/disk.h"
#include "folio/metrics/metrics.h"
#include "folio/vector/embedder.h"
#include "folio/vector/http_embedder.h"

using namespace folio;

namespace {

// The configured embedder: the built-in hashed one, or the HTTP one (then
// also in *http_embedder, for the readiness check).
Result<std::unique_ptr<vector::Embedder>> MakeEmbedder(const search::SearchConfig& config,
                                                       vector::HttpEmbedder** http_embedder) {
  if (!config.http_embedder) {
    auto hashed = std::make_unique<vector::HashedEmbedder>(config.embed_dim);
    hashed->SetIdf(vector::StopWordIdf(), vector::kStopWordIdfName);
    return std::unique_ptr<vector::Embedder>(std::move(hashed));
  }
  auto e = vector::HttpEmbedder::Create(config.embed);
  if (!e.ok()) return e.status();
  *http_embedder = e->get();
  return std::unique_ptr<vector::Embedder>(std::move(*e));
}

// Ready once the indexer is and, with --embed-url, while the embedder answers.
metrics::ReadinessCheck Readiness(search::Indexer* indexer, vector::HttpEmbedder* http_embedder,
                                  std::string embed_url) {
  return [=]() -> std::string {
    std::string reason = indexer->NotReadyReason();
    if (reason.empty() && http_embedder) {
      vector::EmbedderHealth h = http_embedder->health();
      if (!h.ok) reason = "embedder at " + embed_url + " failing: " + h.last_error;
    }
    return reason;
  };
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags("folio-search", "Indexes notes for similarity and full-text search; computes related notes.");
  search::AddSearchFlags(&flags);
  ServiceBasics basics;
  if (int rc = ParseServiceFlags(&flags, argc, argv, &basics); rc >= 0) return rc;
  auto config = search::ReadSearchConfig(flags, basics);
  if (!config.ok()) return FailStartup(config.status());
  vector::HttpEmbedder* http_embedder = nullptr;
  auto embedder = MakeEmbedder(*config, &http_embedder);
  if (!embedder.ok()) return FailStartup(embedder.status());

  ThreadPool pool(0);  // related-list computation
  const search::EngineOptions& eopts = config->engine;
  auto lock = LockServiceData(eopts.data_dir, "search.lock", "folio-search");
  if (!lock.ok()) return FailStartup(lock.status());
  auto engine = search::Engine::Open(eopts, embedder->get(), &pool);
  if (!engine.ok()) return FailStartup(engine.status());

  metrics::Registry registry;
  search::Metrics m(&registry);
  metrics::DiskGauges data_disk(&registry, eopts.data_dir);  // free space before writes fail (issue 24)
  m.embedder_up.Set(1);
  m.notes.Set(static_cast<double>((*engine)->notes()));
  m.vectors.Set(static_cast<double>((*engine)->vectors()));
  m.vocabulary_words.Set(static_cast<double>((*engine)->vocabulary_words()));
  m.vocabulary_bytes.Set(static_cast<double>((*engine)->vocabulary_bytes()));

  bus::BusMetrics bus_metrics(&registry);
  bus::BusOptions bus_opts = bus::BusOptionsFor(basics, "folio-search", &bus_metrics);
  search::Indexer indexer(bus_opts, engine->get(), &m, config->batch, search::SearchDurable(config->replica_id));
  std::thread indexer_thread([&] { indexer.Run(); });

  http::Loop loop;
  // Declared after the loop: destroyed (drained) before it, since its tasks post to the loop.
  ThreadPool query_pool(config->query_threads);
  http::Router router;
  metrics::OpsEndpoints ops(&loop, &registry, Readiness(&indexer, http_embedder, config->embed.url), basics);
  ops.MountPublic(&router);
  search::MountQueryApi(&router, {engine->get(), &indexer, &m, &query_pool, &loop});

  http::ServerOptions sopts;
  // Its API is GETs only: a request body is refused (413) before a byte of
  // it is read, so search needs no body budget (issue 22).
  sopts.max_body_bytes = 0;
  http::Server server(&loop, &router, sopts);
  Status ls = server.ListenActivatedOrBind(basics.host, basics.port);
  if (ls.ok()) ls = ops.Listen();
  if (!ls.ok()) {
    indexer.Stop();
    indexer_thread.join();
    return FailStartup(ls);
  }
  log::Info("folio-search listening", {{"addr", basics.host + ":" + std::to_string(server.port())},
                                        {"data", eopts.data_dir}, {"replica", config->replica_id},
                                        {"embedder", (*embedder)->Describe()},
                                        {"notes", std::to_string((*engine)->notes())}});
  auto shutdown = [&] {
    log::Info("shutting down");
    ops.Drain(&server, [&] {
      indexer.Stop();
      loop.Stop();
    });
  };
  loop.OnSignal(SIGTERM, shutdown);
  loop.OnSignal(SIGINT, shutdown);
  loop.Run();
  indexer.Stop();
  indexer_thread.join();
  log::Info("folio-search stopped");
  return 0;
}
