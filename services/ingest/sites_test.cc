// The sites table (Store) and `site add`'s host parsing, against a real
// SQLite file.
#include <doctest/doctest.h>

#include "folio/core/hash.h"
#include "folio/testing/testing.h"
#include "site_command.h"
#include "store.h"

using namespace folio;
using namespace folio::ingest;

TEST_CASE("sites table: add, conflicts, find by token hash, remove") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  Store& s = **store;
  SiteRow a{"a", "Site A", {"a.example", "www.a.example"}, Sha256Hex("token-a"), 1};
  REQUIRE(s.AddSite(a, {{0, OutboxMsg::kKvPut, "_site.a", "{}", ""}}).ok());
  CHECK(*s.OutboxSize() == 1);  // the site record rides in the same transaction

  Status dup = s.AddSite(SiteRow{"a", "", {"other.example"}, Sha256Hex("x"), 2}, {});
  CHECK(dup.code() == Code::kConflict);
  CHECK(dup.message().find("already exists") != std::string::npos);
  Status host = s.AddSite(SiteRow{"b", "", {"b.example", "www.a.example"}, Sha256Hex("token-b"), 2}, {});
  CHECK(host.code() == Code::kConflict);
  CHECK(host.message().find("www.a.example is already served by site \"a\"") != std::string::npos);
  CHECK(*s.OutboxSize() == 1);  // refused adds write nothing
  REQUIRE(s.AddSite(SiteRow{"b", "", {"b.example"}, Sha256Hex("token-b"), 3}, {}).ok());

  auto list = s.ListSites();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].name == "a");
  CHECK((*list)[0].hosts == std::vector<std::string>{"a.example", "www.a.example"});
  CHECK((*list)[0].title == "Site A");
  CHECK((*list)[1].name == "b");

  auto found = s.FindSiteByTokenHash(Sha256Hex("token-b"));
  REQUIRE(found.ok());
  CHECK(found->name == "b");
  CHECK(s.FindSiteByTokenHash(Sha256Hex("token-c")).status().code() == Code::kNotFound);

  REQUIRE(s.RemoveSite("a", {{0, OutboxMsg::kKvDelete, "_site.a", "", ""}}).ok());
  CHECK(*s.OutboxSize() == 2);
  CHECK(s.RemoveSite("a", {}).code() == Code::kNotFound);
  CHECK(s.FindSiteByTokenHash(Sha256Hex("token-a")).status().code() == Code::kNotFound);
  CHECK(s.ListSites()->size() == 1);
}

TEST_CASE("sites table: another process's change is noticed") {
  testing::TempDir dir;
  auto serving = Store::Open(dir.path());
  auto admin = Store::Open(dir.path());
  REQUIRE(serving.ok());
  REQUIRE(admin.ok());
  CHECK(!*(*serving)->DataVersionChanged());  // the baseline
  CHECK(!*(*serving)->DataVersionChanged());
  REQUIRE((*admin)->AddSite(SiteRow{"a", "", {"a.example"}, Sha256Hex("t"), 1}, {}).ok());
  CHECK(*(*serving)->DataVersionChanged());
  CHECK(!*(*serving)->DataVersionChanged());
  CHECK((*serving)->ListSites()->size() == 1);
}

TEST_CASE("--host lists: comma-separated, normalised, deduplicated") {
  auto h = ParseHostList("A.example, www.a.example:8081,a.example,,[::1]");
  REQUIRE(h.ok());
  CHECK(*h == std::vector<std::string>{"a.example", "www.a.example", "::1"});
  CHECK(ParseHostList("").status().code() == Code::kInvalidArgument);
  CHECK(ParseHostList(" , ").status().code() == Code::kInvalidArgument);
  auto bad = ParseHostList("ok.example,bad host");
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("\"bad host\"") != std::string::npos);
}
