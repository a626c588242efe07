// folio-search: consumes the "notes" stream with a durable consumer, embeds
// notes, keeps vector and full-text indexes (Engine), publishes each note's
// related list on the "related" stream for ingest, and answers queries over
// NATS (search.query, search.related) and HTTP (/api/v1/search,
// /api/v1/related). Wiring only; the work is in Engine and libs/.
//
// Threads: the main loop serves HTTP and hands queries to the query pool;
// the indexer thread owns the NATS consumer and runs every Engine::Apply;
// NATS.c runs the responders' handlers on its own threads.
#include <csignal>
#include <cstdlib>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "engine.h"
#include "folio/bus/bus.h"
#include "folio/bus/schema.h"
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

int Fail(const Status& s) {
  log::Error("startup failed", {{"error", s.message()}});
  return 1;
}

// A reply as the HTTP API answers it: the reply itself, or the one JSON
// error body with the status its code maps to.
http::Response ReplyResponse(const bus::SearchReply& r) {
  if (!r.error.empty()) return http::Response::Error(Status(r.code, r.error));
  return http::Response::Json(200, bus::EncodeSearchReply(r));
}

bus::SearchReply ErrorReply(Code code, std::string message) {
  bus::SearchReply r;
  r.error = std::move(message);
  r.code = code;
  return r;
}

struct Metrics {
  explicit Metrics(metrics::Registry* r)
      : search_queries(r->NewCounter("folio_search_queries_total", "Queries answered", {{"kind", "search"}})),
        related_queries(r->NewCounter("folio_search_queries_total", "Queries answered", {{"kind", "related"}})),
        query_errors(r->NewCounter("folio_search_query_errors_total", "Queries answered with an error")),
        query_seconds(r->NewHistogram("folio_search_query_seconds", "Time to answer a query",
                                      {0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 1})),
        events(r->NewCounter("folio_search_note_events_total", "Note events consumed")),
        embedded(r->NewCounter("folio_search_embedded_texts_total", "Texts embedded (notes and chunks)")),
        embed_failures(r->NewCounter("folio_search_embed_failures_total", "Batches that failed to embed")),
        related_published(r->NewCounter("folio_search_related_lists_published_total", "Related lists published")),
        related_recomputed(r->NewCounter("folio_search_related_lists_computed_total", "Related lists recomputed")),
        related_merged(r->NewCounter("folio_search_related_lists_merged_total",
                                     "Related lists updated by merging in notes that entered them")),
        embedder_up(r->NewGauge("folio_search_embedder_up", "1 if the last embedding batch succeeded")),
        notes(r->NewGauge("folio_search_notes", "Notes indexed")),
        vectors(r->NewGauge("folio_search_vectors", "Vectors indexed (notes and chunks)")),
        pending(r->NewGauge("folio_search_consumer_pending", "Note events not yet delivered to this consumer")),
        apply_seconds(r->NewHistogram("folio_search_apply_seconds", "Time to apply one batch of note events",
                                      {0.001, 0.01, 0.1, 1, 10, 60})) {}
  metrics::Counter &search_queries, &related_queries, &query_errors;
  metrics::Histogram& query_seconds;
  metrics::Counter &events, &embedded, &embed_failures, &related_published, &related_recomputed, &related_merged;
  metrics::Gauge &embedder_up, &notes, &vectors, &pending;
  metrics::Histogram& apply_seconds;
};

// The indexer: owns the NATS connection, the consumer and the responders.
class Indexer {
 public:
  Indexer(bus::BusOptions opts, search::Engine* engine, Metrics* m, int batch)
      : opts_(std::move(opts)), engine_(engine), m_(m), batch_(batch) {}

  void Run() {
    int64_t backoff_ms = 250;
    while (!stop_) {
      if (!bus_ && !Connect()) {
        Sleep(std::min<int64_t>(backoff_ms *= 2, 5000));
        continue;
      }
      backoff_ms = 250;
      if (!PublishPending()) {
        Sleep(1000);
        continue;
      }
      auto msgs = consumer_->Fetch(batch_, 1000);
      if (!msgs.ok()) {
        set_state("NATS consumer: " + msgs.status().message());
        Sleep(500);
        continue;
      }
      if (msgs->empty()) {
        UpdatePending();
        continue;
      }
      Process(*msgs);
    }
    responders_.clear();
    consumer_.reset();
    bus_.reset();
  }

  void Stop() {
    stop_ = true;
    std::lock_guard lock(mu_);
    cv_.notify_all();
  }

  // "" when ready; else why not.
  std::string NotReadyReason() {
    std::lock_guard lock(mu_);
    return state_;
  }

 private:
  void set_state(std::string s) {
    std::lock_guard lock(mu_);
    if (s != state_ && !s.empty()) log::Warn("search not ready", {{"reason", s}});
    state_ = std::move(s);
  }

  void Sleep(int64_t ms) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stop_.load(); });
  }

  bool Connect() {
    auto b = bus::Bus::Connect(opts_);
    if (!b.ok()) {
      set_state("not connected to NATS at " + opts_.url + ": " + b.status().message());
      return false;
    }
    if (Status s = (*b)->EnsureSchema(); !s.ok()) {
      set_state("JetStream setup failed: " + s.message());
      return false;
    }
    bus::ConsumerOptions co;
    co.stream = std::string(bus::kNotesStream);
    co.durable = "search";
    auto c = bus::PullConsumer::Start(b->get(), co);
    if (!c.ok()) {
      set_state("cannot start the notes consumer: " + c.status().message());
      return false;
    }
    std::vector<std::unique_ptr<bus::Responder>> responders;
    for (int i = 0; i < 2; ++i) {
      auto rs = bus::Responder::Start(b->get(), bus::kSearchQuerySubject, "folio-search",
                                      [this](std::string_view, std::string_view data) { return OnSearch(data); });
      auto rr = bus::Responder::Start(b->get(), bus::kSearchRelatedSubject, "folio-search",
                                      [this](std::string_view, std::string_view data) { return OnRelated(data); });
      if (!rs.ok() || !rr.ok()) {
        set_state("cannot subscribe to search requests: " + (rs.ok() ? rr.status() : rs.status()).message());
        return false;
      }
      responders.push_back(std::move(*rs));
      responders.push_back(std::move(*rr));
    }
    bus_ = std::move(*b);
    consumer_ = std::move(*c);
    responders_ = std::move(responders);
    log::Info("connected to NATS", {{"url", opts_.url}});
    set_state("");
    return true;
  }

  std::string OnSearch(std::string_view data) {
    auto t0 = std::chrono::steady_clock::now();
    bus::SearchQuery q;
    bus::SearchReply r;
    if (Status s = bus::DecodeSearchQuery(data, &q); !s.ok()) {
      r = ErrorReply(Code::kInvalidArgument, s.message());
    } else {
      r = engine_->Search(q);
    }
    Observe(t0, r, &m_->search_queries);
    return bus::EncodeSearchReply(r);
  }

  std::string OnRelated(std::string_view data) {
    auto t0 = std::chrono::steady_clock::now();
    bus::RelatedQuery q;
    bus::SearchReply r;
    if (Status s = bus::DecodeRelatedQuery(data, &q); !s.ok()) {
      r = ErrorReply(Code::kInvalidArgument, s.message());
    } else {
      r = engine_->Related(q);
    }
    Observe(t0, r, &m_->related_queries);
    return bus::EncodeSearchReply(r);
  }

 public:
  void Observe(std::chrono::steady_clock::time_point t0, const bus::SearchReply& r, metrics::Counter* c) {
    c->Increment();
    if (!r.error.empty()) m_->query_errors.Increment();
    m_->query_seconds.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

 private:
  bool Publish(const std::vector<bus::RelatedUpdate>& updates) {
    if (updates.empty()) return true;
    size_t lists = 0;
    for (const bus::RelatedUpdate& u : updates) {
      lists += u.lists.size();
      if (Status s = bus_->PublishAsync(bus::RelatedSubject(u.site), bus::EncodeRelatedUpdate(u)); !s.ok()) {
        log::Warn("related lists not published; will retry", {{"error", s.message()}});
        return false;
      }
    }
    if (Status s = bus_->WaitForAcks(10'000); !s.ok()) {
      log::Warn("related lists not acknowledged; will retry", {{"error", s.message()}});
      return false;
    }
    if (Status s = engine_->MarkPublished(updates); !s.ok()) {
      log::Warn("cannot record published related lists", {{"error", s.message()}});
      return false;
    }
    m_->related_published.Increment(static_cast<double>(lists));
    return true;
  }

  // Related lists computed before a crash or a failed publish.
  bool PublishPending() {
    if (!pending_checked_) {
      auto pending = engine_->PendingUpdates();
      if (!pending.ok()) {
        set_state("cannot read pending related lists: " + pending.status().message());
        return false;
      }
      if (!Publish(*pending)) return false;
      pending_checked_ = true;
    }
    return true;
  }

  void Process(std::vector<bus::StreamMessage>& msgs) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<bus::NoteEvent> events;
    events.reserve(msgs.size());
    for (const bus::StreamMessage& msg : msgs) {
      bus::NoteEvent e;
      if (Status s = bus::DecodeNoteEvent(msg.data, &e); !s.ok()) {
        log::Warn("skipping a malformed note event", {{"seq", std::to_string(msg.stream_seq)}, {"error", s.message()}});
        continue;
      }
      events.push_back(std::move(e));
    }
    search::ApplyStats stats;
    auto updates = engine_->Apply(events, &stats);
    if (!updates.ok()) {
      m_->embed_failures.Increment();
      m_->embedder_up.Set(0);
      set_state("indexing failed (notes wait in the stream): " + updates.status().message());
      int64_t delay = std::min<int64_t>(1000LL << std::min<int>(retries_++, 5), 30'000);
      for (const bus::StreamMessage& msg : msgs) (void)consumer_->Nak(msg, delay);
      Sleep(delay);
      return;
    }
    retries_ = 0;
    m_->embedder_up.Set(1);
    set_state("");
    if (!Publish(*updates)) pending_checked_ = false;  // retried by PublishPending
    for (const bus::StreamMessage& msg : msgs) (void)consumer_->Ack(msg);
    m_->events.Increment(static_cast<double>(stats.events));
    m_->embedded.Increment(static_cast<double>(stats.embedded_texts));
    m_->related_recomputed.Increment(static_cast<double>(stats.related_recomputed));
    m_->related_merged.Increment(static_cast<double>(stats.related_merged));
    m_->notes.Set(static_cast<double>(engine_->notes()));
    m_->vectors.Set(static_cast<double>(engine_->vectors()));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m_->apply_seconds.Observe(secs);
    log::Info("indexed", {{"events", std::to_string(stats.events)},
                          {"embedded_notes", std::to_string(stats.embedded_notes)},
                          {"embedded_texts", std::to_string(stats.embedded_texts)},
                          {"unchanged", std::to_string(stats.unchanged)},
                          {"deleted", std::to_string(stats.deleted)},
                          {"related_computed", std::to_string(stats.related_recomputed)},
                          {"related_merged", std::to_string(stats.related_merged)},
                          {"related_changed", std::to_string(stats.related_changed)},
                          {"embed_ms", std::to_string(static_cast<int64_t>(stats.embed_ms))},
                          {"related_ms", std::to_string(static_cast<int64_t>(stats.related_ms))},
                          {"ms", std::to_string(static_cast<int64_t>(secs * 1000))}});
    UpdatePending();
  }

  void UpdatePending() {
    auto p = consumer_->Pending();
    if (p.ok()) m_->pending.Set(static_cast<double>(*p));
  }

  bus::BusOptions opts_;
  search::Engine* engine_;
  Metrics* m_;
  int batch_;
  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<bus::PullConsumer> consumer_;
  std::vector<std::unique_ptr<bus::Responder>> responders_;
  bool pending_checked_ = false;
  int retries_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::string state_ = "starting";  // GUARDED_BY(mu_)
};

}  // namespace

int main(int argc, char** argv) {
  Flags flags("folio-search", "Indexes notes for similarity and full-text search; computes related notes.");
  AddServiceFlags(&flags, "127.0.0.1:8082");
  flags.Add("data", "./data/search", "directory for the search database");
  flags.Add("embed-url", "", "OpenAI-compatible embeddings endpoint (http://host:port/v1/embeddings); "
                             "empty = the built-in hashed embedder");
  flags.Add("embed-model", "", "model name sent to --embed-url");
  flags.Add("embed-dim", "384", "vector length (of the --embed-url model, or of the built-in embedder)");
  flags.Add("embed-api-key-env", "FOLIO_EMBED_API_KEY", "environment variable holding the --embed-url API key");
  flags.Add("embed-batch", "64", "texts per embedding request");
  flags.Add("related-k", "10", "related notes per note");
  flags.Add("hnsw-threshold", "20000", "vectors per site above which the index is HNSW instead of exact");
  flags.Add("batch", "256", "note events per indexing batch");
  flags.Add("query-threads", "0", "threads answering HTTP queries (0 = CPUs available)");
  ServiceBasics basics;
  if (int rc = ParseServiceFlags(&flags, argc, argv, &basics); rc >= 0) return rc;

  auto dim = flags.GetInt("embed-dim");
  auto embed_batch = flags.GetInt("embed-batch");
  auto related_k = flags.GetInt("related-k");
  auto threshold = flags.GetInt("hnsw-threshold");
  auto batch = flags.GetInt("batch");
  auto query_threads = flags.GetInt("query-threads");
  for (const auto* r : {&dim, &embed_batch, &related_k, &threshold, &batch, &query_threads}) {
    if (!r->ok()) return Fail(r->status());
  }
  if (*dim < 8 || *dim > 8192) return Fail(Status::Invalid("--embed-dim must be in 8..8192"));
  if (*related_k < 1 || *related_k > bus::kMaxRelatedK) {
    return Fail(Status::Invalid("--related-k must be in 1.." + std::to_string(bus::kMaxRelatedK)));
  }
  if (*batch < 1 || *batch > 4096) return Fail(Status::Invalid("--batch must be in 1..4096"));
  if (*embed_batch < 1 || *embed_batch > 4096) return Fail(Status::Invalid("--embed-batch must be in 1..4096"));

  std::unique_ptr<vector::Embedder> embedder;
  vector::HttpEmbedder* http_embedder = nullptr;
  if (flags.Get("embed-url").empty()) {
    auto hashed = std::make_unique<vector::HashedEmbedder>(static_cast<size_t>(*dim));
    hashed->SetIdf(vector::StopWordIdf(), vector::kStopWordIdfName);
    embedder = std::move(hashed);
  } else {
    vector::HttpEmbedderOptions eo;
    eo.url = flags.Get("embed-url");
    eo.model = flags.Get("embed-model");
    eo.dim = static_cast<size_t>(*dim);
    eo.batch_size = static_cast<size_t>(*embed_batch);
    if (const char* key = std::getenv(flags.Get("embed-api-key-env").c_str())) eo.api_key = key;
    auto e = vector::HttpEmbedder::Create(eo);
    if (!e.ok()) return Fail(e.status());
    http_embedder = e->get();
    embedder = std::move(*e);
  }

  ThreadPool pool(0);  // related-list computation
  search::EngineOptions eopts;
  eopts.data_dir = flags.Get("data");
  eopts.related_k = static_cast<size_t>(*related_k);
  eopts.hnsw_threshold = static_cast<size_t>(*threshold);
  eopts.embed_batch = static_cast<size_t>(*embed_batch);
  std::error_code ec;
  std::filesystem::create_directories(eopts.data_dir, ec);
  if (ec) return Fail(Status::Unavailable("cannot create --data " + eopts.data_dir + ": " + ec.message()));
  // One process per index: the public port is shared (SO_REUSEPORT).
  auto lock = LockFile(eopts.data_dir + "/search.lock");
  if (!lock.ok()) {
    return Fail(Status(lock.status().code(), lock.status().message() +
                                                 ": another folio-search uses this --data; stop it first"));
  }
  auto engine = search::Engine::Open(eopts, embedder.get(), &pool);
  if (!engine.ok()) return Fail(engine.status());

  metrics::Registry registry;
  Metrics m(&registry);
  m.embedder_up.Set(1);
  m.notes.Set(static_cast<double>((*engine)->notes()));
  m.vectors.Set(static_cast<double>((*engine)->vectors()));

  bus::BusOptions bus_opts;
  bus_opts.url = basics.nats_url;
  bus_opts.name = "folio-search";
  bus_opts.replicas = basics.nats_replicas;
  bus::BusMetrics bus_metrics(&registry);
  bus_opts.metrics = &bus_metrics;
  Indexer indexer(bus_opts, engine->get(), &m, static_cast<int>(*batch));
  std::thread indexer_thread([&] { indexer.Run(); });

  http::Loop loop;
  // Declared after the loop: destroyed (drained) before it, since its tasks post to the loop.
  ThreadPool query_pool(static_cast<size_t>(*query_threads));
  http::Router router;
  metrics::OpsEndpoints ops(&loop, &registry, [&]() -> std::string {
    std::string reason = indexer.NotReadyReason();
    if (reason.empty() && http_embedder) {
      vector::EmbedderHealth h = http_embedder->health();
      if (!h.ok) reason = "embedder at " + flags.Get("embed-url") + " failing: " + h.last_error;
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
        early = ErrorReply(Code::kInvalidArgument, "k must be an integer in 1.." + std::to_string(bus::kMaxSearchK));
      }
      q.k = static_cast<int>(v);
    }
    if (early.error.empty() && !mode.empty() && !bus::ParseSearchMode(mode, &q.mode)) {
      early = ErrorReply(Code::kInvalidArgument, "mode must be one of vector, text, hybrid");
    }
    if (early.error.empty()) {
      // One validation for NATS and HTTP: the request's own decoder.
      bus::SearchQuery checked;
      if (Status s = bus::DecodeSearchQuery(bus::EncodeSearchQuery(q), &checked); !s.ok()) {
        early = ErrorReply(Code::kInvalidArgument, s.message());
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
        r = ErrorReply(Code::kInvalidArgument, "k must be an integer in 1.." + std::to_string(bus::kMaxRelatedK));
      }
      q.k = static_cast<int>(v);
    }
    if (r.error.empty()) {
      bus::RelatedQuery checked;
      if (Status s = bus::DecodeRelatedQuery(bus::EncodeRelatedQuery(q), &checked); !s.ok()) {
        r = ErrorReply(Code::kInvalidArgument, s.message());
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
    return Fail(ls);
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
