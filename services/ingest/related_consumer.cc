#include "related_consumer.h"

#include <chrono>
#include <map>
#include <string>

#include "folio/bus/related_schema.h"
#include "folio/core/log.h"

namespace folio::ingest {
namespace {

// kPending and kFailed go (again) to the writer; kApplied and kUnknownSite
// get acked and become kAcked.
enum class Outcome { kPending, kApplied, kUnknownSite, kFailed, kAcked };

// Unacked, a message comes again; applying a list twice changes nothing.
void Ack(bus::PullConsumer* consumer, const bus::StreamMessage& m) {
  if (Status s = consumer->Ack(m); !s.ok()) {
    log::Warn("related ack failed", {{"seq", std::to_string(m.stream_seq)}, {"error", s.message()}});
  }
}

}  // namespace

// One fetched batch on its way through the writer loop. The consumer thread
// fills updates/msgs; the writer fills outcomes and sets done. Shared, so a
// writer task that runs after the consumer gave up (Stop) touches nothing freed.
struct RelatedConsumer::Batch {
  std::vector<bus::RelatedUpdate> updates;  // one per site: its messages' lists, in stream order
  std::vector<std::vector<size_t>> msgs;    // per update: indexes of the messages it merges
  std::vector<Outcome> outcomes;            // per update; written by the writer before done
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // GUARDED_BY(mu)
};

RelatedConsumer::RelatedConsumer(http::Loop* writer_loop, Sites* sites, metrics::Registry* registry,
                                 RelatedConsumerOptions options)
    : writer_loop_(writer_loop), sites_(sites), options_(options) {
  const char* name = "folio_ingest_related_updates_total";
  const char* help = "Related-list messages consumed from the stream, by result";
  applied_ = &registry->NewCounter(name, help, {{"result", "applied"}});
  malformed_ = &registry->NewCounter(name, help, {{"result", "malformed"}});
  unknown_site_ = &registry->NewCounter(name, help, {{"result", "unknown_site"}});
  failed_ = &registry->NewCounter(name, help, {{"result", "failed"}});
}

RelatedConsumer::~RelatedConsumer() { Stop(); }

void RelatedConsumer::Start(bus::Bus* bus) {
  std::lock_guard<std::mutex> l(mu_);
  if (stop_ || thread_.joinable()) return;
  thread_ = std::thread([this, bus] { Run(bus); });
}

void RelatedConsumer::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool RelatedConsumer::stopping() const {
  std::lock_guard<std::mutex> l(mu_);
  return stop_;
}

void RelatedConsumer::Backoff(int64_t* backoff_ms) {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, std::chrono::milliseconds(*backoff_ms), [this] { return stop_; });
  *backoff_ms = std::min(*backoff_ms * 2, options_.backoff_max_ms);
}

void RelatedConsumer::Run(bus::Bus* bus) {
  std::unique_ptr<bus::PullConsumer> consumer;
  int64_t backoff_ms = options_.backoff_min_ms;
  bool failing = false;  // log the first failure of a streak and the recovery, not every retry
  auto fail = [&](std::string_view what, const Status& s) {
    if (!failing) log::Warn(what, {{"stream", bus::kRelatedStream}, {"error", s.message()}});
    failing = true;
    Backoff(&backoff_ms);
  };
  while (!stopping()) {
    if (!consumer) {
      bus::ConsumerOptions co;
      co.stream = std::string(bus::kRelatedStream);
      co.durable = std::string(kRelatedDurable);
      auto c = bus::PullConsumer::Start(bus, co);
      if (!c.ok()) {
        // A NATS that lost its data has no stream until someone creates it.
        if (c.status().code() == Code::kNotFound) (void)bus->EnsureSchema();
        fail("related consumer not started; retrying", c.status());
        continue;
      }
      consumer = std::move(*c);
    }
    auto msgs = consumer->Fetch(options_.batch, options_.fetch_timeout_ms);
    if (!msgs.ok()) {
      // Disconnected: NATS.c reconnects by itself. Anything else (the
      // consumer or stream is gone): bind again.
      if (msgs.status().code() != Code::kUnavailable) consumer.reset();
      fail("fetching related lists failed; retrying", msgs.status());
      continue;
    }
    if (failing) log::Info("consuming related lists", {{"stream", bus::kRelatedStream}, {"durable", kRelatedDurable}});
    failing = false;
    backoff_ms = options_.backoff_min_ms;
    if (!msgs->empty()) Process(consumer.get(), std::move(*msgs));
  }
}

void RelatedConsumer::Process(bus::PullConsumer* consumer, std::vector<bus::StreamMessage> msgs) {
  std::shared_ptr<Batch> batch = Group(consumer, msgs);
  if (!batch) return;
  // A failed commit is retried here, in order, rather than nak'ed: a later
  // list of the same note must not be overtaken by a redelivered older one.
  int64_t backoff_ms = options_.backoff_min_ms;
  for (;;) {
    if (!RunOnWriter(batch)) return;  // unacked: redelivered after a restart
    if (!Settle(consumer, msgs, batch.get())) return;
    Backoff(&backoff_ms);
    if (stopping()) return;
  }
}

std::shared_ptr<RelatedConsumer::Batch> RelatedConsumer::Group(bus::PullConsumer* consumer,
                                                               const std::vector<bus::StreamMessage>& msgs) {
  auto batch = std::make_shared<Batch>();
  std::map<std::string, size_t, std::less<>> by_site;
  for (size_t i = 0; i < msgs.size(); ++i) {
    bus::RelatedUpdate u;
    Status s = bus::DecodeRelatedUpdate(msgs[i].data, &u);
    if (s.ok() && msgs[i].subject != bus::RelatedSubject(u.site)) {
      s = Status::Invalid("site \"" + u.site + "\" does not match the subject");
    }
    if (!s.ok()) {
      log::Warn("malformed related update dropped", {{"subject", msgs[i].subject},
                                                     {"seq", std::to_string(msgs[i].stream_seq)},
                                                     {"error", s.message()}});
      malformed_->Increment();
      Ack(consumer, msgs[i]);
      continue;
    }
    // Updates of one site merge into one commit (later lists win).
    auto [it, added] = by_site.emplace(u.site, batch->updates.size());
    if (added) {
      batch->updates.push_back({u.site, {}});
      batch->msgs.emplace_back();
    }
    auto& lists = batch->updates[it->second].lists;
    for (auto& l : u.lists) lists.push_back(std::move(l));
    batch->msgs[it->second].push_back(i);
  }
  if (batch->updates.empty()) return nullptr;
  batch->outcomes.assign(batch->updates.size(), Outcome::kPending);
  return batch;
}

bool RelatedConsumer::RunOnWriter(const std::shared_ptr<Batch>& batch) {
  {
    std::lock_guard<std::mutex> l(batch->mu);
    batch->done = false;
  }
  writer_loop_->Post([batch, sites = sites_] { ApplyOnWriter(batch.get(), sites); });
  std::unique_lock<std::mutex> l(batch->mu);
  while (!batch->done) {
    if (stopping()) return false;
    batch->cv.wait_for(l, std::chrono::milliseconds(100));
  }
  return true;
}

void RelatedConsumer::ApplyOnWriter(Batch* batch, Sites* sites) {
  for (size_t i = 0; i < batch->updates.size(); ++i) {
    if (batch->outcomes[i] != Outcome::kPending && batch->outcomes[i] != Outcome::kFailed) continue;
    const bus::RelatedUpdate& u = batch->updates[i];
    SiteWriter* writer = sites->writer(u.site);
    if (!writer) {
      log::Warn("related lists for a site not served here dropped", {{"site", u.site}});
      batch->outcomes[i] = Outcome::kUnknownSite;
      continue;
    }
    auto rerendered = writer->ApplyRelated(u);
    if (!rerendered.ok()) {
      log::Error("related lists not applied; retrying", {{"site", u.site}, {"error", rerendered.status().message()}});
      batch->outcomes[i] = Outcome::kFailed;
      continue;
    }
    batch->outcomes[i] = Outcome::kApplied;
    log::Info("related lists applied", {{"site", u.site}, {"lists", std::to_string(u.lists.size())},
                                        {"rerendered", std::to_string(*rerendered)}});
  }
  std::lock_guard<std::mutex> l(batch->mu);
  batch->done = true;
  batch->cv.notify_all();
}

bool RelatedConsumer::Settle(bus::PullConsumer* consumer, const std::vector<bus::StreamMessage>& msgs, Batch* batch) {
  bool retry = false;
  for (size_t i = 0; i < batch->updates.size(); ++i) {
    Outcome o = batch->outcomes[i];
    double n = static_cast<double>(batch->msgs[i].size());
    if (o == Outcome::kFailed) {
      failed_->Increment(n);
      retry = true;
    } else if (o == Outcome::kApplied || o == Outcome::kUnknownSite) {
      for (size_t m : batch->msgs[i]) Ack(consumer, msgs[m]);
      (o == Outcome::kApplied ? applied_ : unknown_site_)->Increment(n);
      batch->outcomes[i] = Outcome::kAcked;
    }
  }
  return retry;
}

}  // namespace folio::ingest
