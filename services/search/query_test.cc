// What a reader's query finds (issue 27), through the Engine on real SQLite
// files: stems, typos (exact words first), aliases and link texts as a
// note's other names, section links, field weights, languages, the
// vocabulary across deletes and restarts, and the upgrade from the
// schema-1 full-text table.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine.h"
#include "folio/core/thread_pool.h"
#include "folio/sqlite/db.h"
#include "folio/testing/testing.h"
#include "folio/vector/embedder.h"
#include "query.h"

using namespace folio;

namespace {

constexpr char kSite[] = "docs";

struct Vault {
  testing::TempDir dir;
  vector::HashedEmbedder embedder{64};
  ThreadPool pool{2};
  std::unique_ptr<search::Engine> engine;
  int64_t version = 1;

  explicit Vault(search::EngineOptions o = {}) { Open(std::move(o)); }
  void Open(search::EngineOptions o = {}) {
    engine.reset();
    o.data_dir = dir.path();
    auto e = search::Engine::Open(o, &embedder, &pool);
    REQUIRE_MESSAGE(e.ok(), e.status().ToString());
    engine = std::move(*e);
  }
  static bus::NoteEvent Note(std::string path, std::string title, std::string text) {
    bus::NoteEvent e;
    e.site = kSite;
    e.path = std::move(path);
    e.url = "/" + e.path.substr(0, e.path.size() - 3);
    e.title = std::move(title);
    e.text = std::move(text);
    return e;
  }
  void Apply(std::vector<bus::NoteEvent> events) {
    for (auto& e : events) e.version = version;
    ++version;
    search::ApplyStats stats;
    auto r = engine->Apply(events, &stats);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  }
  void Delete(const std::string& path) {
    bus::NoteEvent e;
    e.site = kSite;
    e.path = path;
    e.deleted = true;
    Apply({e});
  }
  bus::SearchReply Search(const std::string& q, bus::SearchMode mode = bus::SearchMode::kText) {
    bus::SearchReply r = engine->Search({kSite, q, 10, mode});
    REQUIRE_MESSAGE(r.error.empty(), r.error);
    return r;
  }
  std::vector<std::string> Paths(const std::string& q, bus::SearchMode mode = bus::SearchMode::kText) {
    std::vector<std::string> out;
    for (const bus::SearchHit& h : Search(q, mode).hits) out.push_back(h.path);
    return out;
  }
  std::string First(const std::string& q, bus::SearchMode mode = bus::SearchMode::kText) {
    auto p = Paths(q, mode);
    return p.empty() ? "" : p[0];
  }
};

// Notes every test shares: a small vault with distinct words.
std::vector<bus::NoteEvent> Base() {
  return {
      Vault::Note("Kitchen sink.md", "Kitchen sink", "Every feature in one place: callouts, tables and embeds."),
      Vault::Note("Garden.md", "Garden", "Planting tomatoes and watering the beds in spring."),
      Vault::Note("Travel.md", "Travel", "Packing lists for trains, planes and ferries."),
      Vault::Note("Bread.md", "Bread", "Flour, water, salt and a long proof overnight."),
      Vault::Note("Books.md", "Books", "Novels to read this winter, and essays."),
  };
}

}  // namespace

TEST_CASE("query: the words of the same stem find each other, in the note's language") {
  Vault v;
  auto notes = Base();
  notes.push_back(Vault::Note("Graph view.md", "Graph view", "The graph shows connections between notes."));
  auto de = Vault::Note("Zeitung.md", "Zeitung", "Die Zeitungen liegen auf dem Tisch.");
  de.lang = "de";
  notes.push_back(de);
  v.Apply(notes);
  CHECK(v.First("connected") == "Graph view.md");   // connections ~ connected: "connect"
  CHECK(v.First("connecting notes") == "Graph view.md");
  CHECK(v.First("zeitung") == "Zeitung.md");         // German stem of "Zeitungen"
  auto hit = v.Search("connected").hits.at(0);
  CHECK(hit.snippet.find("<mark>connections</mark>") != std::string::npos);  // the stem's word is marked
}

TEST_CASE("query: a word the vault lacks is corrected within 1 edit (2 from 8 characters); exact words rank first") {
  Vault v;
  auto notes = Base();
  notes.push_back(Vault::Note("Docs.md", "Documentation", "How the documentation is organised."));
  v.Apply(notes);
  CHECK(v.First("kitchn") == "Kitchen sink.md");           // one letter missing
  CHECK(v.First("kitcehn") == "Kitchen sink.md");          // two letters swapped: one edit
  CHECK(v.First("documantaton") == "Docs.md");             // two edits in a long word
  CHECK(v.Paths("kicthnn").empty());                       // two edits in a short word: nothing
  CHECK(v.Paths("tomatos").size() == 1);                   // 7 characters, one edit
  CHECK(v.Paths("bred").empty());                          // 4 characters: never corrected
  CHECK(v.First("kitc") == "Kitchen sink.md");             // the typed prefix completes as the reader types
  // A word the vault has is taken as it is, not corrected to another one.
  v.Apply({Vault::Note("Kitchn.md", "Kitchn", "A brand spelled kitchn.")});
  CHECK(v.Paths("kitchn") == std::vector<std::string>{"Kitchn.md"});
}

TEST_CASE("query: aliases and the texts other notes link with name a note; they follow edits and deletes") {
  Vault v;
  auto notes = Base();
  auto graph = Vault::Note("Graph view.md", "Graph view", "An interactive picture of the vault.");
  graph.aliases = {"Network map"};
  notes.push_back(graph);
  auto linker = Vault::Note("Home.md", "Home", "See the connections of your notes.");
  linker.links = {{"Graph view.md", "connections"}};
  notes.push_back(linker);
  v.Apply(notes);
  CHECK(v.First("network") == "Graph view.md");
  CHECK(v.First("network map") == "Graph view.md");
  auto paths = v.Paths("connections");
  REQUIRE(paths.size() >= 2);
  CHECK(std::find(paths.begin(), paths.end(), "Graph view.md") != paths.end());
  // The link's text is one the note learns: a note linked before it exists learns it once it comes.
  auto later = Vault::Note("Later.md", "Later", "Nothing here.");
  auto pointer = Vault::Note("Pointer.md", "Pointer", "text");
  pointer.links = {{"Later.md", "flamingo"}};
  v.Apply({pointer});
  CHECK(v.Paths("flamingo").empty());
  v.Apply({later});
  CHECK(v.Paths("flamingo") == std::vector<std::string>{"Later.md"});
  // The linking note drops the link: the name goes.
  linker.links.clear();
  linker.text = "Nothing to see.";
  v.Apply({linker});
  CHECK(v.Paths("connections").empty());
  // The linking note is deleted: its texts go too.
  v.Delete("Pointer.md");
  CHECK(v.Paths("flamingo").empty());
}

TEST_CASE("query: a hit inside a section links to its heading; title words outweigh body words") {
  Vault v;
  auto notes = Base();
  std::string text = "Intro paragraph about the plugin.\nInstallation\nOpen the community store and search.\n";
  auto n = Vault::Note("Plugin.md", "Plugin", text);
  n.sections = {{"Installation", "installation", static_cast<uint32_t>(text.find("Installation"))}};
  notes.push_back(n);
  notes.push_back(Vault::Note("Store.md", "Community store", "A page."));
  notes.push_back(Vault::Note("Mentions.md", "Mentions", "The community store, the community store, the store."));
  v.Apply(notes);
  auto r = v.Search("search the community store");
  REQUIRE(!r.hits.empty());
  bool found = false;
  for (const auto& h : r.hits) {
    if (h.path == "Plugin.md") {
      CHECK(h.url == "/Plugin#installation");
      found = true;
    }
  }
  CHECK(found);
  CHECK(v.First("community store") == "Store.md");  // the title, over a body that repeats it
  auto intro = v.Search("intro paragraph").hits.at(0);
  CHECK(intro.url == "/Plugin");                     // before the first heading: the page itself
}

TEST_CASE("query: the vocabulary forgets deleted words and survives a restart") {
  Vault v;
  auto notes = Base();
  notes.push_back(Vault::Note("Zebra.md", "Zebra", "Stripes."));
  v.Apply(notes);
  CHECK(v.First("zebbra") == "Zebra.md");
  v.Open();  // restart: the vocabulary is rebuilt from the store
  CHECK(v.First("zebbra") == "Zebra.md");
  CHECK(v.First("tomatos") == "Garden.md");
  v.Delete("Zebra.md");
  CHECK(v.Paths("zebbra").empty());
  v.Open();
  CHECK(v.Paths("zebbra").empty());
  CHECK_FALSE(v.engine->NeedsReplay());
}

TEST_CASE("query: a database from before issue 27 is upgraded: notes stay, and the notes stream is read again") {
  Vault v;
  v.Apply(Base());
  v.engine.reset();
  {
    auto db = sqlite::Db::Open(v.dir.path() + "/search.db");
    REQUIRE(db.ok());
    REQUIRE((*db)->Exec("DROP TABLE fts2").ok());
    REQUIRE((*db)->Exec("CREATE VIRTUAL TABLE fts USING fts5(site UNINDEXED, title, body)").ok());
  }
  v.Open();
  CHECK(v.engine->NeedsReplay());
  CHECK(v.engine->notes() == 5);
  REQUIRE(v.engine->ReplayStarted().ok());
  CHECK_FALSE(v.engine->NeedsReplay());
  // Replayed events apply whatever their version: the index is whole again.
  v.version = 1;
  v.Apply(Base());
  CHECK(v.First("tomatoes") == "Garden.md");
  v.Open();
  CHECK_FALSE(v.engine->NeedsReplay());
}

TEST_CASE("query: plans weigh expansions below the reader's words and skip what the index drops") {
  search::Vocabulary vocab;
  for (const char* w : {"connect", "connections", "connected", "kitchen"}) vocab.Add(w, "en");
  search::QueryContext ctx{&vocab, 100, {"en"}};
  auto plan = search::PlanQuery("connections kitchn ‽", ctx);
  REQUIRE(plan.groups.size() == 2);
  CHECK(plan.groups[0][0].text == "connections");
  CHECK(plan.groups[0][0].weight == 1.0);
  for (size_t i = 1; i < plan.groups[0].size(); ++i) CHECK(plan.groups[0][i].weight < 1.0);
  REQUIRE(plan.groups[1].size() == 2);
  CHECK(plan.groups[1][1].text == "kitchen");
  CHECK(plan.groups[1][1].weight < plan.groups[0][1].weight);
  CHECK(plan.corrected == 1);
  // However many words and forms, a plan stays within what the ranking counts.
  search::Vocabulary big;
  std::string many;
  for (int i = 0; i < 32; ++i) {
    std::string base = std::string("talk") + static_cast<char>('a' + i % 26) + static_cast<char>('a' + i / 26);
    for (const char* suffix : {"", "s", "ed", "ing", "er", "ers"}) big.Add(base + suffix, "en");
    many += base + " ";
  }
  auto wide = search::PlanQuery(many, {&big, 1000, {"en"}});
  CHECK(wide.groups.size() == 32);
  size_t alternatives = 0;
  for (const auto& g : wide.groups) alternatives += g.size();
  CHECK(alternatives <= search::kMaxAlternatives);
  CHECK(wide.groups[0].size() > 1);  // the first words still get their forms
  CHECK(search::CheckQuery(std::string(search::kMaxQueryBytes + 1, 'a')).code() == Code::kTooLarge);
  CHECK(search::CheckQuery("a\xff").code() == Code::kInvalidArgument);
}

TEST_CASE("query: pseudo-relevance feedback adds the best notes' heading words, only when turned on") {
  auto notes = [] {
    auto v = Base();
    std::string text = "An interactive picture of the vault.\nNeighbours\nEach note with the notes it links.\n";
    auto a = Vault::Note("Graph view.md", "Graph view", text);
    a.sections = {{"Neighbours", "neighbours", static_cast<uint32_t>(text.find("Neighbours"))}};
    v.push_back(a);
    v.push_back(Vault::Note("Links.md", "Links", "The neighbours of a note are listed under it."));
    return v;
  };
  Vault off;
  off.Apply(notes());
  auto plain = off.Paths("picture");
  CHECK(plain == std::vector<std::string>{"Graph view.md"});
  search::EngineOptions o;
  o.feedback_weight = 0.3;
  Vault on(o);
  on.Apply(notes());
  auto fed = on.Paths("picture");
  REQUIRE(fed.size() == 2);
  CHECK(fed[0] == "Graph view.md");  // the reader's own word still ranks first
  CHECK(fed[1] == "Links.md");       // found through "neighbours", a heading of the best note
}
