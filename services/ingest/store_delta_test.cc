// The manifest delta of Store (ManifestSince, tombstones, pruning) and the
// query plans of its statements, and the per-site settings table, against
// a real SQLite file.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "folio/sqlite/db.h"
#include "folio/testing/testing.h"
#include "store.h"

using namespace folio;
using namespace folio::ingest;

namespace {

NoteRow Note(const std::string& path, const std::string& sha, int64_t version) {
  NoteRow n;
  n.meta.path = path;
  n.meta.url = "/" + path.substr(0, path.size() - 3);
  n.meta.sha256 = sha;
  n.meta.version = version;
  n.content = "# " + path;
  return n;
}

Commit NewCommit(const std::string& site, int64_t version) {
  Commit c;
  c.site = site;
  c.version = version;
  return c;
}

std::vector<std::string> Paths(const std::vector<ManifestEntry>& v) {
  std::vector<std::string> out;
  for (const auto& e : v) out.push_back(e.path);
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("store: manifest since a version lists what changed and what was deleted") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  Store& s = **store;
  Commit c1 = NewCommit("s", 1);
  c1.notes = {Note("a.md", "a1", 1), Note("b.md", "b1", 1)};
  c1.attachments.push_back({site::AttachmentMeta{"x.png", "x1", "/assets/x1/x.png"}, "bytes"});
  REQUIRE(s.Apply(&c1).ok());
  Commit other = NewCommit("t", 1);  // another site's rows never leak into s's delta
  other.notes = {Note("z.md", "z1", 1)};
  other.deleted_notes = {"gone.md"};
  REQUIRE(s.Apply(&other).ok());
  Commit c2 = NewCommit("s", 2);
  c2.notes = {Note("b.md", "b2", 2), Note("c.md", "c2", 2)};
  c2.deleted_notes = {"a.md"};
  REQUIRE(s.Apply(&c2).ok());
  Commit c3 = NewCommit("s", 3);
  c3.notes = {Note("a.md", "a3", 3)};  // back again: its tombstone goes
  c3.deleted_attachments = {"x.png"};
  NoteRow rerendered = Note("c.md", "c2", 2);  // re-rendered only: not a content change
  rerendered.content_changed = false;
  c3.notes.push_back(rerendered);
  REQUIRE(s.Apply(&c3).ok());

  auto all = s.ManifestSince("s", 0);
  REQUIRE(all.ok());
  CHECK_FALSE(all->too_old);
  CHECK(Paths(all->notes) == Strings{"a.md", "b.md", "c.md"});
  CHECK(all->attachments.empty());
  CHECK(all->deleted == Strings{"x.png"});

  auto d1 = s.ManifestSince("s", 1);
  REQUIRE(d1.ok());
  CHECK(Paths(d1->notes) == Strings{"a.md", "b.md", "c.md"});
  CHECK(d1->notes[1].sha256 == "b2");
  CHECK(d1->deleted == Strings{"x.png"});

  auto d2 = s.ManifestSince("s", 2);
  REQUIRE(d2.ok());
  CHECK(Paths(d2->notes) == Strings{"a.md"});
  CHECK(d2->notes[0].sha256 == "a3");
  CHECK(d2->deleted == Strings{"x.png"});

  Commit c4 = NewCommit("s", 4);
  c4.attachments.push_back({site::AttachmentMeta{"y.png", "y4", "/assets/y4/y.png"}, "bytes"});
  c4.deleted_notes = {"b.md"};
  REQUIRE(s.Apply(&c4).ok());
  auto d3 = s.ManifestSince("s", 3);
  REQUIRE(d3.ok());
  CHECK(d3->notes.empty());
  CHECK(Paths(d3->attachments) == Strings{"y.png"});
  CHECK(d3->deleted == Strings{"b.md"});
  auto d4 = s.ManifestSince("s", 4);
  REQUIRE(d4.ok());
  CHECK(d4->notes.empty());
  CHECK(d4->attachments.empty());
  CHECK(d4->deleted.empty());

  auto t = s.ManifestSince("t", 0);
  REQUIRE(t.ok());
  CHECK(Paths(t->notes) == Strings{"z.md"});
  CHECK(t->deleted == Strings{"gone.md"});
}

TEST_CASE("store: tombstones past the bound are pruned and an older since is too old") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  Store& s = **store;
  Commit c1 = NewCommit("s", 5);
  c1.notes = {Note("a.md", "a", 5), Note("b.md", "b", 5)};
  REQUIRE(s.Apply(&c1).ok());
  Commit c2 = NewCommit("s", 6);
  c2.deleted_notes = {"a.md"};
  REQUIRE(s.Apply(&c2).ok());
  auto before = s.ManifestSince("s", 5);
  REQUIRE(before.ok());
  CHECK(before->deleted == Strings{"a.md"});

  const int64_t later = 6 + kTombstoneVersions;  // the tombstone of version 6 falls out
  Commit c3 = NewCommit("s", later);
  c3.deleted_notes = {"b.md"};
  REQUIRE(s.Apply(&c3).ok());
  auto old = s.ManifestSince("s", 5);
  REQUIRE(old.ok());
  CHECK(old->too_old);
  auto at_floor = s.ManifestSince("s", 6);
  REQUIRE(at_floor.ok());
  CHECK_FALSE(at_floor->too_old);
  CHECK(at_floor->deleted == Strings{"b.md"});
}

TEST_CASE("store: the delta statements search the (site, version) indexes, never scan a table") {
  testing::TempDir dir;
  {
    auto store = Store::Open(dir.path());
    REQUIRE(store.ok());
    for (int v = 1; v <= 20; ++v) {  // some rows, so the plan is not the one of an empty table
      Commit c = NewCommit(v % 2 ? "s" : "t", v);
      c.notes = {Note("n" + std::to_string(v) + ".md", "h", v)};
      c.attachments.push_back({site::AttachmentMeta{"p" + std::to_string(v) + ".png", "h", "/a"}, "b"});
      if (v > 2) c.deleted_notes = {"n" + std::to_string(v - 2) + ".md"};
      REQUIRE((*store)->Apply(&c).ok());
    }
  }
  auto db = sqlite::Db::Open(dir.path() + "/ingest.db");
  REQUIRE(db.ok());
  struct Expect {
    const char* sql;
    const char* index;
  };
  for (Expect e : {Expect{kNotesSinceSql, "notes_by_version"}, Expect{kAttachmentsSinceSql, "attachments_by_version"},
                   Expect{kDeletedSinceSql, "deleted_by_version"}}) {
    auto q = (*db)->Prepare(std::string("EXPLAIN QUERY PLAN ") + e.sql);
    REQUIRE(q.ok());
    q->Bind(1, std::string("s")).Bind(2, int64_t{10});
    std::string plan;
    for (;;) {
      auto row = q->Step();
      REQUIRE(row.ok());
      if (!*row) break;
      plan += std::string(q->Text(3)) + "\n";
    }
    INFO(e.sql, "\n", plan);
    CHECK(plan.find("SCAN") == std::string::npos);
    CHECK(plan.find(std::string("INDEX ") + e.index + " (site=? AND version>?)") != std::string::npos);
  }
}

TEST_CASE("store: a site's epoch is made once, kept, and made anew once cleared (a restore)") {
  testing::TempDir dir;
  std::string first;
  {
    auto store = Store::Open(dir.path());
    REQUIRE(store.ok());
    auto e = (*store)->Epoch("s");  // a site without pushes yet
    REQUIRE(e.ok());
    CHECK(e->size() == 16);
    first = *e;
    Commit c = NewCommit("s", 1);
    c.notes = {Note("a.md", "a", 1)};
    REQUIRE((*store)->Apply(&c).ok());
    CHECK(*(*store)->Epoch("s") == first);
    CHECK(*(*store)->Version("s") == 1);
    CHECK(*(*store)->Epoch("t") != first);
  }
  {
    auto store = Store::Open(dir.path());  // kept across restarts
    REQUIRE(store.ok());
    CHECK(*(*store)->Epoch("s") == first);
  }
  auto db = sqlite::Db::Open(dir.path() + "/ingest.db");
  REQUIRE(db.ok());
  REQUIRE((*db)->Exec("UPDATE site_version SET epoch=''").ok());  // what restore does
  db->reset();
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  auto again = (*store)->Epoch("s");
  REQUIRE(again.ok());
  CHECK(*again != first);
  CHECK(again->size() == 16);
}

TEST_CASE("store: an outbox put that refers to a commit's page publishes that page's record") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  Store& s = **store;
  Commit c = NewCommit("s", 1);
  c.outbox.push_back({0, OutboxMsg::kKvDelete, "pages.s.gone", "", ""});
  c.AddPage("/a", "record of a");
  c.AddPage("/b", "record of b");
  REQUIRE(c.outbox.size() == 3);
  CHECK(c.outbox[1].payload.empty());  // not a second copy
  REQUIRE(s.Apply(&c).ok());
  auto pending = s.PendingOutbox(10);
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 3);
  CHECK((*pending)[0].kind == OutboxMsg::kKvDelete);
  CHECK((*pending)[1].subject == bus::PageKey("s", "/a"));
  CHECK((*pending)[1].payload == "record of a");
  CHECK((*pending)[2].subject == bus::PageKey("s", "/b"));
  CHECK((*pending)[2].payload == "record of b");
  auto a = s.PageRecord("s", "/a");
  REQUIRE(a.ok());
  CHECK(*a == "record of a");
  CHECK(c.outbox_was_empty);
  // The record is stored once: the outbox row names the page.
  {
    auto q = s.db()->Prepare("SELECT sum(length(payload)) FROM outbox");
    REQUIRE(q.ok());
    REQUIRE(*q->Step());
    CHECK(q->Int(0) == 0);
  }

  // Unpublished puts follow the store: a page changed since publishes its
  // newer record, a page deleted since publishes nothing (kPagePut, empty).
  Commit later = NewCommit("s", 2);
  later.AddPage("/a", "newer record of a");
  later.deleted_pages = {"/b"};
  later.outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey("s", "/b"), "", ""});
  REQUIRE(s.Apply(&later).ok());
  CHECK(!later.outbox_was_empty);
  pending = s.PendingOutbox(10);
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 5);
  CHECK((*pending)[1].kind == OutboxMsg::kKvPut);
  CHECK((*pending)[1].payload == "newer record of a");
  CHECK((*pending)[2].kind == OutboxMsg::kPagePut);
  CHECK((*pending)[2].payload.empty());
  CHECK((*pending)[3].payload == "newer record of a");
  CHECK((*pending)[4].kind == OutboxMsg::kKvDelete);
  REQUIRE(s.AckOutbox((*pending)[4].seq).ok());

  // A reference past the commit's pages is refused, and nothing is written.
  Commit bad = NewCommit("s", 3);
  bad.AddPage("/c", "record of c");
  bad.outbox.back().page = 5;
  CHECK(!s.Apply(&bad).ok());
  CHECK(!s.PageRecord("s", "/c").ok());
  auto v = s.Version("s");
  REQUIRE(v.ok());
  CHECK(*v == 2);
}

// Issue 13: each site's own "Strict line breaks", stored with its commit.
TEST_CASE("site settings: a database from before them opens; the setting is per site and survives reopening") {
  testing::TempDir dir;
  {
    // The previous release's layout table, without site_settings.
    auto db = sqlite::Db::Open(dir.path() + "/ingest.db");
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("CREATE TABLE site_layout(site TEXT PRIMARY KEY, fingerprint TEXT NOT NULL);"
                        "INSERT INTO site_layout VALUES('a', 'fp');").ok());
  }
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  auto none = (*store)->StrictLineBreaks("a");
  REQUIRE(none.ok());
  CHECK(!none->has_value());
  CHECK(*(*store)->LayoutFingerprint("a") == "fp");

  Commit on;
  on.site = "a";
  on.version = 1;
  on.strict_line_breaks = true;
  on.layout_fingerprint = "fp2";
  REQUIRE((*store)->Apply(&on).ok());
  Commit off;
  off.site = "b";
  off.version = 1;
  off.strict_line_breaks = false;
  REQUIRE((*store)->Apply(&off).ok());
  Commit silent;  // a commit that does not say keeps the site's value
  silent.site = "a";
  silent.version = 2;
  REQUIRE((*store)->Apply(&silent).ok());

  store->reset();
  auto again = Store::Open(dir.path());
  REQUIRE(again.ok());
  auto a = (*again)->StrictLineBreaks("a");
  auto b = (*again)->StrictLineBreaks("b");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == std::optional<bool>(true));
  CHECK(*b == std::optional<bool>(false));
  CHECK(*(*again)->LayoutFingerprint("a") == "fp2");
  CHECK(!(*again)->StrictLineBreaks("c")->has_value());
}

TEST_CASE("store: a push's commit leaves the log to Checkpoint; Checkpoint copies it all") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  Store& s = **store;
  Commit c = NewCommit("s", 1);
  for (int i = 0; i < 3000; ++i) c.AddPage("/p" + std::to_string(i), std::string(3000, static_cast<char>('a' + i % 26)));
  REQUIRE(s.Apply(&c).ok());
  // ~9 MB of pages: past SQLite's default of 1,000 log pages, yet not copied.
  auto frames = [&] {
    auto q = s.db()->Prepare("PRAGMA wal_checkpoint(PASSIVE)");
    REQUIRE(q.ok());
    REQUIRE(*q->Step());
    return std::pair<int64_t, int64_t>{q->Int(1), q->Int(2)};  // frames in the log, frames copied
  };
  auto q = s.db()->Prepare("PRAGMA wal_autocheckpoint");
  REQUIRE(q.ok());
  REQUIRE(*q->Step());
  CHECK(q->Int(0) == Store::kWalPages);
  REQUIRE(s.Checkpoint().ok());
  auto [log, copied] = frames();
  CHECK(log > 1000);
  CHECK(copied == log);
  auto a = s.PageRecord("s", "/p7");
  REQUIRE(a.ok());
  CHECK(*a == std::string(3000, 'h'));
}
