// Issue 29: the site's language. Every key in every table, plural rules,
// dates per language, <html lang> from the site or the note, and pages in a
// language showing none of the English table's words.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "folio/site/dates.h"
#include "folio/site/i18n.h"
#include "folio/site/layout.h"
#include "folio/site/search_page.h"

namespace folio::site {
namespace {

bool Has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

size_t Forms(PluralRule rule) {
  switch (rule) {
    case PluralRule::kSlavic: return 3;
    case PluralRule::kNone: return 1;
    default: return 2;
  }
}

size_t Count(std::string_view s, char c) {
  size_t n = 0;
  for (char x : s) n += x == c;
  return n;
}

TEST_CASE("i18n: every key exists, non-empty, in every shipped language, plurals with their rule's forms") {
  std::set<std::string_view> codes;
  for (const Strings* s : AllStrings()) {
    codes.insert(s->code);
    for (const StringKey& k : StringKeys()) {
      std::string_view v = s->*k.field;
      CHECK_MESSAGE(!v.empty(), s->code, " lacks ", k.name);
      if (k.plural) {
        CHECK_MESSAGE(Count(v, '|') + 1 == Forms(s->plural), s->code, " ", k.name, ": ", v);
        CHECK_MESSAGE(Has(std::string(v), "{n}"), s->code, " ", k.name);
      } else {
        CHECK_MESSAGE(Count(v, '|') == 0, s->code, " ", k.name);
      }
    }
    for (std::string_view m : s->months) CHECK_MESSAGE(!m.empty(), s->code, " lacks a month");
  }
  CHECK(codes == std::set<std::string_view>{"en", "de", "fr", "es", "ru", "ja", "zh", "pt"});
}

// The site script's tables (folio.js, between "i18n:begin" and
// "i18n:end"): one block per language, "key: \"value\"," per line.
std::map<std::string, std::map<std::string, std::string>> ScriptTables() {
  const std::string& js = SiteScript();
  size_t at = js.find("// i18n:begin"), end = js.find("// i18n:end");
  REQUIRE(at != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::map<std::string, std::map<std::string, std::string>> out;
  std::string lang;
  while (at < end) {
    size_t eol = js.find('\n', at);
    std::string line = js.substr(at, eol - at);
    at = eol + 1;
    line.erase(0, line.find_first_not_of(' '));
    size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon), value = line.substr(colon + 2);
    if (value == "{") {
      lang = key;
      out[lang];
    } else if (!lang.empty() && value.size() >= 2 && value.front() == '"') {
      out[lang][key] = value.substr(1, value.rfind('"') - 1);
    }
  }
  return out;
}

TEST_CASE("i18n: folio.js has a table per shipped language with the same keys, none empty") {
  auto tables = ScriptTables();
  REQUIRE(tables.count("en") == 1);
  CHECK(tables.size() == AllStrings().size());
  for (const Strings* s : AllStrings()) {
    auto it = tables.find(std::string(s->code));
    REQUIRE_MESSAGE(it != tables.end(), s->code);
    std::set<std::string> keys, en_keys;
    for (const auto& [k, v] : it->second) {
      keys.insert(k);
      CHECK_MESSAGE(!v.empty(), s->code, " ", k);
      if (k == "notes" || k == "links" || k == "more") {
        CHECK_MESSAGE(Count(v, '|') + 1 == Forms(s->plural), s->code, " ", k);
      }
    }
    for (const auto& [k, v] : tables["en"]) en_keys.insert(k);
    CHECK_MESSAGE(keys == en_keys, s->code);
  }
}

TEST_CASE("i18n: plural forms per CLDR") {
  const Strings& ru = StringsFor("ru");
  CHECK(Plural(ru, "{n} минута|{n} минуты|{n} минут", 1) == "1 минута");
  CHECK(Plural(ru, "{n} минута|{n} минуты|{n} минут", 2) == "2 минуты");
  CHECK(Plural(ru, "{n} минута|{n} минуты|{n} минут", 5) == "5 минут");
  CHECK(Plural(ru, "{n} минута|{n} минуты|{n} минут", 21) == "21 минута");
  CHECK(Plural(ru, "{n} минута|{n} минуты|{n} минут", 11) == "11 минут");
  CHECK(Plural(ru, "{n} минута|{n} минуты|{n} минут", 12) == "12 минут");
  CHECK(Plural(ru, "{n} минута|{n} минуты|{n} минут", 22) == "22 минуты");
  CHECK(Plural(ru, "{n} минута|{n} минуты|{n} минут", 0) == "0 минут");
  CHECK(Plural(ru, "{n} минута|{n} минуты|{n} минут", 111) == "111 минут");
  CHECK(Plural(ru, ru.notes, 3) == "3 заметки");
  const Strings& en = StringsFor("en");
  CHECK(Plural(en, en.notes, 1) == "1 note");
  CHECK(Plural(en, en.notes, 0) == "0 notes");
  CHECK(Plural(en, en.notes, 2) == "2 notes");
  CHECK(Plural(StringsFor("de"), StringsFor("de").reading, 1) == "1 Minute Lesezeit");
  CHECK(Plural(StringsFor("de"), StringsFor("de").reading, 2) == "2 Minuten Lesezeit");
  CHECK(Plural(StringsFor("fr"), StringsFor("fr").notes, 0) == "0 note");  // fr: 0 and 1 are singular
  CHECK(Plural(StringsFor("fr"), StringsFor("fr").notes, 1) == "1 note");
  CHECK(Plural(StringsFor("fr"), StringsFor("fr").notes, 2) == "2 notes");
  CHECK(Plural(StringsFor("ja"), StringsFor("ja").notes, 1) == "1 件のノート");
  CHECK(Plural(StringsFor("zh"), StringsFor("zh").notes, 7) == "7 篇笔记");
}

TEST_CASE("i18n: language tags, the page's language and the table it picks") {
  for (const char* good : {"en", "de", "pt-BR", "zh-Hans", "zh-Hans-CN", "sr-Latn", "es-419", "RU"}) {
    CHECK_MESSAGE(IsLanguageTag(good), good);
  }
  for (const char* bad : {"", "e", "english", "en_US", "en-", "-en", "en--us", "de\"x", "en-toolongsubtag", "日本"}) {
    CHECK_MESSAGE(!IsLanguageTag(bad), bad);
  }
  CHECK(PageLang("ru", "de") == "ru");
  CHECK(PageLang("", "de") == "de");
  CHECK(PageLang("not a tag", "pt-BR") == "pt-BR");
  CHECK(PageLang("", "") == "en");
  CHECK(PageLang("x\"", "bad tag") == "en");
  CHECK(StringsFor("pt-BR").code == "pt");
  CHECK(StringsFor("zh-Hans").code == "zh");
  CHECK(StringsFor("RU").code == "ru");
  CHECK(StringsFor("nl").code == "en");  // not shipped: English
  CHECK(StringsFor("").code == "en");
}

TEST_CASE("i18n: dates per language, the datetime attribute unchanged") {
  const std::map<std::string, std::string> want = {
      {"en", "4 April 2024"},       {"de", "4. April 2024"},      {"fr", "4 avril 2024"},
      {"es", "4 de abril de 2024"}, {"pt", "4 de abril de 2024"}, {"ru", "4 апреля 2024 г."},
      {"ja", "2024年4月4日"},       {"zh", "2024年4月4日"},       {"nl", "4 April 2024"}};
  for (const auto& [lang, readable] : want) {
    auto d = ShowDate("2024-04-04T10:30", lang);
    REQUIRE(d);
    CHECK_MESSAGE(d->readable == readable, lang);
    CHECK(d->machine == "2024-04-04T10:30");
  }
  CHECK(ShowDate("2024-01-31", "ru")->readable == "31 января 2024 г.");
  CHECK(ShowDate("2024-04-04", "pt-BR")->readable == "4 de abril de 2024");
  std::string out;
  AppendTimeElement("2024-12-01 08:00:00Z", "fr", &out);
  CHECK(out == "<time datetime=\"2024-12-01T08:00:00Z\">1 décembre 2024</time>");
}

NotePage RichNote() {
  NotePage p;
  p.url = "/a/n";
  p.title = "N";
  p.body_html = "<p>x</p>";
  p.updated = "2024-04-04";
  p.words = 1000;
  p.toc = {{2, "One", "one"}, {2, "Two", "two"}};
  p.breadcrumbs = {{"A", "/a/", ""}};
  p.backlinks = {{"B", "/b", ""}};
  p.backlinks_total = 3;
  p.related = {{"C", "/c", ""}};
  return p;
}

// English words that must not appear on a page in another language (as
// whole strings, in the places folio writes them).
const char* const kEnglishWords[] = {">Backlinks<", "min read", "Updated ", ">On this page<", "placeholder=\"Search notes\"",
                                     ">Related notes<", "and 2 more", ">Explorer<", "Published with folio", ">Recent<"};

TEST_CASE("i18n: a note page takes <html lang> from its frontmatter, else the site; a ru page has no English word") {
  NotePage p = RichNote();
  std::string en = AssembleNotePage(p);
  CHECK(Has(en, "<html lang=\"en\">"));
  for (const char* w : kEnglishWords) CHECK_MESSAGE(Has(en, w), w);  // the list is what English pages say

  p.site.lang = "de";
  std::string de = AssembleNotePage(p);
  CHECK(Has(de, "<html lang=\"de\">"));
  CHECK(Has(de, ">Rückverweise<"));
  CHECK(Has(de, "Aktualisiert <time datetime=\"2024-04-04\">4. April 2024</time>"));

  p.lang = "ru";  // the note's own language wins over the site's
  std::string ru = AssembleNotePage(p);
  CHECK(Has(ru, "<html lang=\"ru\">"));
  CHECK(Has(ru, ">Обратные ссылки<"));
  CHECK(Has(ru, "5 минут чтения"));
  CHECK(Has(ru, "и ещё 2"));
  CHECK(Has(ru, "Обновлено <time datetime=\"2024-04-04\">4 апреля 2024 г.</time>"));
  CHECK(Has(ru, "placeholder=\"Поиск по заметкам\""));
  for (const char* w : kEnglishWords) CHECK_MESSAGE(!Has(ru, w), w);

  p.lang = "pt-BR";  // kept as written; the pt table
  std::string pt = AssembleNotePage(p);
  CHECK(Has(pt, "<html lang=\"pt-BR\">"));
  CHECK(Has(pt, ">Referências<"));

  p.lang = "\"><script>";  // no tag: the site's
  CHECK(Has(AssembleNotePage(p), "<html lang=\"de\">"));
  p.lang = "nl";  // a tag folio has no words for: English words, the tag kept
  std::string nl = AssembleNotePage(p);
  CHECK(Has(nl, "<html lang=\"nl\">"));
  CHECK(Has(nl, ">Backlinks<"));
}

TEST_CASE("i18n: listings, the 404 and 410 pages, the graph and search pages in the site's language") {
  SiteInfo site;
  site.name = "S";
  site.lang = "ja";
  std::string nf = Assemble404Page(site);
  CHECK(Has(nf, "<html lang=\"ja\">"));
  CHECK(Has(nf, "ページが見つかりません"));
  CHECK(!Has(nf, "Page not found"));
  CHECK(LangFromPage(nf) == "ja");
  CHECK(LangFromPage(Assemble404Page("S")) == "en");
  CHECK(LangFromPage("<p>no page</p>") == "");
  CHECK(Has(AssembleGonePage(site), "ページは削除されました"));
  std::string graph = AssembleGraphPage(site);
  CHECK(Has(graph, "<a href=\"/_/tags\">タグ</a>"));
  CHECK(!Has(graph, "The graph is drawn"));

  ListingPage l;
  l.site = site;
  l.site.lang = "ru";
  l.url = "/_/recent";
  l.title = "T";
  l.items = {{"A", "/a", ""}};
  l.page = 2;
  l.pages = 3;
  std::string listing = AssembleListingPage(l);
  CHECK(Has(listing, "Страница 2 из 3"));
  CHECK(Has(listing, "← Новее"));
  CHECK(!Has(listing, "Older"));

  SearchPage sp;
  sp.site = site;
  sp.site.lang = "ru";
  sp.query = "кот";
  sp.results = {{"A", "/a", "", 1, "a.md"}, {"B", "/b", "", 1, "b.md"}};
  std::string search = AssembleSearchPage(sp);
  CHECK(Has(search, "<html lang=\"ru\">"));
  CHECK(Has(search, "2 результата по запросу <q>кот</q>"));
  CHECK(Has(search, "<title>Поиск: кот · S</title>"));
  sp.results.clear();
  CHECK(Has(AssembleSearchResultsFragment(sp), "Ничего не найдено по запросу <q>кот</q>."));
  sp.query = "<b>";
  sp.site.lang = "en";
  CHECK(Has(AssembleSearchResultsFragment(sp), "No results for <q>&lt;b&gt;</q>."));
}

TEST_CASE("i18n: a new site language changes the layout fingerprint") {
  SiteInfo site;
  site.name = "S";
  CHECK(LayoutFingerprint(site) == LayoutFingerprint("S"));
  site.lang = "fr";
  CHECK(LayoutFingerprint(site) != LayoutFingerprint("S"));
}

}  // namespace
}  // namespace folio::site
