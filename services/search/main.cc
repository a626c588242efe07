// folio-search: consumes the "notes" stream with a durable consumer, embeds
// notes, keeps vector and full-text indexes (Engine), publishes each note's
// related list on the "related" stream for ingest, and answers queries over
// NATS (search.query, search.related) and HTTP (/api/v1/search,
// /api/v1/related). Wiring only; the work is in Engine and libs/.
//
// Threads: the main loop serves HTTP and hands queries to the query pool;
// the indexer thread (indexer.h) owns the NATS consumer and runs every
// Engine::Apply; NATS.c runs the responders' handlers on its own threads.
#include <csignal>
#include <cstdlib>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "engine.h"
#include "config.h"
#include "indexer.h"
#include "folio/bus/bus.h"
#include "folio/bus/connect.h"
#include "folio/bus/related_schema.h"
#include "folio/bus/search_schema.h"
#include "folio/core/config.h"
#include "folio/core/files.h"
#include "folio/core/json.h"
#include "folio/core/log.h"
#include "folio/core/service.h"
#include "folio/core/thread_pool.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "folio/vector/embedder.h"
#include "folio/vector/http_embedder.h"

using namespace folio;

namespace {

// A reply as the HTTP API answers it: the reply itself, or the one JSON
// error body with the status its code maps to.
http::Response ReplyResponse(const bus::SearchReply& r) {
  if (!r.error.empty()) return http::Response::Error(Status(r.code, r.error));
  return http::Response::Json(200, bus::EncodeSearchReply(r));
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags("folio-search", "Indexes notes for similarity and full-text search; computes related notes.");
  search::AddSearchFlags(&flags);
  ServiceBasics basics;
  if (int rc = ParseServiceFlags(&flags, argc, argv, &basics); rc >= 0) return rc;
  auto config = search::ReadSearchConfig(flags, basics);
  if (!config.ok()) return FailStartup(config.status());

  std::unique_ptr<vector::Embedder> embedder;
  vector::HttpEmbedder* http_embedder = nullptr;
  if (!config->http_embedder) {
    auto hashed = std::make_unique<vector::HashedEmbedder>(config->embed_dim);
    hashed->SetIdf(vector::StopWordIdf(), vector::kStopWordIdfName);
    embedder = std::move(hashed);
  } else {
    auto e = vector::HttpEmbedder::Create(config->embed);
    if (!e.ok()) return FailStartup(e.status());
    http_embedder = e->get();
    embedder = std::move(*e);
  }

  ThreadPool pool(0);  // related-list computation
  const search::EngineOptions& eopts = config->engine;
  std::error_code ec;
  std::filesystem::create_directories(eopts.data_dir, ec);
  if (ec) return FailStartup(Status::Unavailable("cannot create --data " + eopts.data_dir + ": " + ec.message()));
  // One process per index: the public port is shared (SO_REUSEPORT).
  auto lock = LockFile(eopts.data_dir + "/search.lock");
  if (!lock.ok()) {
    return FailStartup(Status(lock.status().code(), lock.status().message() +
                                                 ": another folio-search uses this --data; stop it first"));
  }
  auto engine = search::Engine::Open(eopts, embedder.get(), &pool);
  if (!engine.ok()) return FailStartup(engine.status());

  metrics::Registry registry;
  search::Metrics m(&registry);
  m.embedder_up.Set(1);
  m.notes.Set(static_cast<double>((*engine)->notes()));
  m.vectors.Set(static_cast<double>((*engine)->vectors()));

  bus::BusMetrics bus_metrics(&registry);
  bus::BusOptions bus_opts = bus::BusOptionsFor(basics, "folio-search", &bus_metrics);
  search::Indexer indexer(bus_opts, engine->get(), &m, config->batch);
  std::thread indexer_thread([&] { indexer.Run(); });

  http::Loop loop;
  // Declared after the loop: destroyed (drained) before it, since its tasks post to the loop.
  ThreadPool query_pool(config->query_threads);
  http::Router router;
  metrics::OpsEndpoints ops(&loop, &registry, [&]() -> std::string {
    std::string reason = indexer.NotReadyReason();
    if (reason.empty() && http_embedder) {
      vector::EmbedderHealth h = http_embedder->health();
      if (!h.ok) reason = "embedder at " + config->embed.url + " failing: " + h.last_error;
    }
    return reason;
  }, basics);
  ops.MountPublic(&router);
  search::Engine* eng = engine->get();
  // Queries run on the pool (embedding a query may block on --embed-url);
  // the answer is posted back to the loop.
  router.Handle("GET", "/api/v1/search", [&, eng](const http::Request& req, http::Responder resp) {
    auto t0 = std::chrono::steady_clock::now();
    bus::SearchQuery q;
    q.site = req.QueryParam("site");
    if (q.site.empty()) q.site = "default";
    q.q = req.QueryParam("q");
    std::string k = req.QueryParam("k"), mode = req.QueryParam("mode");
    bus::SearchReply early;
    if (!k.empty()) {
      char* end = nullptr;
      long v = std::strtol(k.c_str(), &end, 10);
      if (*end != '\0' || v < 1 || v > bus::kMaxSearchK) {
        early = search::ErrorReply(Code::kInvalidArgument, "k must be an integer in 1.." + std::to_string(bus::kMaxSearchK));
      }
      q.k = static_cast<int>(v);
    }
    if (early.error.empty() && !mode.empty() && !bus::ParseSearchMode(mode, &q.mode)) {
      early = search::ErrorReply(Code::kInvalidArgument, "mode must be one of vector, text, hybrid");
    }
    if (early.error.empty()) {
      // One validation for NATS and HTTP: the request's own decoder.
      bus::SearchQuery checked;
      if (Status s = bus::DecodeSearchQuery(bus::EncodeSearchQuery(q), &checked); !s.ok()) {
        early = search::ErrorReply(Code::kInvalidArgument, s.message());
      }
    }
    if (!early.error.empty()) {
      indexer.Observe(t0, early, &m.search_queries);
      resp.Send(ReplyResponse(early));
      return;
    }
    auto shared = std::make_shared<http::Responder>(std::move(resp));
    query_pool.Submit([&, eng, q, shared, t0] {
      auto r = std::make_shared<bus::SearchReply>(eng->Search(q));
      indexer.Observe(t0, *r, &m.search_queries);
      loop.Post([shared, r] { shared->Send(ReplyResponse(*r)); });
    });
  }, "query");
  router.Handle("GET", "/api/v1/related", [&, eng](const http::Request& req, http::Responder resp) {
    auto t0 = std::chrono::steady_clock::now();
    bus::RelatedQuery q;
    q.site = req.QueryParam("site");
    if (q.site.empty()) q.site = "default";
    q.path = req.QueryParam("path");
    std::string k = req.QueryParam("k");
    bus::SearchReply r;
    if (!k.empty()) {
      char* end = nullptr;
      long v = std::strtol(k.c_str(), &end, 10);
      if (*end != '\0' || v < 1 || v > bus::kMaxRelatedK) {
        r = search::ErrorReply(Code::kInvalidArgument, "k must be an integer in 1.." + std::to_string(bus::kMaxRelatedK));
      }
      q.k = static_cast<int>(v);
    }
    if (r.error.empty()) {
      bus::RelatedQuery checked;
      if (Status s = bus::DecodeRelatedQuery(bus::EncodeRelatedQuery(q), &checked); !s.ok()) {
        r = search::ErrorReply(Code::kInvalidArgument, s.message());
      } else {
        r = eng->Related(q);  // a lookup of a precomputed list: cheap enough for the loop
      }
    }
    indexer.Observe(t0, r, &m.related_queries);
    resp.Send(ReplyResponse(r));
  }, "related");

  http::Server server(&loop, &router, {});
  Status ls = server.ListenActivatedOrBind(basics.host, basics.port);
  if (ls.ok()) ls = ops.Listen();
  if (!ls.ok()) {
    indexer.Stop();
    indexer_thread.join();
    return FailStartup(ls);
  }
  log::Info("folio-search listening", {{"addr", basics.host + ":" + std::to_string(server.port())},
                                        {"data", eopts.data_dir}, {"embedder", embedder->Describe()},
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
