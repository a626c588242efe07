// Related-note lists in ingest: the list model, their table (including on a
// database from before it existed), and SiteWriter: ApplyRelated re-renders
// exactly the pages whose shown list changes; pushes re-render the pages
// that show a renamed, moved, deleted or unpublished note.
#include <doctest/doctest.h>

#include "folio/bus/page_schema.h"
#include "folio/bus/related_schema.h"
#include "folio/core/gzip.h"
#include "folio/core/thread_pool.h"
#include "folio/metrics/metrics.h"
#include "folio/sqlite/db.h"
#include "folio/testing/testing.h"
#include "related.h"
#include "site_writer.h"
#include "store.h"

using namespace folio;
using namespace folio::ingest;

namespace {

std::vector<bus::RelatedEntry> Entries(std::vector<std::string> paths, double score = 0.5) {
  std::vector<bus::RelatedEntry> out;
  for (auto& p : paths) out.push_back({std::move(p), score -= 0.01});
  return out;
}

bus::RelatedUpdate Update(std::string path, std::vector<std::string> related, double score = 0.5) {
  return {"s", {{std::move(path), Entries(std::move(related), score)}}};
}

PushRequest Notes(std::vector<std::pair<std::string, std::string>> notes, std::vector<std::string> deletes = {}) {
  PushRequest r;
  for (auto& [p, c] : notes) r.notes.push_back({p, c});
  r.deletes = std::move(deletes);
  return r;
}

// One site's writer on a real SQLite file, without a bus (commits only).
struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<Store> store;
  ThreadPool pool{2};
  metrics::Registry registry;
  std::unique_ptr<SiteWriter> writer;

  Fixture() {
    auto s = Store::Open(dir.path());
    REQUIRE(s.ok());
    store = std::move(*s);
    Restart();
  }
  void Restart() {
    writer.reset();
    SiteOptions o;
    o.site = "s";
    writer = std::make_unique<SiteWriter>(o, store.get(), &pool, &registry);
    REQUIRE(writer->Start().ok());
  }
  PushSummary Push(PushRequest r) {
    auto sum = writer->Push(std::move(r));
    REQUIRE(sum.ok());
    return *sum;
  }
  size_t Apply(const bus::RelatedUpdate& u) {
    auto n = writer->ApplyRelated(u);
    REQUIRE(n.ok());
    return *n;
  }
  bus::PageRecord Page(const std::string& url) {
    auto rec = store->PageRecord("s", url);
    REQUIRE(rec.ok());
    bus::PageRecord r;
    REQUIRE(bus::DecodePageRecord(*rec, &r).ok());
    return r;
  }
  // The page's related-notes section ("" if it has none).
  std::string Related(const std::string& url) {
    std::string html;
    REQUIRE(GzipDecompress(Page(url).body_gzip, &html).ok());
    size_t at = html.find("class=\"related\"");
    if (at == std::string::npos) return "";
    return html.substr(at, html.find("</nav>", at) - at);
  }
  int64_t Version() { return *store->Version("s"); }
};

}  // namespace

TEST_CASE("related lists: normalised, shown, indexed both ways") {
  auto n = NormalizeRelated("A.md", Entries({"B.md", "A.md", "B.md", "../x.md", "", "C.md"}));
  REQUIRE(n.size() == 2);
  CHECK(n[0].path == "B.md");
  CHECK(n[1].path == "C.md");
  std::vector<std::string> many;
  for (int i = 0; i < 60; ++i) many.push_back("n" + std::to_string(i) + ".md");
  CHECK(NormalizeRelated("A.md", Entries(many)).size() == kMaxRelatedKept);

  RelatedLookup lookup = [](std::string_view p) -> std::optional<site::LinkItem> {
    if (p == "gone.md") return std::nullopt;
    return site::LinkItem{"T " + std::string(p), "/" + std::string(p), ""};
  };
  std::vector<std::string> list{"gone.md"};
  for (int i = 0; i < 12; ++i) list.push_back("n" + std::to_string(i) + ".md");
  auto shown = ShownRelated(list, lookup);
  REQUIRE(shown.size() == kMaxRelatedShown);
  CHECK(shown[0].title == "T n0.md");  // the missing note is skipped, the next moves up

  RelatedIndex idx;
  CHECK(idx.Set("A.md", {"B.md", "C.md"}));
  CHECK(!idx.Set("A.md", {"B.md", "C.md"}));
  CHECK(idx.Set("D.md", {"C.md"}));
  REQUIRE(idx.ListedBy("C.md") != nullptr);
  CHECK(*idx.ListedBy("C.md") == std::set<std::string>{"A.md", "D.md"});
  CHECK(idx.Set("A.md", {"C.md", "B.md"}));  // order matters
  CHECK(idx.Set("A.md", {}));
  CHECK(idx.Find("A.md") == nullptr);
  CHECK(idx.ListedBy("B.md") == nullptr);
  CHECK(*idx.ListedBy("C.md") == std::set<std::string>{"D.md"});
  CHECK(!idx.Set("A.md", {}));
}

TEST_CASE("related table: created on a database from before it existed; lists round-trip") {
  testing::TempDir dir;
  {
    // The schema of the previous release, without the related table.
    auto db = sqlite::Db::Open(dir.path() + "/ingest.db");
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("CREATE TABLE site_version(site TEXT PRIMARY KEY, version INTEGER NOT NULL);"
                        "INSERT INTO site_version VALUES('s', 7);").ok());
  }
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  CHECK(*(*store)->Version("s") == 7);
  auto none = (*store)->LoadRelated("s");
  REQUIRE(none.ok());
  CHECK(none->empty());

  Commit c;
  c.site = "s";
  c.version = 7;
  c.related.push_back({"A.md", {{"B b.md", 0.25}, {"Ünï/C.md", -1e-9}}});
  c.related.push_back({"D.md", {{"A.md", 1}}});
  REQUIRE((*store)->Apply(&c).ok());
  Commit del;
  del.site = "s";
  del.version = 7;
  del.related.push_back({"D.md", {}});
  REQUIRE((*store)->Apply(&del).ok());

  store->reset();
  auto again = Store::Open(dir.path());
  REQUIRE(again.ok());
  auto lists = (*again)->LoadRelated("s");
  REQUIRE(lists.ok());
  REQUIRE(lists->size() == 1);
  CHECK((*lists)[0].path == "A.md");
  REQUIRE((*lists)[0].related.size() == 2);
  CHECK((*lists)[0].related[0].path == "B b.md");
  CHECK((*lists)[0].related[0].score == 0.25);
  CHECK((*lists)[0].related[1].path == "Ünï/C.md");
  CHECK((*lists)[0].related[1].score == -1e-9);
  CHECK((*again)->LoadRelated("other")->empty());
}

TEST_CASE("ApplyRelated re-renders only pages whose shown list changes") {
  Fixture f;
  f.Push(Notes({{"A.md", "---\ntitle: Alpha\n---\n"}, {"B.md", "---\ntitle: Bravo\n---\n"}, {"C.md", "---\ntitle: Charlie\n---\n"}, {"D.md", "---\ntitle: Delta\n---\n"},
                {"Draft.md", "---\npublish: false\ntitle: Secret draft\n---\n"}}));
  const int64_t v0 = f.Version();
  const std::string etag_a = f.Page("/a").etag, etag_d = f.Page("/d").etag;
  CHECK(f.Related("/a").empty());

  CHECK(f.Apply(Update("A.md", {"B.md", "C.md"})) == 1);
  CHECK(f.Version() == v0 + 1);  // a version bump, like a push
  CHECK(f.Page("/a").version == v0 + 1);
  CHECK(f.Page("/a").etag != etag_a);
  CHECK(f.Page("/d").etag == etag_d);
  std::string rel = f.Related("/a");
  CHECK(rel.find("Bravo") != std::string::npos);
  CHECK(rel.find("href=\"/c\"") != std::string::npos);
  CHECK(rel.find("Bravo") < rel.find("Charlie"));

  // The same list, and new scores for the same notes: nothing to do.
  const std::string etag_a1 = f.Page("/a").etag;
  CHECK(f.Apply(Update("A.md", {"B.md", "C.md"})) == 0);
  CHECK(f.Apply(Update("A.md", {"B.md", "C.md"}, 0.9)) == 0);
  CHECK(f.Version() == v0 + 1);
  CHECK(f.Page("/a").etag == etag_a1);

  // A new order re-renders that page only.
  CHECK(f.Apply({"s", {{"A.md", Entries({"C.md", "B.md"})}, {"D.md", {}}}}) == 1);
  CHECK(f.Page("/d").etag == etag_d);
  rel = f.Related("/a");
  CHECK(rel.find("Charlie") < rel.find("Bravo"));

  // Drafts, missing notes and the note itself are not shown: adding them
  // changes the stored list, not the page.
  const int64_t v1 = f.Version();
  CHECK(f.Apply(Update("A.md", {"C.md", "Draft.md", "Nowhere.md", "A.md", "B.md"})) == 0);
  CHECK(f.Version() == v1);
  CHECK(f.Related("/a").find("Secret") == std::string::npos);

  // A list for a note without a page is kept for when it gets one.
  CHECK(f.Apply(Update("Later.md", {"D.md"})) == 0);
  auto sum = f.Push(Notes({{"Later.md", "---\ntitle: Later\n---\n"}}));
  CHECK(sum.rendered == 1);
  CHECK(f.Related("/later").find("Delta") != std::string::npos);

  // Lists survive a restart.
  f.Restart();
  CHECK(f.Apply(Update("Later.md", {"D.md"})) == 0);
  CHECK(f.Apply(Update("A.md", {"C.md", "Draft.md", "Nowhere.md", "B.md"})) == 0);

  // An empty list clears the section.
  CHECK(f.Apply(Update("Later.md", {})) == 1);
  CHECK(f.Related("/later").empty());
}

TEST_CASE("a push re-renders the pages that show a renamed, deleted or unpublished note") {
  Fixture f;
  f.Push(Notes({{"A.md", "---\ntitle: Alpha\n---\n"}, {"B.md", "---\ntitle: Bravo\n---\n"}, {"C.md", "---\ntitle: Charlie\n---\n"}, {"D.md", "---\ntitle: Delta\n---\n"},
                {"E.md", "---\ntitle: Echo\n---\n"}}));
  REQUIRE(f.Apply({"s", {{"A.md", Entries({"B.md", "C.md"})}, {"E.md", Entries({"C.md"})}}}) == 2);
  const std::string etag_e = f.Page("/e").etag;

  // B's title changes: A shows it, so A re-renders (B itself too); E does not.
  auto sum = f.Push(Notes({{"B.md", "---\ntitle: Bravo renamed\n---\n"}}));
  CHECK(sum.rendered == 2);
  CHECK(f.Related("/a").find("Bravo renamed") != std::string::npos);
  CHECK(f.Page("/e").etag == etag_e);

  // New text, same title and URL: only the note itself.
  CHECK(f.Push(Notes({{"B.md", "---\ntitle: Bravo renamed\n---\n\nMore text.\n"}})).rendered == 1);
  // A note nobody lists: only itself.
  CHECK(f.Push(Notes({{"D.md", "---\ntitle: Delta two\n---\n"}})).rendered == 1);

  // A new URL (permalink) reaches the lists.
  sum = f.Push(Notes({{"B.md", "---\npermalink: bee\ntitle: Bravo renamed\n---\n"}}));
  CHECK(sum.rendered == 2);
  CHECK(f.Related("/a").find("href=\"/bee\"") != std::string::npos);

  // C is deleted: A and E drop it.
  sum = f.Push(Notes({}, {"C.md"}));
  CHECK(f.Related("/a").find("Charlie") == std::string::npos);
  CHECK(f.Related("/a").find("Bravo renamed") != std::string::npos);
  CHECK(f.Related("/e").empty());
  CHECK(f.Page("/e").etag != etag_e);

  // Unpublishing B empties A's list; publishing it again brings it back.
  f.Push(Notes({{"B.md", "---\npublish: false\ntitle: Bravo renamed\n---\n"}}));
  CHECK(f.Related("/a").empty());
  f.Push(Notes({{"B.md", "---\ntitle: Bravo again\n---\n"}}));
  CHECK(f.Related("/a").find("Bravo again") != std::string::npos);

  // A deleted note that comes back is shown again (its entry stayed in the list).
  f.Push(Notes({{"C.md", "---\ntitle: Charlie returns\n---\n"}}));
  CHECK(f.Related("/a").find("Charlie returns") != std::string::npos);
}

TEST_CASE("a note past the shown prefix of a list changes nothing on the page") {
  Fixture f;
  std::vector<std::pair<std::string, std::string>> notes{{"Hub.md", "---\ntitle: Hub\n---\n"}};
  std::vector<std::string> list;
  for (size_t i = 0; i < kMaxRelatedShown + 2; ++i) {
    std::string p = "N" + std::to_string(i) + ".md";
    notes.push_back({p, "---\ntitle: Note " + std::to_string(i) + "\n---\n"});
    list.push_back(p);
  }
  f.Push(Notes(notes));
  REQUIRE(f.Apply(Update("Hub.md", list)) == 1);
  const std::string etag = f.Page("/hub").etag;
  // The last entry is not shown: renaming it leaves the hub alone.
  CHECK(f.Push(Notes({{list.back(), "---\ntitle: Renamed far note\n---\n"}})).rendered == 1);
  CHECK(f.Page("/hub").etag == etag);
  // Deleting a shown one pulls the next one in.
  f.Push(Notes({}, {list.front()}));
  CHECK(f.Page("/hub").etag != etag);
  std::string rel = f.Related("/hub");
  CHECK(rel.find("Note 0") == std::string::npos);
  CHECK(rel.find("Note " + std::to_string(kMaxRelatedShown)) != std::string::npos);
}
