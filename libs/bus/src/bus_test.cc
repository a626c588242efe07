#include "folio/bus/bus.h"

#include <doctest/doctest.h>

#include <chrono>

#include "folio/bus/note_schema.h"
#include "folio/bus/page_pack.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/related_schema.h"
#include "folio/testing/testing.h"

namespace folio::bus {
namespace {

std::unique_ptr<Bus> ConnectTo(const testing::NatsServer& server) {
  BusOptions o;
  o.url = server.url();
  o.name = "bus_test";
  o.reconnect_wait_ms = 50;
  Result<std::unique_ptr<Bus>> bus = Bus::Connect(o);
  REQUIRE_MESSAGE(bus.ok(), bus.status().ToString());
  return std::move(bus).value();
}

}  // namespace

TEST_CASE("Connect to a dead port fails quickly with kUnavailable") {
  BusOptions o;
  o.url = "nats://127.0.0.1:" + std::to_string(testing::FreePort());
  auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Bus>> bus = Bus::Connect(o);
  auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE(!bus.ok());
  CHECK(bus.status().code() == Code::kUnavailable);
  CHECK(elapsed < std::chrono::milliseconds(o.connect_timeout_ms));
}

TEST_CASE("KvPut returns the stream sequence; PurgeStream drops a subject filter's messages before it") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  REQUIRE(bus->EnsureSchema().ok());
  REQUIRE(bus->KvPutAsync(kPagesBucket, PackKey("docs", 1), "p1").ok());
  REQUIRE(bus->KvPutAsync(kPagesBucket, PackKey("other", 2), "o2").ok());
  REQUIRE(bus->KvPutAsync(kPagesBucket, PageKey("docs", "/old"), "old").ok());
  REQUIRE(bus->WaitForAcks(5000).ok());
  auto rev = bus->KvPut(kPagesBucket, SnapshotKey("docs", 3, 0), "s");
  REQUIRE_MESSAGE(rev.ok(), rev.status().ToString());
  CHECK(*rev == 4);
  REQUIRE(bus->KvPutAsync(kPagesBucket, PackKey("docs", 5), "p5").ok());
  REQUIRE(bus->WaitForAcks(5000).ok());
  REQUIRE(bus->PurgeStream("KV_pages", PackSubjects("docs"), *rev).ok());
  CHECK(bus->KvGet(kPagesBucket, PackKey("docs", 1)).status().code() == Code::kNotFound);
  CHECK(bus->KvGet(kPagesBucket, PackKey("docs", 5)).value() == "p5");    // after the sequence
  CHECK(bus->KvGet(kPagesBucket, PackKey("other", 2)).value() == "o2");   // another site
  CHECK(bus->KvGet(kPagesBucket, PageKey("docs", "/old")).value() == "old");
  // The per-page keys: one token after the site, never a pack or a snapshot.
  REQUIRE(bus->PurgeStream("KV_pages", OldPageSubjects("docs"), 0).ok());
  CHECK(bus->KvGet(kPagesBucket, PageKey("docs", "/old")).status().code() == Code::kNotFound);
  CHECK(bus->KvGet(kPagesBucket, SnapshotKey("docs", 3, 0)).value() == "s");
  CHECK(bus->StreamMessageCount("KV_pages").value() == 3);
  CHECK(bus->PurgeStream("KV_nope", PackSubjects("docs"), 0).code() == Code::kNotFound);
  // Fenced like a publish.
  bus->SetWriteFence([] { return false; });
  CHECK(bus->KvPut(kPagesBucket, "docs.x", "v").status().code() == Code::kUnavailable);
  CHECK(bus->PurgeStream("KV_pages", PackSubjects("docs"), 0).code() == Code::kUnavailable);
}

TEST_CASE("KV put, get and delete against a real nats-server") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  CHECK(bus->connected());
  REQUIRE(bus->EnsureSchema().ok());
  REQUIRE(bus->EnsureSchema().ok());  // idempotent

  std::string key = PageKey("docs", "/caf\xc3\xa9/note");
  PageRecord r;
  r.content_type = "text/html";
  r.body_gzip = std::string("\0\1\2", 3);
  REQUIRE(bus->KvPutAsync(kPagesBucket, key, EncodePageRecord(r)).ok());
  REQUIRE(bus->KvPutAsync(kPagesBucket, PageKey("docs", "/other"), "v").ok());
  REQUIRE(bus->WaitForAcks(5000).ok());

  Result<std::string> got = bus->KvGet(kPagesBucket, key);
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  PageRecord back;
  REQUIRE(DecodePageRecord(*got, &back).ok());
  CHECK(back.body_gzip == r.body_gzip);

  REQUIRE(bus->KvDeleteAsync(kPagesBucket, key).ok());
  REQUIRE(bus->WaitForAcks(5000).ok());
  CHECK(bus->KvGet(kPagesBucket, key).status().code() == Code::kNotFound);
  CHECK(bus->KvGet(kPagesBucket, PageKey("docs", "/never")).status().code() == Code::kNotFound);
  CHECK(bus->KvGet(kPagesBucket, PageKey("docs", "/other")).ok());

  CHECK(bus->KvPutAsync(kPagesBucket, "bad key", "v").code() == Code::kInvalidArgument);
  CHECK(bus->KvPutAsync(kPagesBucket, "a..b", "v").code() == Code::kInvalidArgument);
  CHECK(bus->KvGet("no-such-bucket", "k").status().code() == Code::kNotFound);
}

TEST_CASE("the notes stream deduplicates by message id") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  REQUIRE(bus->EnsureSchema().ok());
  NoteEvent e;
  e.site = "docs";
  e.path = "A.md";
  e.version = 7;
  std::string data = EncodeNoteEvent(e);
  REQUIRE(bus->PublishAsync(NotesSubject("docs"), data, "docs/A.md@7").ok());
  REQUIRE(bus->PublishAsync(NotesSubject("docs"), data, "docs/A.md@7").ok());
  REQUIRE(bus->PublishAsync(NotesSubject("docs"), data, "docs/A.md@8").ok());
  REQUIRE(bus->WaitForAcks(5000).ok());
  Result<uint64_t> n = bus->StreamMessageCount(kNotesStream);
  REQUIRE(n.ok());
  CHECK(*n == 2);
  CHECK(bus->StreamMessageCount("nope").status().code() == Code::kNotFound);
}

TEST_CASE("publishes past the server's max payload are kTooLarge") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  REQUIRE(bus->EnsureSchema().ok());
  std::string big(1024 * 1024 + 1, 'x');
  Status st = bus->KvPutAsync(kPagesBucket, PageKey("docs", "/big"), big);
  CHECK(st.code() == Code::kTooLarge);
  CHECK(st.message().find("max payload") != std::string::npos);
  CHECK(bus->PublishAsync(NotesSubject("docs"), big).code() == Code::kTooLarge);
  // Under the limit, but the header pushes it over.
  std::string edge(1024 * 1024 - 4, 'x');
  CHECK(bus->KvDeleteAsync(kPagesBucket, PageKey("docs", "/big")).ok());
  CHECK(bus->PublishAsync(NotesSubject("docs"), edge, "some-message-id").code() == Code::kTooLarge);
  CHECK(bus->WaitForAcks(5000).ok());
}

TEST_CASE("WaitForAcks reports failed publishes once") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  REQUIRE(bus->EnsureSchema().ok());
  // No stream listens on "orphan.x": JetStream answers "no responders".
  REQUIRE(bus->PublishAsync("orphan.x", "data").ok());
  REQUIRE(bus->PublishAsync(NotesSubject("docs"), "{}").ok());
  Status st = bus->WaitForAcks(5000);
  CHECK(st.code() == Code::kUnavailable);
  CHECK_MESSAGE(st.message().find("1 publishes failed") != std::string::npos, st.message());
  CHECK(bus->WaitForAcks(5000).ok());  // the failure was reported; counter reset
}

}  // namespace folio::bus

namespace folio::bus {

// Issue 24: the notes and related streams carry size and age limits, also
// when they were created before there were any; an operator's own limit is
// kept; ListStreamUsage and GetAccountUsage report what JetStream stores.
TEST_CASE("EnsureSchema gives notes and related their limits, keeps an operator's, and usage is reported") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  // As an older folio (or an operator) left them: notes without limits,
  // related with a size limit of its own. Created through the JetStream API.
  Result<std::string> r = bus->Request("$JS.API.STREAM.CREATE.notes",
                                       R"({"name":"notes","subjects":["notes.>"],"storage":"file"})", 5000);
  REQUIRE(r.ok());
  REQUIRE_MESSAGE(r->find("\"error\"") == std::string::npos, *r);
  r = bus->Request("$JS.API.STREAM.CREATE.related",
                   R"({"name":"related","subjects":["related.>"],"storage":"file","max_bytes":1000000})", 5000);
  REQUIRE(r.ok());
  REQUIRE_MESSAGE(r->find("\"error\"") == std::string::npos, *r);

  REQUIRE(bus->EnsureSchema().ok());
  Result<Bus::StreamState> notes = bus->GetStreamState(kNotesStream);
  REQUIRE(notes.ok());
  CHECK(notes->max_bytes == kNotesMaxBytes);
  CHECK(notes->discard_new);  // a full notes stream refuses; it never drops what a new search replica needs
  CHECK(notes->max_age_seconds == 0);
  Result<Bus::StreamState> related = bus->GetStreamState(kRelatedStream);
  REQUIRE(related.ok());
  CHECK(related->max_bytes == 1000000);  // the operator's
  CHECK(related->max_age_seconds == kRelatedMaxAgeSeconds);
  CHECK(!related->discard_new);

  REQUIRE(bus->PublishAsync(NotesSubject("docs"), std::string(1000, 'x')).ok());
  REQUIRE(bus->WaitForAcks(5000).ok());
  Result<std::vector<Bus::StreamUsage>> streams = bus->ListStreamUsage();
  REQUIRE_MESSAGE(streams.ok(), streams.status().ToString());
  bool saw_notes = false, saw_pages = false;
  for (const Bus::StreamUsage& u : *streams) {
    if (u.name == "notes") {
      saw_notes = true;
      CHECK(u.messages == 1);
      CHECK(u.bytes > 1000);
      CHECK(u.max_bytes == kNotesMaxBytes);
    }
    if (u.name == "KV_" + std::string(kPagesBucket)) saw_pages = true;
  }
  CHECK(saw_notes);
  CHECK(saw_pages);
  Result<Bus::AccountUsage> account = bus->GetAccountUsage();
  REQUIRE_MESSAGE(account.ok(), account.status().ToString());
  CHECK(account->storage_bytes > 1000);
  CHECK(account->streams >= 3);
}

}  // namespace folio::bus

namespace folio::bus {

// Issue 24: JetStream enforces a lowered size limit by deleting the oldest
// messages whatever the discard policy; a stream that already holds more
// than half of folio's limit is given none, so that an update cannot delete
// what it holds.
TEST_CASE("EnsureSchema leaves a stream past half of folio's size limit without one (and its messages)") {
  testing::NatsServer server;
  auto bus = ConnectTo(server);
  Result<std::string> r = bus->Request("$JS.API.STREAM.CREATE.related",
                                       R"({"name":"related","subjects":["related.>"],"storage":"file"})", 5000);
  REQUIRE(r.ok());
  REQUIRE_MESSAGE(r->find("\"error\"") == std::string::npos, *r);
  const std::string chunk(1'000'000, 'r');
  const int n = static_cast<int>(kRelatedMaxBytes / 2 / 1'000'000) + 2;  // just past half
  for (int i = 0; i < n; ++i) {
    REQUIRE(bus->PublishAsync(RelatedSubject("docs"), chunk).ok());
    if (i % 16 == 15) REQUIRE(bus->WaitForAcks(10000).ok());
  }
  REQUIRE(bus->WaitForAcks(10000).ok());
  REQUIRE(bus->EnsureSchema().ok());
  Result<Bus::StreamState> related = bus->GetStreamState(kRelatedStream);
  REQUIRE(related.ok());
  CHECK(related->messages == static_cast<uint64_t>(n));
  CHECK(related->max_bytes == -1);
  CHECK(related->max_age_seconds == kRelatedMaxAgeSeconds);  // the age limit is still given
}

}  // namespace folio::bus
