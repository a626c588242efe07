// The bus with identities (issue 24): a real nats-server -js whose config
// includes the shipped deploy/nats/permissions.conf, one user per service.
// An edge's credentials cannot write a page, publish a note, answer
// search.query, read another service's replies (each user's inbox is
// _INBOX.<user>.*), or purge or delete a stream; ingest's can write pages
// and notes. Then the real services, each with its own user (ingest, edge,
// search, storage --replicated), run a push end to end: the page and its
// attachment from the edge, a search answered through the edge; and the
// server logged no permissions violation while they did, also while the
// edge, started first, waited for the schema ingest makes.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cluster.h"
#include "folio/bus/blob_store.h"
#include "folio/bus/bus.h"
#include "folio/bus/note_schema.h"
#include "folio/bus/page_schema.h"
#include "folio/bus/search_schema.h"
#include "folio/testing/testing.h"

namespace folio::it {
namespace {

bool Has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

// Passwords as the shipped generators make them: "p" + hex (deploy/NATS.md).
const std::vector<std::pair<std::string, std::string>> kUsers = {
    {"ingest", "p0c1ab7e3a9f4d2"}, {"edge", "p5e6f0d1c2b3a49"}, {"search", "p9a8b7c6d5e4f30"},
    {"storage", "p1f2e3d4c5b6a70"}};

std::string PasswordOf(const std::string& user) {
  for (const auto& [u, p] : kUsers) {
    if (u == user) return p;
  }
  FAIL("no user " << user);
  return "";
}

// nats-server -js with main.conf = listen, monitoring, store and
// `include ./permissions.conf` (the shipped file, copied beside it); the
// passwords in its environment; its log in <dir>/nats.log.
class AuthNats {
 public:
  AuthNats() : port_(testing::FreePort()), monitor_port_(testing::FreePort()) {
    std::filesystem::copy_file(testing::SourcePath("deploy/nats/permissions.conf"), dir_.path() + "/permissions.conf");
    std::ofstream(dir_.path() + "/main.conf") << "listen: 127.0.0.1:" << port_ << "\n"
                                              << "http: 127.0.0.1:" << monitor_port_ << "\n"
                                              << "max_payload: 1MB\n"
                                              << "jetstream { store_dir: \"" << dir_.path() << "/js\" }\n"
                                              << "include ./permissions.conf\n";
    std::vector<std::string> env;
    for (const auto& [user, password] : kUsers) {
      std::string name = "FOLIO_NATS_" + user + "_PASSWORD";
      for (char& c : name) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
      env.push_back(name + "=" + password);
    }
    proc_ = std::make_unique<testing::Process>(
        std::vector<std::string>{"nats-server", "-c", dir_.path() + "/main.conf"}, env, log_path());
    REQUIRE_MESSAGE(testing::WaitForHttp("http://127.0.0.1:" + std::to_string(monitor_port_) + "/healthz", 200, 10000),
                    "nats-server did not start:\n" << Log());
  }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  std::string log_path() const { return dir_.path() + "/nats.log"; }
  std::string Log() const {
    std::ifstream in(log_path());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // A file holding `user`'s password (for --nats-password-file).
  std::string PasswordFile(const std::string& user) const {
    std::string path = dir_.path() + "/" + user + ".password";
    std::ofstream(path) << PasswordOf(user) << "\n";
    return path;
  }

 private:
  testing::TempDir dir_;
  int port_, monitor_port_;
  std::unique_ptr<testing::Process> proc_;
};

std::unique_ptr<bus::Bus> ConnectAs(const AuthNats& nats, const std::string& user, const std::string& password) {
  bus::BusOptions o;
  o.url = nats.url();
  o.name = "test-" + user;
  o.user = user;
  o.password = password;
  o.publish_timeout_ms = 2'000;
  auto b = bus::Bus::Connect(o);
  REQUIRE_MESSAGE(b.ok(), b.status().message());
  return std::move(*b);
}

TEST_CASE("nats permissions: a wrong password or no user cannot connect") {
  AuthNats nats;
  bus::BusOptions o;
  o.url = nats.url();
  o.connect_timeout_ms = 1'000;
  CHECK_FALSE(bus::Bus::Connect(o).ok());  // anonymous
  o.user = "edge";
  o.password = "pwrong";
  CHECK_FALSE(bus::Bus::Connect(o).ok());
  o.password = PasswordOf("edge");
  CHECK(bus::Bus::Connect(o).ok());
}

TEST_CASE("nats permissions: an edge reads pages and asks search, and can do nothing else") {
  AuthNats nats;
  auto ingest = ConnectAs(nats, "ingest", PasswordOf("ingest"));
  REQUIRE(ingest->EnsureSchema().ok());
  const std::string key = bus::PageKey("default", "/welcome");

  // ingest may write pages and notes.
  REQUIRE(ingest->KvPutAsync(bus::kPagesBucket, key, "by ingest").ok());
  REQUIRE(ingest->PublishAsync(bus::NotesSubject("default"), "{}", "n1").ok());
  REQUIRE(ingest->WaitForAcks(5'000).ok());
  CHECK(ingest->KvGet(bus::kPagesBucket, key).value() == "by ingest");
  CHECK(ingest->StreamMessageCount(bus::kNotesStream).value() == 1);

  auto edge = ConnectAs(nats, "edge", PasswordOf("edge"));
  REQUIRE(edge->EnsureSchema().ok());  // the schema exists: stream info only
  CHECK(edge->KvGet(bus::kPagesBucket, key).value() == "by ingest");

  SUBCASE("no page put: no ack, the page is unchanged") {
    REQUIRE(edge->KvPutAsync(bus::kPagesBucket, key, "defaced").ok());
    CHECK_FALSE(edge->WaitForAcks(2'000).ok());
    CHECK(ingest->KvGet(bus::kPagesBucket, key).value() == "by ingest");
  }
  SUBCASE("no note event") {
    REQUIRE(edge->PublishAsync(bus::NotesSubject("default"), "{}", "n2").ok());
    CHECK_FALSE(edge->WaitForAcks(2'000).ok());
    CHECK(ingest->StreamMessageCount(bus::kNotesStream).value() == 1);
  }
  SUBCASE("no answering search.query: the asker hears nobody") {
    auto fake = bus::Responder::Start(edge.get(), bus::kSearchQuerySubject, "folio-search",
                                      [](std::string_view, std::string_view) { return std::string("forged"); });
    auto answer = ingest->Request(bus::kSearchQuerySubject, "{}", 1'000);
    CHECK_FALSE(answer.ok());
  }
  SUBCASE("no reading the replies meant for another service (_INBOX.<user>.*)") {
    std::atomic<int> overheard{0};
    auto count = [&overheard](std::string_view, std::string_view) {
      ++overheard;
      return std::string();
    };
    auto spy_ingest = bus::Responder::Start(edge.get(), "_INBOX.ingest.>", "", count);
    auto spy_all = bus::Responder::Start(edge.get(), "_INBOX.>", "", count);
    // ingest's JetStream calls and KV reads are answered on its own inbox.
    for (int i = 0; i < 5; ++i) CHECK(ingest->KvGet(bus::kPagesBucket, key).value() == "by ingest");
    CHECK(ingest->Request("$JS.API.STREAM.INFO.notes", "", 2'000).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(overheard.load() == 0);
    // while the edge's own replies still reach it
    CHECK(edge->KvGet(bus::kPagesBucket, key).value() == "by ingest");
  }
  SUBCASE("no purge, no delete of a stream; stream info is allowed") {
    CHECK(edge->Request("$JS.API.STREAM.INFO.notes", "", 2'000).ok());
    CHECK_FALSE(bus::PurgeSubject(edge.get(), bus::kNotesStream, "notes.>").ok());
    CHECK_FALSE(edge->Request("$JS.API.STREAM.DELETE.notes", "", 1'000).ok());
    CHECK_FALSE(edge->Request("$JS.API.STREAM.DELETE.KV_pages", "", 1'000).ok());
    // ingest may not delete either (the deny list is everyone's).
    CHECK_FALSE(ingest->Request("$JS.API.STREAM.DELETE.notes", "", 1'000).ok());
    CHECK(ingest->StreamMessageCount(bus::kNotesStream).value() == 1);
    CHECK(ingest->KvGet(bus::kPagesBucket, key).value() == "by ingest");
  }
  // Each refusal is the server's permissions check, logged with the user.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_MESSAGE(Has(nats.Log(), "Violation"), nats.Log());
  CHECK(Has(nats.Log(), "User \"edge\""));
}

TEST_CASE("nats permissions: every service runs on its own user without a violation") {
  AuthNats nats;
  auto login = [&nats](const std::string& user) {
    return std::vector<std::string>{"--nats-user", user, "--nats-password-file", nats.PasswordFile(user)};
  };
  Cluster c(nats.url(), {});
  std::vector<std::string> storage_args{"--replicated", "--nats", nats.url()};
  for (auto& a : login("storage")) storage_args.push_back(a);
  c.StartStorage(storage_args);
  REQUIRE(testing::WaitForHttp(c.storage_url() + "/readyz", 200, 15000));
  // The edge first: its user may not create the schema, so it waits for
  // ingest to (StartEdge gives up waiting for it after 10 s and says so)
  // without trying, and without a violation.
  c.AddEdgeArgs(login("edge"));
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.StartEdge();
  c.AddIngestArgs(login("ingest"));
  c.AddIngestArgs(c.IngestStorageArgs());
  c.StartIngest();
  c.StartSearch(login("search"));
  REQUIRE(testing::WaitForHttp(c.search_url() + "/readyz", 200, 15000));

  const std::string bytes = "attachment bytes through storage's own NATS user";
  auto push = c.Push(PushWithAttachment("welcome.md", "img/pic.png", bytes));
  REQUIRE_MESSAGE(push.status == 200, push.body << "\n" << c.Logs());
  REQUIRE(c.Push(PushBody({{"welcome.md", "# Welcome\n\nSiamese cats purr. ![[img/pic.png]]\n"},
                           {"db.md", "# SQLite\n\nSQLite is an embedded SQL database engine.\n"}}))
              .status == 200);
  CHECK(c.WaitForPage("/welcome", 200, "Siamese").status == 200);
  CHECK(c.WaitForPage(AssetPath(bytes, "pic.png"), 200, bytes).status == 200);
  auto found = c.WaitForPage("/_/search?q=sqlite", 200, "db", 20000);
  CHECK_MESSAGE(Has(found.body, "SQLite"), found.body << "\n" << c.Logs());

  // search's related lists reach ingest (related stream, ingest's durable
  // consumer) and come back in the page; give them a moment either way.
  c.WaitForPage("/db", 200, "Siamese", 5000);
  const std::string log = nats.Log();
  CHECK_MESSAGE(!Has(c.Logs(), "Not Permitted"), c.Logs());
  CHECK_MESSAGE(!Has(log, "Violation"), log);
  CHECK_MESSAGE(!Has(log, "Authorization Error"), log);
}

}  // namespace
}  // namespace folio::it
