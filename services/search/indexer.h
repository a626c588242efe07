// Indexer: folio-search's NATS side, one per replica. It owns the
// connection, this replica's durable consumer of the notes stream
// ("search-<replica-id>", config.h) and the responders of search.query and
// search.related. Run() connects (bus::ConnectRetrying, backoff 0.5 s
// doubling to 5 s), then loops until Stop(): fetch a batch of note events,
// Engine::Apply it, publish the related lists it changed on the "related"
// stream, then ack the batch. A batch that fails to index is nak'ed with a
// growing delay (1 s doubling, at most 30 s) and the notes wait in the stream.
//
// Replicas (issue 23). Each replica keeps its own index from its own
// consumer. It joins the "folio-search" queue group (starts its responders)
// only once caught up: when its consumer reports every note event delivered
// and acked (pending 0 and ack-pending 0, checked before each fetch; a batch
// is acked once applied). Messages a crashed run left unacked come back
// after ack_wait (60 s) and hold the join until then. Until then
// NotReadyReason() says "catching up ..." (so /readyz is 503) and it answers
// no NATS query; once joined it stays joined. A replica that writes faster
// than it indexes may stay behind; it then keeps catching up.
//
// Related lists: while catching up nothing is published (the lists stay
// unpublished in the Engine; whatever serves already published them); on
// joining, the replica publishes its current list of every note whose list
// changed meanwhile (PublishPending), so a restarted replica never replays
// stale intermediate lists. After that each batch's lists are published with
// Nats-Msg-Id RelatedMsgId(update, batch's first and last stream sequence):
// replicas that apply the same batch compute the same lists, hence the same
// id, and the related stream (2-minute duplicate window) keeps one copy, so
// ingest applies and re-renders once. Replicas that cut a burst into
// different batches publish different ids, and both copies are kept (ingest
// treats an equal list as a no-op). Lists republished after a failure go
// without an id (a duplicate costs ingest a no-op; a wrongly dropped list
// would leave a stale page).
//
// Ownership: the Engine and the Metrics are borrowed and must outlive the
// Indexer. Threads: Run() on one thread (the indexer thread), which alone
// calls Engine::Apply; the responders' handlers run on NATS.c's threads;
// Stop(), NotReadyReason(), serving() and Observe() may be called from any
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine.h"
#include "folio/bus/bus.h"
#include "folio/bus/related_schema.h"
#include "folio/bus/search_schema.h"
#include "folio/metrics/metrics.h"

namespace folio::search {

// folio-search's metrics (folio_search_*), registered once in the registry.
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
        related_messages(r->NewCounter("folio_search_related_messages_published_total",
                                       "Related-list messages published (acked by JetStream; a duplicate of "
                                       "another replica's is acked too, and not stored)")),
        related_recomputed(r->NewCounter("folio_search_related_lists_computed_total", "Related lists recomputed")),
        related_merged(r->NewCounter("folio_search_related_lists_merged_total",
                                     "Related lists updated by merging in notes that entered them")),
        embedder_up(r->NewGauge("folio_search_embedder_up", "1 if the last embedding batch succeeded")),
        notes(r->NewGauge("folio_search_notes", "Notes indexed")),
        vectors(r->NewGauge("folio_search_vectors", "Vectors indexed (notes and chunks)")),
        vocabulary_words(r->NewGauge("folio_search_vocabulary_words",
                                     "Distinct words of every site's notes (stems, typo corrections)")),
        vocabulary_bytes(r->NewGauge("folio_search_vocabulary_bytes", "Memory of the sites' vocabularies (estimate)")),
        pending(r->NewGauge("folio_search_consumer_pending", "Note events not yet delivered to this consumer")),
        serving(r->NewGauge("folio_search_serving",
                            "1 once this replica caught up and answers NATS queries (joined the queue group)")),
        apply_seconds(r->NewHistogram("folio_search_apply_seconds", "Time to apply one batch of note events",
                                      {0.001, 0.01, 0.1, 1, 10, 60})) {}
  metrics::Counter &search_queries, &related_queries, &query_errors;
  metrics::Histogram& query_seconds;
  metrics::Counter &events, &embedded, &embed_failures, &related_published, &related_messages, &related_recomputed,
      &related_merged;
  metrics::Gauge &embedder_up, &notes, &vectors, &vocabulary_words, &vocabulary_bytes, &pending, &serving;
  metrics::Histogram& apply_seconds;
};

// A reply carrying an error (its code: invalid_argument, not_found,
// unavailable, ...) and its message.
bus::SearchReply ErrorReply(Code code, std::string message);

// The Nats-Msg-Id of a related update published for the note events at
// stream sequences first..last: "related-<first>-<last>-<FNV-1a 64 of the
// encoded update, hex>". Equal batches and equal lists give equal ids;
// the sequences keep a list that changes back (A, B, A) from being dropped
// as a duplicate of its first appearance. Pure.
std::string RelatedMsgId(uint64_t first_seq, uint64_t last_seq, std::string_view encoded_update);

class Indexer {
 public:
  // `opts` says how to reach NATS; `batch` is the note events per fetch;
  // `durable` the notes consumer's name (SearchDurable(replica_id)).
  Indexer(bus::BusOptions opts, Engine* engine, Metrics* m, int batch, std::string durable)
      : opts_(std::move(opts)), engine_(engine), m_(m), batch_(batch), durable_(std::move(durable)) {}

  // The indexing loop; returns after Stop(), having closed the consumer,
  // the responders and the connection. Call once, on the indexer thread.
  void Run();

  // Makes Run() return soon (wakes its sleeps). Any thread.
  void Stop();

  // "" when ready; else why not ("starting" until the first connect,
  // "catching up ..." until it joined the queue group). Any thread.
  std::string NotReadyReason();
  // True once caught up and answering NATS queries. Any thread.
  bool serving() const { return serving_.load(); }

  // Counts one answered query in `c` (and in the errors counter when `r`
  // carries an error) and its time since `t0`. Any thread.
  void Observe(std::chrono::steady_clock::time_point t0, const bus::SearchReply& r, metrics::Counter* c);

 private:
  void set_state(std::string s);
  // A failed NATS call of the loop ("" once one succeeds), apart from the
  // indexing state, so that an idle fetch cannot hide an indexing failure.
  void set_nats_error(std::string s);
  void Sleep(int64_t ms);
  // ConnectRetrying's setup: the notes consumer on `b`.
  Status Subscribe(bus::Bus* b);
  // Joins the queue group (starts the responders) if the consumer has no
  // undelivered or unacked note events; else records how many there are.
  void JoinIfCaughtUp();
  std::string OnSearch(std::string_view data);
  std::string OnRelated(std::string_view data);
  // Publishes and confirms `updates`; with last_seq > 0 each carries
  // RelatedMsgId(first_seq, last_seq, ...). False (logged) on failure.
  bool Publish(const std::vector<bus::RelatedUpdate>& updates, uint64_t first_seq = 0, uint64_t last_seq = 0);
  bool PublishPending();
  void Process(std::vector<bus::StreamMessage>& msgs);
  void UpdatePending();

  bus::BusOptions opts_;
  Engine* engine_;
  Metrics* m_;
  int batch_;
  const std::string durable_;
  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<bus::PullConsumer> consumer_;
  std::vector<std::unique_ptr<bus::Responder>> responders_;
  bool pending_checked_ = false;
  int retries_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> serving_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::string state_ = "starting";  // GUARDED_BY(mu_)
  std::string nats_error_;          // GUARDED_BY(mu_)
  std::string catching_up_ = "catching up with the notes stream";  // GUARDED_BY(mu_); until serving_
};

}  // namespace folio::search
