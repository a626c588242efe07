// RelatedConsumer: reads search's related-note lists from the JetStream
// stream "related" (durable pull consumer kRelatedDurable, every subject)
// and bakes them into pages: each fetched batch goes to the writer loop,
// where SiteWriter::ApplyRelated runs in turn with pushes, never beside
// one; a batch's updates of one site merge into one commit. A message is
// acked only once its update is committed; a failed commit is retried with
// backoff before anything newer is fetched (so an older list never
// overwrites a newer one); a malformed message or one for a site this
// ingest does not serve is logged and acked (it would never succeed).
//
// Ownership: main owns it; it borrows the writer Loop, Sites and Registry,
// which must outlive it, and the Bus, which must outlive Stop().
// Threading: Start() and Stop() from any thread (Start on the writer
// thread, once NATS is connected; Stop after the HTTP loop has stopped).
// The consumer runs on its own thread and survives NATS outages: starting
// the consumer and fetching are retried with backoff.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "folio/bus/bus.h"
#include "folio/http/loop.h"
#include "folio/metrics/metrics.h"
#include "sites.h"

namespace folio::ingest {

inline constexpr std::string_view kRelatedDurable = "ingest";

struct RelatedConsumerOptions {
  int batch = 32;                    // messages per fetch (each at most bus::kMaxRelatedMessageBytes)
  int64_t fetch_timeout_ms = 500;    // wait for the first message; also bounds how long Stop() waits
  int64_t backoff_min_ms = 100;      // first retry after a failure, doubled per failure...
  int64_t backoff_max_ms = 5'000;    // ...up to this
};

class RelatedConsumer {
 public:
  RelatedConsumer(http::Loop* writer_loop, Sites* sites, metrics::Registry* registry,
                  RelatedConsumerOptions options = {});
  ~RelatedConsumer();  // Stop()

  // Starts the consumer thread; later calls do nothing.
  void Start(bus::Bus* bus);
  // Stops fetching and joins the thread (within about fetch_timeout_ms). A
  // batch the writer has not finished is left unacked: NATS redelivers it.
  void Stop();

 private:
  struct Batch;
  void Run(bus::Bus* bus);
  // Sleeps for the current backoff (or until Stop) and doubles it.
  void Backoff(int64_t* backoff_ms);
  // Decodes, hands the batch to the writer loop, waits, acks (retrying
  // failed commits until they succeed or Stop).
  void Process(bus::PullConsumer* consumer, std::vector<bus::StreamMessage> msgs);
  // Process's steps. Group: msgs decoded into one update per site (the
  // malformed ones acked and counted); null if none is left.
  std::shared_ptr<Batch> Group(bus::PullConsumer* consumer, const std::vector<bus::StreamMessage>& msgs);
  // Hands the batch to the writer loop (ApplyOnWriter) and waits until it
  // ran; false if Stop came first (the batch stays unacked).
  bool RunOnWriter(const std::shared_ptr<Batch>& batch);
  // Writer loop: applies the batch's pending and failed updates, then marks it done.
  static void ApplyOnWriter(Batch* batch, Sites* sites);
  // Acks and counts the updates applied or dropped; true if one failed (retry).
  bool Settle(bus::PullConsumer* consumer, const std::vector<bus::StreamMessage>& msgs, Batch* batch);
  bool stopping() const;

  http::Loop* writer_loop_;
  Sites* sites_;
  const RelatedConsumerOptions options_;
  metrics::Counter* applied_;
  metrics::Counter* malformed_;
  metrics::Counter* unknown_site_;
  metrics::Counter* failed_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace folio::ingest
