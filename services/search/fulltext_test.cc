// FullTextIndex against a real SQLite file, and MakeSnippet / QueryTerms.
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "folio/core/text.h"
#include "folio/core/utf8.h"
#include "folio/sqlite/db.h"
#include "folio/sqlite/transaction.h"
#include "folio/testing/testing.h"
#include "fulltext.h"
#include "query.h"
#include "snippet.h"

using namespace folio;
using namespace folio::search;

namespace {

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<sqlite::Db> db;
  std::unique_ptr<FullTextIndex> fts;

  Fixture() {
    auto d = sqlite::Db::Open(dir.path() + "/search.db");
    REQUIRE(d.ok());
    db = std::move(*d);
    REQUIRE(FullTextIndex::CreateSchema(db.get()).ok());
    REQUIRE(FullTextIndex::CreateSchema(db.get()).ok());  // idempotent
    fts = std::make_unique<FullTextIndex>(db.get());
  }
  void Add(int64_t id, std::string_view site, std::string_view title, std::string_view body) {
    auto tx = sqlite::Transaction::Begin(db.get());
    REQUIRE(tx.ok());
    Status s = fts->Upsert(id, site, NoteFields{title, "", "", "", "", "", body});
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    REQUIRE(tx->Commit().ok());
  }
  // Unrelated notes, so that real terms get a positive IDF.
  void AddFiller(std::string_view site, int64_t first_id) {
    const char* bodies[] = {"the weather is nice today", "a recipe for bread and butter",
                            "notes on gardening in spring", "travel plans for the summer",
                            "a list of books to read", "meeting minutes from monday"};
    int64_t id = first_id;
    for (const char* b : bodies) Add(id++, site, "Filler", b);
  }
  // The engine's path without a vocabulary: words as typed, no stems.
  Result<std::vector<TextHit>> Search(std::string_view site, std::string_view q, size_t k) {
    if (Status s = CheckQuery(q); !s.ok()) return s;
    return SearchText(fts.get(), site, PlanQuery(q, {}), k, RankWeights{});
  }
  std::vector<TextHit> Hits(std::string_view site, std::string_view q, size_t k = 10) {
    auto r = Search(site, q, k);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    return *r;
  }
  std::vector<int64_t> Ids(std::string_view site, std::string_view q, size_t k = 10) {
    std::vector<int64_t> ids;
    for (const TextHit& h : Hits(site, q, k)) ids.push_back(h.doc_id);
    return ids;
  }
  bool Finds(std::string_view site, std::string_view q, int64_t id) {
    for (int64_t x : Ids(site, q)) {
      if (x == id) return true;
    }
    return false;
  }
};

using Ids = std::vector<int64_t>;

}  // namespace

TEST_CASE("English ranking: title above body, more occurrences above fewer") {
  Fixture f;
  f.AddFiller("a", 100);
  f.Add(1, "a", "Notes", "embedding alpha beta gamma delta epsilon");         // body, once
  f.Add(2, "a", "Embedding", "zeta alpha beta gamma delta epsilon");          // title, once
  f.Add(3, "a", "Notes", "embedding beta embedding gamma embedding delta");   // body, three times
  auto hits = f.Hits("a", "embedding");
  REQUIRE(hits.size() == 3);
  CHECK(hits[0].doc_id == 2);
  CHECK(hits[1].doc_id == 3);
  CHECK(hits[2].doc_id == 1);
  for (size_t i = 0; i < hits.size(); ++i) {
    CHECK(hits[i].score > 0);
    CHECK(hits[i].all_terms);
    if (i > 0) CHECK(hits[i - 1].score > hits[i].score);
  }
  CHECK(f.Ids("a", "EMBEDDING") == f.Ids("a", "embedding"));  // case-insensitive
  CHECK(f.Ids("a", "embedding", 1) == Ids{2});
  CHECK(f.Ids("a", "embedding", 0).empty());
}

TEST_CASE("diacritics, prefixes, and the any-term fallback") {
  Fixture f;
  f.AddFiller("a", 100);
  f.Add(1, "a", "Café culture", "Un café à Paris, près de la Seine.");
  f.Add(2, "a", "Vectors", "Embedding models map text to vectors.");
  f.Add(3, "a", "Fruit", "apple banana");
  f.Add(4, "a", "Fruit", "apple only");
  f.Add(5, "a", "Fruit", "banana only");
  f.Add(6, "a", "Fruit", "cherry");

  CHECK(f.Ids("a", "cafe") == Ids{1});
  CHECK(f.Ids("a", "CAFÉ") == Ids{1});
  CHECK(f.Ids("a", "pres") == Ids{1});  // "près", and prefix
  CHECK(f.Ids("a", "embed") == Ids{2});
  CHECK(f.Ids("a", "emb") == Ids{2});
  CHECK(f.Ids("a", "embeddings").empty());
  CHECK(f.Ids("a", "e").empty());  // one-letter words are not prefixes

  // Only the last word is a prefix: "embed" alone is no word of note 2, so
  // only the fallback finds it, through "models".
  auto partial = f.Hits("a", "embed models");
  REQUIRE(partial.size() == 1);
  CHECK(partial[0].doc_id == 2);
  CHECK_FALSE(partial[0].all_terms);

  auto fruit = f.Hits("a", "apple banana");
  REQUIRE(fruit.size() == 3);
  CHECK(fruit[0].doc_id == 3);
  CHECK(fruit[0].all_terms);
  CHECK(std::set<int64_t>{fruit[1].doc_id, fruit[2].doc_id} == std::set<int64_t>{4, 5});
  CHECK_FALSE(fruit[1].all_terms);
  CHECK_FALSE(fruit[2].all_terms);
  CHECK(f.Ids("a", "apple banana", 1) == Ids{3});  // k all-terms hits: no fallback
  CHECK(f.Ids("a", "banana apple kiwi").size() == 3);
}

TEST_CASE("sites are isolated; upsert replaces; remove") {
  Fixture f;
  f.Add(1, "a", "Shared title", "zebra crossing");
  f.Add(2, "b", "Shared title", "zebra crossing");
  CHECK(f.Ids("a", "zebra") == Ids{1});
  CHECK(f.Ids("b", "zebra") == Ids{2});
  CHECK(f.Ids("c", "zebra").empty());

  f.Add(1, "a", "New title", "giraffe");
  CHECK(f.Ids("a", "zebra").empty());
  CHECK(f.Ids("a", "shared").empty());
  CHECK(f.Ids("a", "giraffe") == Ids{1});

  REQUIRE(f.fts->Remove(1).ok());
  REQUIRE(f.fts->Remove(1).ok());    // absent is fine
  REQUIRE(f.fts->Remove(999).ok());
  CHECK(f.Ids("a", "giraffe").empty());
  CHECK(f.Ids("b", "zebra") == Ids{2});
  REQUIRE(f.fts->RemoveSite("b").ok());
  CHECK(f.Ids("b", "zebra").empty());

  // The caller's transaction covers our writes: a rollback undoes them.
  {
    auto tx = sqlite::Transaction::Begin(f.db.get());
    REQUIRE(tx.ok());
    REQUIRE(f.fts->Upsert(7, "a", NoteFields{"Rolled back", "", "", "", "", "", "okapi"}).ok());
  }  // rolled back
  CHECK(f.Ids("a", "okapi").empty());
}

TEST_CASE("CJK: words inside longer runs, Chinese, Japanese, Korean, mixed") {
  Fixture f;
  f.AddFiller("a", 100);
  f.Add(1, "a", "学习笔记", "我们在北京大学学习人工智能技术。");
  f.Add(2, "a", "東京", "東京都庁は新宿にあります。コンピューターの勉強をする。");
  f.Add(3, "a", "여행", "서울특별시에서 만나요");
  f.Add(4, "a", "Python入門ガイド", "初心者向け");
  f.Add(5, "a", "一", "猫");

  CHECK(f.Ids("a", "北京") == Ids{1});      // 2 characters inside a run of 15
  CHECK(f.Ids("a", "智能技") == Ids{1});    // 3
  CHECK(f.Ids("a", "人工智能") == Ids{1});  // 4
  CHECK(f.Ids("a", "京北").empty());
  CHECK(f.Ids("a", "北大").empty());        // not adjacent in the text
  CHECK(f.Ids("a", "术") == Ids{1});        // one character, last of its run
  CHECK(f.Ids("a", "猫") == Ids{5});        // one character, a run of its own
  CHECK(f.Finds("a", "工", 1));              // one character, inside a run

  CHECK(f.Ids("a", "東京") == Ids{2});
  CHECK(f.Ids("a", "都庁") == Ids{2});
  CHECK(f.Ids("a", "新宿") == Ids{2});
  CHECK(f.Ids("a", "コンピュータ") == Ids{2});
  CHECK(f.Ids("a", "ピュー") == Ids{2});
  CHECK(f.Ids("a", "東京 新宿") == Ids{2});
  CHECK(f.Ids("a", "大阪").empty());

  CHECK(f.Ids("a", "서울") == Ids{3});
  CHECK(f.Ids("a", "특별시") == Ids{3});
  CHECK(f.Ids("a", "부산").empty());

  CHECK(f.Ids("a", "python") == Ids{4});
  CHECK(f.Ids("a", "入門") == Ids{4});
  CHECK(f.Ids("a", "Python入門") == Ids{4});
  CHECK(f.Ids("a", "ＰＹＴＨＯＮ") == Ids{4});  // fullwidth
  auto h = f.Hits("a", "入門");
  REQUIRE(h.size() == 1);
  CHECK(h[0].all_terms);
}

TEST_CASE("Cyrillic and Greek") {
  Fixture f;
  f.AddFiller("a", 100);
  f.Add(1, "a", "Москва", "Привет, мир! Москва — столица России.");
  f.Add(2, "a", "Αθήνα", "Η Αθήνα είναι η πρωτεύουσα");
  CHECK(f.Ids("a", "москва") == Ids{1});
  CHECK(f.Ids("a", "МИР") == Ids{1});
  CHECK(f.Ids("a", "моск") == Ids{1});
  CHECK(f.Ids("a", "столица россии") == Ids{1});
  CHECK(f.Ids("a", "πρωτεύουσα") == Ids{2});
}

TEST_CASE("queries with FTS5 syntax never error and are taken literally") {
  Fixture f;
  f.AddFiller("a", 100);
  f.Add(1, "a", "Embedding", "near the title: column filters AND operators");
  f.Add(2, "a", "Other", "nothing relevant");
  const char* queries[] = {
      "\"", "\"\"", "\"unbalanced", "a*", "*", "**", "title:embedding", "{title}: x", "NEAR(a b)",
      "NEAR", "(", ")", "()", "-foo", "^bar", "AND", "OR NOT", "embedding OR", "NOT embedding",
      "'", "+", ":", "😀", "😀 embedding", "，", "\"embed\"", "a\"b", "x AND", "-", "^", "\\",
      "embedding*", "%", "rowid:1", "fts MATCH 'x'", "\t\n", "‽", "、。", "، ٫"};
  for (const char* q : queries) {
    auto r = f.Search("a", q, 10);
    CHECK_MESSAGE(r.ok(), q, ": ", r.status().ToString());
  }
  CHECK(f.Ids("a", "title:embedding") == Ids{1});  // words, not a column filter
  CHECK(f.Ids("a", "NEAR") == Ids{1});             // a word, not the operator
  auto and_word = f.Hits("a", "AND operators");  // "and" is also in a filler note
  REQUIRE(and_word.size() >= 1);
  CHECK(and_word[0].doc_id == 1);
  CHECK(and_word[0].all_terms);
  CHECK(f.Ids("a", "😀 embedding") == Ids{1});     // a term SQLite drops does not block AND
  auto emoji = f.Hits("a", "😀 embedding");
  REQUIRE(emoji.size() == 1);
  CHECK(emoji[0].all_terms);
  CHECK(f.Ids("a", "-embedding") == Ids{1});       // not a negation
  CHECK(f.Ids("a", "").empty());
  CHECK(f.Ids("a", "?! ...").empty());
}

TEST_CASE("limits and malformed input") {
  Fixture f;
  f.Add(1, "a", "t", "word");
  auto big = f.Search("a", std::string(kMaxQueryBytes + 1, 'x'), 10);
  CHECK(big.status().code() == Code::kTooLarge);
  CHECK(f.Search("a", std::string(kMaxQueryBytes, 'x'), 10).ok());
  auto bad = f.Search("a", "wo\xff", 10);
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(f.fts->Upsert(2, "a", NoteFields{"t", "", "", "", "", "", "bad \xc3"}).code() == Code::kInvalidArgument);
  CHECK(f.fts->Upsert(2, "a", NoteFields{"\xed\xa0\x80", "", "", "", "", "", "ok"}).code() == Code::kInvalidArgument);
  CHECK(f.fts->Upsert(2, "a", NoteFields{"t", "\xff", "", "", "", "", "ok"}).code() == Code::kInvalidArgument);
  std::string many;
  for (int i = 0; i < 40; ++i) many += "w" + std::to_string(i) + " ";
  CHECK(QueryTerms(many).size() == kMaxQueryTerms);
  CHECK(f.Search("a", many + " word", 10).ok());
  CHECK(f.Ids("a", "word", 1000000) == Ids{1});  // k is capped, not an error
  // Nesting in the query is text, never FTS5 syntax to recurse on (issue 22).
  for (std::string_view unit : {"(", "((a ", "\"(", "NEAR(", "^[", "[[", "{"}) {
    std::string nested;
    while (nested.size() + unit.size() <= kMaxQueryBytes) nested += unit;
    auto r = f.Search("a", nested, 10);
    CHECK_MESSAGE(r.ok(), unit, ": ", r.status().ToString());
  }
}

TEST_CASE("segmentation and match expressions") {
  CHECK(SegmentForIndex("東京都庁") == "東京 京都 都庁 庁");
  CHECK(SegmentForIndex("猫") == "猫");
  CHECK(SegmentForIndex("Python入門、ガイド") == "Python 入門 門 ガイ イド ド");
  CHECK(SegmentForIndex("ＡＢＣ１２３") == "ABC123");
  CHECK(SegmentForIndex("a_b  c--d") == "a b c d");
  CHECK(SegmentForIndex("café") == "café");

  auto t = QueryTerms("Foo \"bar\" FOO 東京 x NEAR(y) 猫 embed");
  REQUIRE(t.size() == 8);
  CHECK(t[0].text == "Foo");
  CHECK(t[0].folded == "foo");
  CHECK(t[2].cjk);
  CHECK(t[7].prefix);
  CHECK_FALSE(t[0].prefix);
  auto groups = [](std::span<const QueryTerm> terms) {
    std::vector<WordGroup> g;
    for (const QueryTerm& q : terms) g.push_back({Alternative{q.text, q.prefix, q.cjk, 1.0}});
    return g;
  };
  CHECK(MatchExpression(groups(t), true) ==
        "\"Foo\" AND \"bar\" AND \"東京\" AND \"x\" AND \"NEAR\" AND \"y\" AND \"猫\"* AND \"embed\"*");
  CHECK(MatchExpression(groups(QueryTerms("東京都 a")), false) == "\"東京 京都\" OR \"a\"");
  CHECK(MatchExpression({}, true).empty());
  // QueryTerms never yields a '"', but MatchExpression quotes it anyway.
  std::vector<WordGroup> quote{{Alternative{"a\"b", true, false, 1.0}, Alternative{"c", false, false, 0.9}}};
  CHECK(MatchExpression(quote, true) == "(\"a\"\"b\"* OR \"c\")");
  // Repeating a word at the end makes its first occurrence the prefix term.
  auto r = QueryTerms("embed models Embed");
  REQUIRE(r.size() == 2);
  CHECK(r[0].prefix);
  CHECK_FALSE(r[1].prefix);
  CHECK(QueryTerms("Émile ŁÓDŹ Ωμέγα ЖУК")[1].folded == "łodz");
  CHECK(QueryTerms("Émile ŁÓDŹ Ωμέγα ЖУК")[0].folded == "emile");
  CHECK(QueryTerms("Émile ŁÓDŹ Ωμέγα ЖУК")[2].folded == "ωμέγα");
  CHECK(QueryTerms("Émile ŁÓDŹ Ωμέγα ЖУК")[3].folded == "жук");
}

TEST_CASE("snippet: marks terms, escapes HTML, stays valid UTF-8") {
  std::string text = "<script>alert('x')</script> The Embedding of a café & more \"quotes\".";
  std::string s = MakeSnippet(text, "embedding CAFE");
  CHECK(s == "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; The <mark>Embedding</mark> of a "
             "<mark>café</mark> &amp; more &quot;quotes&quot;.");
  CHECK(IsValidUtf8(s));
  CHECK(MakeSnippet("Embeddings everywhere", "embed") == "<mark>Embeddings</mark> everywhere");
  CHECK(MakeSnippet("embed embedded", "embed models") == "<mark>embed</mark> embedded");
  CHECK(MakeSnippet("", "x").empty());
  CHECK(MakeSnippet("text", "x", 0).empty());
  CHECK(MakeSnippet("some text here", "text", SIZE_MAX) == "some <mark>text</mark> here");
  CHECK(MakeSnippet("  line one\n\n\tline   two  ", "two") == "line one line <mark>two</mark>");
  CHECK(MakeSnippet("bad \xff byte", "byte") == "bad \xef\xbf\xbd <mark>byte</mark>");
  // Decomposed accents stay with their letter.
  CHECK(MakeSnippet("un cafe\xcc\x81 noir", "café") == "un <mark>cafe\xcc\x81</mark> noir");
}

TEST_CASE("snippet: CJK") {
  CHECK(MakeSnippet("我们在北京大学学习人工智能技术。", "人工智能") ==
        "我们在北京大学学习<mark>人工智能</mark>技术。");
  // Overlapping terms merge into one mark.
  CHECK(MakeSnippet("東京都庁は新宿", "東京 京都") == "<mark>東京都</mark>庁は新宿");
  CHECK(MakeSnippet("서울특별시에서 만나요", "특별시") == "서울<mark>특별시</mark>에서 만나요");
  std::string longer;
  for (int i = 0; i < 50; ++i) longer += "日本語の文章です。";
  longer += "ここに東京タワーがあります。";
  for (int i = 0; i < 50; ++i) longer += "日本語の文章です。";
  std::string s = MakeSnippet(longer, "東京タワー", 20);
  CHECK(s.find("<mark>東京タワー</mark>") != std::string::npos);
  CHECK(s.rfind("…", 0) == 0);
  CHECK(s.size() >= 3);
  CHECK(s.substr(s.size() - 3) == "…");
  CHECK(IsValidUtf8(s));
}

namespace {

// The snippet without tags and ellipses, entities decoded.
std::string PlainOf(std::string s) {
  for (const char* tag : {"<mark>", "</mark>", "…"}) {
    for (size_t p; (p = s.find(tag)) != std::string::npos;) s.erase(p, std::string_view(tag).size());
  }
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    size_t semi = s.find(';', i);
    std::string e = s.substr(i, semi - i + 1);
    out.push_back(e == "&amp;" ? '&' : e == "&lt;" ? '<' : e == "&gt;" ? '>' : e == "&quot;" ? '"' : '\'');
    i = semi;
  }
  return out;
}

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = DecodeUtf8(s, &i);
    if (cp < 0x300 || cp > 0x36F) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("snippet: window selection in long text") {
  const std::vector<std::string> filler = {"lorem", "ipsum", "dolor", "sit", "amet", "consectetur"};
  std::string text;
  for (int i = 0; i < 400; ++i) {
    if (i == 20) text += "alpha ";
    if (i == 300) text += "gamma alpha noise beta ";
    text += filler[i % filler.size()] + " ";
  }
  std::string s = MakeSnippet(text, "alpha beta gamma", 120);
  CHECK(s.find("<mark>alpha</mark>") != std::string::npos);
  CHECK(s.find("<mark>beta</mark>") != std::string::npos);
  CHECK(s.find("<mark>gamma</mark>") != std::string::npos);
  CHECK(s.rfind("…", 0) == 0);
  CHECK(s.substr(s.size() - 3) == "…");
  std::string plain = PlainOf(s);
  CHECK(CodePoints(plain) <= 120);
  CHECK(CodePoints(plain) >= 100);  // the window is used, not just the matches
  // Cut at word boundaries: every word is whole.
  std::set<std::string> words(filler.begin(), filler.end());
  words.insert({"alpha", "beta", "gamma", "noise"});
  size_t pos = 0;
  while (pos < plain.size()) {
    size_t sp = plain.find(' ', pos);
    if (sp == std::string::npos) sp = plain.size();
    std::string w = plain.substr(pos, sp - pos);
    CHECK_MESSAGE(words.count(w) == 1, "partial word '", w, "' in ", s);
    pos = sp + 1;
  }

  // No match: the start of the text, cut at a word boundary.
  std::string none = MakeSnippet(text, "zzz", 30);
  CHECK(none == "lorem ipsum dolor sit amet…");
  // A single word longer than the window is cut inside, at a code point.
  std::string word(100, 'x');
  std::string cut = MakeSnippet("é" + word, "none", 10);
  CHECK(cut == "é" + std::string(9, 'x') + "…");
}

TEST_CASE("snippet: random inputs give valid UTF-8 and balanced marks") {
  const std::vector<std::string> pieces = {
      "a", "b", "ab", "café", "e\xcc\x81", "東", "京", "都", "서울", " ", "\n", "<", ">", "&", "\"", "'",
      "\xff", "\xe6\x9d", "\xc3", "mark", "<mark>", "</mark>", "ＡＢ", "😀", "Ж", "…", "_", "\0"};
  std::mt19937 rng(12345);
  auto random_text = [&](size_t max_pieces) {
    std::string s;
    size_t n = rng() % max_pieces;
    for (size_t i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
    return s;
  };
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = random_text(80);
    std::string query = random_text(6);
    size_t max_chars = 1 + rng() % 40;
    std::string s = MakeSnippet(text, query, max_chars);
    REQUIRE_MESSAGE(IsValidUtf8(s), "text=", text, " query=", query);
    // Tags balanced and unnested; no other '<' or '>'.
    bool open = false;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '>') FAIL("stray '>' in ", s);
      if (s[i] != '<') continue;
      if (s.compare(i, 6, "<mark>") == 0) {
        REQUIRE_MESSAGE(!open, s);
        open = true;
        i += 5;
      } else if (s.compare(i, 7, "</mark>") == 0) {
        REQUIRE_MESSAGE(open, s);
        open = false;
        i += 6;
      } else {
        FAIL("stray '<' in ", s);
      }
    }
    REQUIRE_MESSAGE(!open, s);
    std::string plain = PlainOf(s);
    CHECK_MESSAGE(CodePoints(plain) <= max_chars, s);  // "…" of the text itself is stripped too
  }
}

TEST_CASE("any-word search over words most notes hold scores only the notes holding the rarest ones") {
  Fixture f;
  f.Add(1, "a", "Common", "common words everywhere and a rare zeppelin");
  f.Add(2, "a", "Common too", "common words everywhere");
  f.Add(3, "a", "Zeppelin", "zeppelin history");
  f.AddFiller("a", 100);
  QueryPlan plan = PlanQuery("common zeppelin", {});
  REQUIRE(plan.groups.size() == 2);
  // Frequencies as a large site would have them: "common" in 9,000 notes.
  plan.df = {9000, 2};
  plan.idf = {Idf(9000, 10000), Idf(2, 10000)};
  auto selected = SearchText(f.fts.get(), "a", plan, 10, RankWeights{}, false);
  REQUIRE(selected.ok());
  std::vector<int64_t> ids;
  for (const TextHit& h : *selected) ids.push_back(h.doc_id);
  CHECK(ids == Ids{3, 1});  // note 2 holds only the common word: not scored
  // Within budget every note holding any word is scored, in the same order.
  plan.df = {3, 2};
  auto all = SearchText(f.fts.get(), "a", plan, 10, RankWeights{}, false);
  REQUIRE(all.ok());
  ids.clear();
  for (const TextHit& h : *all) ids.push_back(h.doc_id);
  CHECK(ids == Ids{3, 1, 2});
  CHECK((*all)[0].score == doctest::Approx((*selected)[0].score));  // the selector's phrases count nothing
  // Even the rarest word is in most notes: the notes holding every word come first.
  plan.df = {9000, 8000};
  auto every = SearchText(f.fts.get(), "a", plan, 1, RankWeights{}, false);
  REQUIRE(every.ok());
  REQUIRE(every->size() == 1);
  CHECK((*every)[0].doc_id == 1);  // the one note with both words, though "Zeppelin" has the title
  CHECK((*every)[0].all_terms);
}
