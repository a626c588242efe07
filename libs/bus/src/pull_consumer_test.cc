#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <thread>

#include "folio/bus/bus.h"
#include "folio/bus/note_schema.h"
#include "folio/bus/related_schema.h"
#include "folio/testing/testing.h"

namespace folio::bus {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::unique_ptr<Bus> ConnectTo(const testing::NatsServer& server) {
  BusOptions o;
  o.url = server.url();
  o.name = "pull_consumer_test";
  o.reconnect_wait_ms = 50;
  Result<std::unique_ptr<Bus>> bus = Bus::Connect(o);
  REQUIRE_MESSAGE(bus.ok(), bus.status().ToString());
  REQUIRE(bus.value()->EnsureSchema().ok());
  return std::move(bus).value();
}

template <typename Pred>
bool Eventually(Pred pred, int timeout_ms = 5000) {
  auto deadline = Clock::now() + milliseconds(timeout_ms);
  while (!pred() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(10));
  return pred();
}

// Publishes note events with versions [from, to) on notes.<site>; retries
// while JetStream comes back after a restart (msg ids drop duplicates).
void PublishNotes(Bus* bus, int from, int to, const std::string& site = "docs") {
  Status st;
  for (int attempt = 0; attempt < 50; ++attempt) {
    for (int v = from; v < to; ++v) {
      NoteEvent e;
      e.site = site;
      e.path = "Note " + std::to_string(v) + ".md";
      e.version = v;
      std::string id = site + "/" + e.path + "@" + std::to_string(v);
      REQUIRE(bus->PublishAsync(NotesSubject(site), EncodeNoteEvent(e), id).ok());
    }
    st = bus->WaitForAcks(5000);
    if (st.ok()) return;
    std::this_thread::sleep_for(milliseconds(100));
  }
  FAIL("publishing failed: " << st.ToString());
}

std::unique_ptr<PullConsumer> Consume(Bus* bus, const std::string& durable, int64_t ack_wait_ms,
                                      const std::string& filter = "") {
  ConsumerOptions o;
  o.stream = std::string(kNotesStream);
  o.durable = durable;
  o.filter_subject = filter;
  o.ack_wait_ms = ack_wait_ms;
  Result<std::unique_ptr<PullConsumer>> c = PullConsumer::Start(bus, o);
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  return std::move(c).value();
}

// Fetches until `n` messages arrived or timeout_ms passed. Errors (while
// the server restarts) are retried.
std::vector<StreamMessage> FetchN(PullConsumer* c, size_t n, int timeout_ms = 10000, int batch = 10) {
  std::vector<StreamMessage> got;
  auto deadline = Clock::now() + milliseconds(timeout_ms);
  while (got.size() < n && Clock::now() < deadline) {
    Result<std::vector<StreamMessage>> r = c->Fetch(batch, 500);
    if (!r.ok()) {
      std::this_thread::sleep_for(milliseconds(50));
      continue;
    }
    CHECK(r->size() <= static_cast<size_t>(batch));
    for (StreamMessage& m : *r) got.push_back(std::move(m));
  }
  return got;
}

// Fetches for `ms` and returns everything that arrived (expected: nothing).
std::vector<StreamMessage> FetchFor(PullConsumer* c, int ms) {
  std::vector<StreamMessage> got;
  auto deadline = Clock::now() + milliseconds(ms);
  while (Clock::now() < deadline) {
    Result<std::vector<StreamMessage>> r = c->Fetch(10, 250);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    for (StreamMessage& m : *r) got.push_back(std::move(m));
  }
  return got;
}

uint64_t PendingOf(PullConsumer* c) {
  Result<uint64_t> n = c->Pending();
  REQUIRE_MESSAGE(n.ok(), n.status().ToString());
  return *n;
}

std::set<uint64_t> Seqs(const std::vector<StreamMessage>& ms) {
  std::set<uint64_t> s;
  for (const StreamMessage& m : ms) s.insert(m.stream_seq);
  return s;
}

std::set<uint64_t> Range(uint64_t from, uint64_t to) {  // [from, to]
  std::set<uint64_t> s;
  for (uint64_t i = from; i <= to; ++i) s.insert(i);
  return s;
}

}  // namespace

TEST_CASE("pull consumer: batches in order, acks stick across consumer restarts, Pending counts") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  PublishNotes(bus.get(), 1, 51);
  // A short ack wait: an ack that did not stick would be redelivered within
  // the quiet period checked below.
  auto c = Consume(bus.get(), "search", 500);
  CHECK(Eventually([&] { return PendingOf(c.get()) == 50; }));

  std::vector<StreamMessage> all;
  for (int batch = 0; batch < 5; ++batch) {
    Result<std::vector<StreamMessage>> r = c->Fetch(10, 2000);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    REQUIRE(r->size() == 10);  // 50 stored: every batch is full
    for (StreamMessage& m : *r) {
      CHECK(c->Ack(m).ok());
      all.push_back(std::move(m));
    }
    if (batch == 1) CHECK(Eventually([&] { return PendingOf(c.get()) == 30; }));
  }
  for (size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].stream_seq == i + 1);
    CHECK(all[i].delivered == 1);
    CHECK(all[i].subject == "notes.docs");
    NoteEvent e;
    REQUIRE(DecodeNoteEvent(all[i].data, &e).ok());
    CHECK(e.version == static_cast<int64_t>(i + 1));
  }
  CHECK(PendingOf(c.get()) == 0);

  c.reset();
  c = Consume(bus.get(), "search", 500);  // same durable: resumes after the acked ones
  CHECK(FetchFor(c.get(), 1500).empty());
  CHECK(PendingOf(c.get()) == 0);
  PublishNotes(bus.get(), 51, 52);
  std::vector<StreamMessage> next = FetchN(c.get(), 1);
  REQUIRE(next.size() == 1);
  CHECK(next[0].stream_seq == 51);
  CHECK(c->Ack(next[0]).ok());

  // A message of the destroyed consumer object cannot be acked through another.
  CHECK(c->Ack(all[0]).code() == Code::kInvalidArgument);
  CHECK(c->Ack(StreamMessage{}).code() == Code::kInvalidArgument);
  CHECK(c->Fetch(0, 100).status().code() == Code::kInvalidArgument);
}

TEST_CASE("pull consumer: restart delivers the whole stream again to a consumer that acked it all") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  PublishNotes(bus.get(), 1, 21);
  auto c = Consume(bus.get(), "search", 60000);
  std::vector<StreamMessage> first = FetchN(c.get(), 20);
  REQUIRE(first.size() == 20);
  for (const StreamMessage& m : first) CHECK(c->Ack(m).ok());
  CHECK(Eventually([&] { return PendingOf(c.get()) == 0; }));
  c.reset();
  ConsumerOptions o;
  o.stream = std::string(kNotesStream);
  o.durable = "search";
  o.restart = true;
  auto again = PullConsumer::Start(bus.get(), o);
  REQUIRE_MESSAGE(again.ok(), again.status().ToString());
  std::vector<StreamMessage> replay = FetchN(again->get(), 20);
  CHECK(Seqs(replay) == Range(1, 20));
  for (const StreamMessage& m : replay) CHECK(m.delivered == 1);  // a new consumer, not a redelivery
  // A restart of a consumer that does not exist yet just creates it.
  o.durable = "fresh";
  auto fresh = PullConsumer::Start(bus.get(), o);
  REQUIRE_MESSAGE(fresh.ok(), fresh.status().ToString());
  CHECK(FetchN(fresh->get(), 20).size() == 20);
}

TEST_CASE("pull consumer: un-acked messages come back after ack_wait, nak'd ones sooner") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  PublishNotes(bus.get(), 1, 6);
  auto c = Consume(bus.get(), "redeliver", 500);
  std::vector<StreamMessage> first = FetchN(c.get(), 5);
  REQUIRE(Seqs(first) == Range(1, 5));
  auto fetched_at = Clock::now();
  CHECK(c->Ack(first[0]).ok());
  CHECK(c->Ack(first[2]).ok());
  CHECK(c->Nak(first[4]).ok());  // seq 5: redelivered now
  // seq 2 and 4: neither acked nor nak'd

  std::vector<StreamMessage> naked = FetchN(c.get(), 1, 5000);
  REQUIRE(naked.size() == 1);
  CHECK(naked[0].stream_seq == 5);
  CHECK(naked[0].delivered == 2);
  CHECK(Clock::now() - fetched_at < milliseconds(400));  // not waiting for ack_wait
  // Nak with a delay: not before it, then again.
  CHECK(c->Nak(naked[0], 1500).ok());

  std::vector<StreamMessage> again = FetchN(c.get(), 2, 5000);
  REQUIRE(Seqs(again) == std::set<uint64_t>{2, 4});
  CHECK(Clock::now() - fetched_at >= milliseconds(400));
  for (const StreamMessage& m : again) {
    CHECK(m.delivered == 2);
    CHECK(c->Ack(m).ok());
  }
  CHECK(FetchFor(c.get(), 600).empty());
  std::vector<StreamMessage> third = FetchN(c.get(), 1, 5000);
  REQUIRE(third.size() == 1);
  CHECK(third[0].stream_seq == 5);
  CHECK(third[0].delivered == 3);
  CHECK(Clock::now() - fetched_at >= milliseconds(1400));
  CHECK(c->Ack(third[0]).ok());
  CHECK(c->Nak(third[0], -1).code() == Code::kInvalidArgument);

  // Everything acked: nothing comes back, even after several ack waits.
  CHECK(FetchFor(c.get(), 1500).empty());
}

TEST_CASE("pull consumer survives nats-server restarts") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  PublishNotes(bus.get(), 1, 11);  // published before the restart

  server.Restart();
  REQUIRE(Eventually([&] { return bus->connected(); }, 10000));
  auto c = Consume(bus.get(), "restart", 1000);  // created after it
  std::vector<StreamMessage> before = FetchN(c.get(), 10);
  REQUIRE(Seqs(before) == Range(1, 10));
  for (const StreamMessage& m : before) CHECK(c->Ack(m).ok());
  CHECK(Eventually([&] { return PendingOf(c.get()) == 0; }));

  server.Stop();
  REQUIRE(Eventually([&] { return !bus->connected(); }));
  CHECK(c->Fetch(10, 200).status().code() == Code::kUnavailable);
  server.Start();
  REQUIRE(Eventually([&] { return bus->connected(); }, 10000));

  PublishNotes(bus.get(), 11, 16);  // while the consumer object lives on
  std::vector<StreamMessage> after = FetchN(c.get(), 5);
  REQUIRE(Seqs(after) == Range(11, 15));
  for (const StreamMessage& m : after) {
    CHECK(m.delivered == 1);
    CHECK(c->Ack(m).ok());
  }
  // The acks from before the restart held: nothing is redelivered after
  // ack_wait (1 s).
  CHECK(FetchFor(c.get(), 2000).empty());
  CHECK(PendingOf(c.get()) == 0);
}

TEST_CASE("pull consumer: filter subjects, conflicts, missing streams, bad options") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  PublishNotes(bus.get(), 1, 4, "a");
  PublishNotes(bus.get(), 4, 7, "b");
  auto only_b = Consume(bus.get(), "only-b", 60'000, NotesSubject("b"));
  CHECK(Eventually([&] { return PendingOf(only_b.get()) == 3; }));
  std::vector<StreamMessage> got = FetchN(only_b.get(), 3);
  REQUIRE(Seqs(got) == Range(4, 6));
  for (const StreamMessage& m : got) CHECK(m.subject == "notes.b");
  CHECK(FetchFor(only_b.get(), 300).empty());

  ConsumerOptions o;
  o.stream = std::string(kNotesStream);
  o.durable = "only-b";
  o.filter_subject = NotesSubject("a");
  CHECK(PullConsumer::Start(bus.get(), o).status().code() == Code::kConflict);

  // A changed ack wait is applied to the existing consumer: the three
  // un-acked messages come back long before the original 60 s.
  o.filter_subject = NotesSubject("b");
  // (1 s, not less: on a loaded machine a shorter wait can expire again
  // between the server's redelivery and the fetch that takes it.)
  o.ack_wait_ms = 1000;
  Result<std::unique_ptr<PullConsumer>> shorter = PullConsumer::Start(bus.get(), o);
  REQUIRE_MESSAGE(shorter.ok(), shorter.status().ToString());
  std::vector<StreamMessage> redelivered = FetchN(shorter->get(), 3, 10000);
  CHECK(Seqs(redelivered) == Range(4, 6));
  for (const StreamMessage& m : redelivered) CHECK(m.delivered >= 2);

  o.stream = "no-such-stream";
  CHECK(PullConsumer::Start(bus.get(), o).status().code() == Code::kNotFound);
  o.stream = std::string(kRelatedStream);  // created by EnsureSchema
  o.filter_subject = "";
  Result<std::unique_ptr<PullConsumer>> related = PullConsumer::Start(bus.get(), o);
  CHECK_MESSAGE(related.ok(), related.status().ToString());

  auto options = [](std::string stream, std::string durable, std::string filter, int64_t ack_wait_ms,
                    int max_ack_pending) {
    ConsumerOptions c;
    c.stream = std::move(stream);
    c.durable = std::move(durable);
    c.filter_subject = std::move(filter);
    c.ack_wait_ms = ack_wait_ms;
    c.max_ack_pending = max_ack_pending;
    return c;
  };
  for (const ConsumerOptions& bad : {options("", "x", "", 1000, 10), options("notes", "", "", 1000, 10),
                                     options("notes", "a.b", "", 1000, 10), options("notes", "x", "a..b", 1000, 10),
                                     options("notes", "x", "", 0, 10), options("notes", "x", "", 1000, 0)}) {
    CHECK(PullConsumer::Start(bus.get(), bad).status().code() == Code::kInvalidArgument);
  }
}


TEST_CASE("pull consumer: GetBacklog counts undelivered and delivered-but-unacked messages (issue 23)") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  PublishNotes(bus.get(), 1, 6);
  auto c = Consume(bus.get(), "backlog", 60'000);
  auto backlog = [&] {
    Result<PullConsumer::Backlog> b = c->GetBacklog();
    REQUIRE_MESSAGE(b.ok(), b.status().ToString());
    return std::to_string(b->pending) + "/" + std::to_string(b->ack_pending);
  };
  CHECK(Eventually([&] { return backlog() == "5/0"; }));
  std::vector<StreamMessage> got = FetchN(c.get(), 5);
  REQUIRE(got.size() == 5);
  CHECK(Eventually([&] { return backlog() == "0/5"; }));  // delivered: no longer "pending"
  for (size_t i = 0; i < 3; ++i) CHECK(c->Ack(got[i]).ok());
  CHECK(c->Nak(got[3], 30'000).ok());                      // nak'ed for later: still unacked
  CHECK(Eventually([&] { return backlog() == "0/2"; }));
  CHECK(c->Ack(got[4]).ok());
  CHECK(Eventually([&] { return backlog() == "0/1"; }));
}

}  // namespace folio::bus
