#include "indexer.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "folio/bus/connect.h"
#include "folio/core/hash.h"
#include "folio/core/log.h"

namespace folio::search {

bus::SearchReply ErrorReply(Code code, std::string message) {
  bus::SearchReply r;
  r.error = std::move(message);
  r.code = code;
  return r;
}

std::string RelatedMsgId(uint64_t first_seq, uint64_t last_seq, std::string_view encoded_update) {
  char hash[17];
  snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(Fnv1a64(encoded_update)));
  return "related-" + std::to_string(first_seq) + "-" + std::to_string(last_seq) + "-" + hash;
}

void Indexer::Run() {
  if (!stop_) {
    bus_ = bus::ConnectRetrying(
        opts_, [this](bus::Bus* b) { return Subscribe(b); }, [this](const Status& s) { set_state(s.message()); },
        [this](int64_t ms) {
          Sleep(ms);
          return !stop_;
        },
        bus::RetryPolicy{500, 5000});
  }
  if (bus_) {
    log::Info("connected to NATS", {{"url", opts_.url}});
    set_state("");
  }
  while (bus_ && !stop_) {
    if (!serving_) JoinIfCaughtUp();
    if (serving_ && !PublishPending()) {
      Sleep(1000);
      continue;
    }
    auto msgs = consumer_->Fetch(batch_, 1000);
    if (msgs.ok()) set_nats_error("");
    if (!msgs.ok()) {
      set_nats_error("NATS consumer: " + msgs.status().message());
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

void Indexer::Stop() {
  stop_ = true;
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

std::string Indexer::NotReadyReason() {
  std::lock_guard lock(mu_);
  if (!state_.empty()) return state_;
  if (!nats_error_.empty()) return nats_error_;
  return serving_ ? std::string() : catching_up_;
}

void Indexer::set_nats_error(std::string s) {
  std::lock_guard lock(mu_);
  if (s != nats_error_ && !s.empty()) log::Warn("search not ready", {{"reason", s}});
  nats_error_ = std::move(s);
}

void Indexer::set_state(std::string s) {
  std::lock_guard lock(mu_);
  if (s != state_ && !s.empty()) log::Warn("search not ready", {{"reason", s}});
  state_ = std::move(s);
}

void Indexer::Sleep(int64_t ms) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stop_.load(); });
}

Status Indexer::Subscribe(bus::Bus* b) {
  bus::ConsumerOptions co;
  co.stream = std::string(bus::kNotesStream);
  co.durable = durable_;
  // An upgrade rebuilt the full-text index empty: read every note again.
  co.restart = engine_->NeedsReplay();
  auto c = bus::PullConsumer::Start(b, co);
  if (!c.ok()) return Status(c.status().code(), "cannot start the notes consumer: " + c.status().message());
  consumer_ = std::move(*c);
  if (co.restart) {
    log::Warn("the full-text index was rebuilt by an upgrade: reading the notes stream again", {{"consumer", durable_}});
    if (Status s = engine_->ReplayStarted(); !s.ok()) return s;
  }
  return Status::Ok();
}

void Indexer::JoinIfCaughtUp() {
  auto backlog = consumer_->GetBacklog();
  if (!backlog.ok()) {
    set_nats_error("NATS consumer: " + backlog.status().message());
    return;
  }
  set_nats_error("");
  m_->pending.Set(static_cast<double>(backlog->pending));
  // Unacked messages count too: a batch that failed to index (nak'ed), or
  // one a crashed run of this replica fetched and may not have applied.
  if (backlog->pending > 0 || backlog->ack_pending > 0) {
    std::lock_guard lock(mu_);
    catching_up_ = "catching up with the notes stream: " + std::to_string(backlog->pending) +
                   " note events to index, " + std::to_string(backlog->ack_pending) + " to apply or retry";
    return;
  }
  std::vector<std::unique_ptr<bus::Responder>> responders;
  for (int i = 0; i < 2; ++i) {
    auto rs = bus::Responder::Start(bus_.get(), bus::kSearchQuerySubject, "folio-search",
                                    [this](std::string_view, std::string_view data) { return OnSearch(data); });
    auto rr = bus::Responder::Start(bus_.get(), bus::kSearchRelatedSubject, "folio-search",
                                    [this](std::string_view, std::string_view data) { return OnRelated(data); });
    if (!rs.ok() || !rr.ok()) {
      const Status& s = rs.ok() ? rr.status() : rs.status();
      set_nats_error("cannot subscribe to search requests: " + s.message());
      return;
    }
    responders.push_back(std::move(*rs));
    responders.push_back(std::move(*rr));
  }
  responders_ = std::move(responders);
  serving_ = true;
  m_->serving.Set(1);
  log::Info("caught up with the notes stream; answering queries", {{"consumer", durable_}});
}

std::string Indexer::OnSearch(std::string_view data) {
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

std::string Indexer::OnRelated(std::string_view data) {
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

void Indexer::Observe(std::chrono::steady_clock::time_point t0, const bus::SearchReply& r, metrics::Counter* c) {
  c->Increment();
  if (!r.error.empty()) m_->query_errors.Increment();
  m_->query_seconds.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

bool Indexer::Publish(const std::vector<bus::RelatedUpdate>& updates, uint64_t first_seq, uint64_t last_seq) {
  if (updates.empty()) return true;
  size_t lists = 0;
  for (const bus::RelatedUpdate& u : updates) {
    lists += u.lists.size();
    std::string data = bus::EncodeRelatedUpdate(u);
    std::string id = last_seq > 0 ? RelatedMsgId(first_seq, last_seq, data) : std::string();
    if (Status s = bus_->PublishAsync(bus::RelatedSubject(u.site), data, id); !s.ok()) {
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
  m_->related_messages.Increment(static_cast<double>(updates.size()));
  return true;
}

bool Indexer::PublishPending() {
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

void Indexer::Process(std::vector<bus::StreamMessage>& msgs) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<bus::NoteEvent> events;
  events.reserve(msgs.size());
  for (const bus::StreamMessage& msg : msgs) {
    if (Status s = bus::DecodeNoteEvents(msg.data, &events); !s.ok()) {
      log::Warn("skipping a malformed note event", {{"seq", std::to_string(msg.stream_seq)}, {"error", s.message()}});
    }
  }
  ApplyStats stats;
  auto updates = engine_->Apply(events, &stats);
  if (!updates.ok()) {
    m_->embed_failures.Increment();
    m_->embedder_up.Set(0);
    set_state("indexing failed (notes wait in the stream): " + updates.status().message());
    int64_t delay = std::min<int64_t>(1000LL << std::min<int>(retries_++, 5), 30'000);
    for (const bus::StreamMessage& msg : msgs) (void)consumer_->Nak(msg, delay);
    UpdatePending();  // the backlog keeps growing while indexing fails: alerts see it (issue 24)
    Sleep(delay);
    return;
  }
  retries_ = 0;
  m_->embedder_up.Set(1);
  set_state("");
  // While catching up the lists stay unpublished: PublishPending sends
  // their latest state once this replica joins.
  if (serving_ && !Publish(*updates, msgs.front().stream_seq, msgs.back().stream_seq)) {
    pending_checked_ = false;  // retried by PublishPending
  }
  for (const bus::StreamMessage& msg : msgs) (void)consumer_->Ack(msg);
  m_->events.Increment(static_cast<double>(stats.events));
  m_->embedded.Increment(static_cast<double>(stats.embedded_texts));
  m_->related_recomputed.Increment(static_cast<double>(stats.related_recomputed));
  m_->related_merged.Increment(static_cast<double>(stats.related_merged));
  m_->notes.Set(static_cast<double>(engine_->notes()));
  m_->vectors.Set(static_cast<double>(engine_->vectors()));
  m_->vocabulary_words.Set(static_cast<double>(engine_->vocabulary_words()));
  m_->vocabulary_bytes.Set(static_cast<double>(engine_->vocabulary_bytes()));
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

void Indexer::UpdatePending() {
  auto p = consumer_->Pending();
  if (p.ok()) m_->pending.Set(static_cast<double>(*p));
}
}  // namespace folio::search
