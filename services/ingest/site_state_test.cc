// SiteState and StateTxn: a change the commit does not keep is undone in
// the model (no reload), a kept one moves it; and SiteWriter: a push whose
// commit fails leaves the model as the store holds it, so the next push
// plans against what is committed.
#include <doctest/doctest.h>

#include "folio/core/thread_pool.h"
#include "folio/metrics/metrics.h"
#include "folio/testing/testing.h"
#include "site_state.h"
#include "site_writer.h"
#include "store.h"

using namespace folio;
using namespace folio::ingest;

namespace {

PushRequest Notes(std::vector<std::pair<std::string, std::string>> notes, std::vector<std::string> deletes = {}) {
  PushRequest r;
  for (auto& [p, c] : notes) r.notes.push_back({p, c});
  r.deletes = std::move(deletes);
  return r;
}

// What the model says about every note, attachment and related list.
std::string Snapshot(const SiteState& s) {
  std::string out = "version=" + std::to_string(s.version()) + " strict=" + (s.strict_line_breaks() ? "1" : "0") + "\n";
  for (const auto& [path, n] : s.vault().notes()) {
    out += path + " " + n.url + " " + n.sha256 + " " + n.title + " out=";
    for (const auto& t : n.out) out += t + ",";
    out += " back=";
    for (const auto& b : s.vault().Backlinks(path)) out += b + ",";
    if (const auto* list = s.related().Find(path)) {
      out += " related=";
      for (const auto& r : *list) out += r + ",";
    }
    if (auto w = s.warnings().find(path); w != s.warnings().end()) out += " warnings=" + std::to_string(w->second.size());
    out += "\n";
  }
  for (const auto& [path, a] : s.vault().attachments()) out += path + " " + a.url + "\n";
  return out;
}


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
    SiteOptions o;
    o.site = "s";
    writer = std::make_unique<SiteWriter>(o, store.get(), &pool, &registry);
    REQUIRE(writer->Start().ok());
    PushRequest r = Notes({{"a.md", "# A\n\nsee [[b]] and [[c]]\n"},
                           {"b.md", "---\naliases: [bee]\n---\n# B\n\n[[a]] ![[c]]\n"},
                           {"c.md", "# C\n\nlinks [[missing]]\n"},
                           {"d.md", "---\npermalink: dee\n---\n# D\n\n![[pic.png]]\n"}});
    r.attachments.push_back({"pic.png", "png-bytes", ""});
    REQUIRE(writer->Push(std::move(r)).ok());
    REQUIRE(writer->ApplyRelated({"s", {{"a.md", {{"b.md", 0.9}, {"c.md", 0.8}}}}}).ok());
  }
  // The model as the store holds it.
  std::string Stored() {
    SiteState s;
    REQUIRE(s.Load(store.get(), "s", false).ok());
    return Snapshot(s);
  }
};

}  // namespace

TEST_CASE("StateTxn: dropped without Committed, every step is undone; Committed keeps them") {
  Fixture f;
  SiteState state;
  REQUIRE(state.Load(f.store.get(), "s", false).ok());
  const std::string before = Snapshot(state);
  {
    StateTxn txn(&state);
    std::vector<std::string> unused;
    (void)txn.ApplyAttachments({{"pic.png", "ffff", ""}, {"new.png", "eeee", ""}}, {}, &unused);
    site::NoteMeta a;
    a.path = "a.md";
    a.title = "A renamed";
    a.sha256 = "x";
    a.aliases = {"bee"};  // takes b's alias
    a.permalink = "dee";  // and d's URL
    site::NoteMeta e;
    e.path = "e.md";
    e.title = "E";
    e.targets = {"a", "bee"};
    (void)txn.ApplyNotes({a, e}, {"c.md"});
    (void)txn.SetRelated("a.md", {});
    (void)txn.SetRelated("b.md", {"a.md"});
    txn.SetStrictLineBreaks(true);
    txn.SetListings(true, {});
    CHECK(Snapshot(state) != before);
  }
  CHECK(Snapshot(state) == before);
  CHECK(state.listing_fp().empty());

  Commit c;
  c.version = state.version() + 1;
  NoteRow row;
  row.meta.path = "b.md";
  row.warnings = {"w"};
  c.notes.push_back(row);
  {
    StateTxn txn(&state);
    txn.SetStrictLineBreaks(true);
    txn.SetListings(false, {{"/tags/", ListingFp{7, 200}}});
    txn.Committed(c);
  }
  CHECK(state.strict_line_breaks());
  CHECK(state.version() == c.version);
  CHECK(state.warnings().at("b.md") == std::vector<std::string>{"w"});
  CHECK(state.listing_fp().at("/tags/") == ListingFp{7, 200});
}

TEST_CASE("SiteWriter: a push whose commit fails changes nothing, in the store or in memory") {
  Fixture f;
  PushKey key{"k1", "body"};
  REQUIRE(f.writer->Push(Notes({{"z.md", "# Z\n"}}), &key).ok());
  const std::string manifest = folio::ingest_api::EncodeManifest(f.writer->FullManifest({}));
  const std::string model = f.Stored();

  // The same key again: Store::Apply fails (kConflict) after writing rows,
  // and the transaction is rolled back; so must the model be.
  PushRequest r = Notes({{"a.md", "---\naliases: [bee]\npermalink: dee\n---\n# A new\n\n[[e]]\n"},
                         {"e.md", "# E\n\n[[a]] [[bee]]\n"}},
                        {"c.md"});
  r.attachments.push_back({"pic.png", "other-bytes", ""});
  r.settings.strict_line_breaks = true;
  auto failed = f.writer->Push(r, &key);
  REQUIRE(!failed.ok());
  CHECK(failed.status().code() == Code::kConflict);
  CHECK(folio::ingest_api::EncodeManifest(f.writer->FullManifest({})) == manifest);
  CHECK(f.Stored() == model);

  // The next push plans against what is committed: everything is new again.
  auto ok = f.writer->Push(std::move(r));
  REQUIRE(ok.ok());
  CHECK(ok->changed == 3);
  CHECK(ok->deleted == 1);
  CHECK(ok->settings_changed);
  CHECK(folio::ingest_api::EncodeManifest(f.writer->FullManifest({})) != manifest);
}
