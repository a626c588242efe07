// `publish: private` notes through SiteWriter on a real SQLite file (README
// "Private notes"): the page is published for signed-in readers only; the
// public pages linking to or embedding it show neither its title nor its
// text (the link keeps the author's words, the embed becomes that link);
// it is in no backlink or related list of a public page but its own page
// shows its backlinks; search's events never carry its title or text.
#include <doctest/doctest.h>

#include "folio/bus/page_schema.h"
#include "folio/bus/related_schema.h"
#include "folio/core/gzip.h"
#include "folio/core/thread_pool.h"
#include "folio/metrics/metrics.h"
#include "folio/sqlite/db.h"
#include "folio/testing/testing.h"
#include "site_writer.h"
#include "store.h"

using namespace folio;
using namespace folio::ingest;

namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string Secret(bool is_private) {
  return std::string("---\ntitle: Zanzibarquux plan\n") + (is_private ? "publish: private\n" : "") +
         "---\nThe zanzibarquux details. Back to [[Hub]].\n";
}

PushRequest Notes(std::vector<std::pair<std::string, std::string>> notes) {
  PushRequest r;
  for (auto& [p, c] : notes) r.notes.push_back({p, c});
  return r;
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
  }
  void Push(PushRequest r) { REQUIRE(writer->Push(std::move(r)).ok()); }
  bus::PageRecord Page(const std::string& url) {
    auto rec = store->PageRecord("s", url);
    REQUIRE(rec.ok());
    bus::PageRecord r;
    REQUIRE(bus::DecodePageRecord(*rec, &r).ok());
    return r;
  }
  std::string Html(const std::string& url) {
    std::string html;
    REQUIRE(GzipDecompress(Page(url).body_gzip, &html).ok());
    return html;
  }
  // The note events (stream "notes") still in the outbox, joined.
  std::string NoteEvents() {
    auto db = sqlite::Db::Open(dir.path() + "/ingest.db");
    REQUIRE(db.ok());
    auto q = (*db)->Prepare("SELECT payload FROM outbox WHERE subject LIKE 'notes.%'");
    REQUIRE(q.ok());
    std::string all;
    for (;;) {
      auto row = q->Step();
      REQUIRE(row.ok());
      if (!*row) break;
      all += std::string(q->Blob(0)) + "\n";
    }
    return all;
  }
};

}  // namespace

TEST_CASE("private note: its page is for signed-in readers; public pages name and show none of it") {
  Fixture f;
  f.Push(Notes({{"Secret.md", Secret(true)},
                {"Hub.md", "# Hub\n\nThe plan: [[Secret]].\n\n![[Secret]]\n"},
                {"Other.md", "Other, linking to [[Hub]].\n"}}));
  CHECK(f.Page("/secret").access == bus::PageAccess::kSignedIn);
  CHECK(f.Page("/hub").access == bus::PageAccess::kPublic);
  const std::string hub = f.Html("/hub");
  CHECK(!Has(hub, "anzibarquux"));
  CHECK(Has(hub, "href=\"/secret\""));            // the link stays
  CHECK(Has(hub, "embed-link internal-link"));   // the embed is a link
  CHECK(!Has(hub, "class=\"embed markdown-embed\""));
  CHECK(Has(hub, ">Other</a>"));                 // a public backlink is shown
  // Its own page shows its text and its backlinks.
  const std::string own = f.Html("/secret");
  CHECK(Has(own, "zanzibarquux details"));
  CHECK(Has(own, ">Hub</a>"));
  // Search hears of it only as deleted: no title, no text.
  const std::string events = f.NoteEvents();
  CHECK(Has(events, "\"path\":\"Secret.md\""));
  CHECK(!Has(events, "anzibarquux"));
  // A related list naming it (as search may have sent before it turned private) skips it.
  REQUIRE(f.writer->ApplyRelated({"s", {{"Hub.md", {{"Secret.md", 0.9}, {"Other.md", 0.8}}}}}).ok());
  CHECK(!Has(f.Html("/hub"), "anzibarquux"));
  CHECK(Has(f.Html("/hub"), "class=\"related\""));

  // Made public: the hub shows it as a backlink and embeds its text.
  f.Push(Notes({{"Secret.md", Secret(false)}}));
  CHECK(f.Page("/secret").access == bus::PageAccess::kPublic);
  CHECK(Has(f.Html("/hub"), "zanzibarquux details"));
  CHECK(Has(f.Html("/hub"), ">Zanzibarquux plan</a>"));
  CHECK(Has(f.NoteEvents(), "zanzibarquux details"));
}

TEST_CASE("private note: a store from before private notes learns which notes are private at start") {
  Fixture f;
  f.Push(Notes({{"Secret.md", Secret(false)}, {"Hub.md", "# Hub\n\n[[Secret]]\n"}}));
  REQUIRE(Has(f.Html("/"), "Zanzibarquux"));
  REQUIRE(Has(f.Html("/hub"), "Zanzibarquux"));  // its backlink
  {  // as an older build stored `publish: private`: published, public, under another layout
    auto db = sqlite::Db::Open(f.dir.path() + "/ingest.db");
    REQUIRE(db.ok());
    auto q = (*db)->Prepare("UPDATE notes SET content=? WHERE path='Secret.md'");
    REQUIRE(q.ok());
    REQUIRE(q->Bind(1, Secret(true)).Run().ok());
    REQUIRE((*db)->Exec("UPDATE site_layout SET fingerprint = 'old-layout'").ok());
  }
  f.writer.reset();
  SiteOptions o;
  o.site = "s";
  f.writer = std::make_unique<SiteWriter>(o, f.store.get(), &f.pool, &f.registry);
  REQUIRE(f.writer->Start().ok());
  CHECK(f.Page("/secret").access == bus::PageAccess::kSignedIn);
  CHECK(!Has(f.Html("/"), "anzibarquux"));
  CHECK(!Has(f.Html("/hub"), "anzibarquux"));
  CHECK(!Has(f.Html("/_/graph/0.json"), "anzibarquux"));
}
