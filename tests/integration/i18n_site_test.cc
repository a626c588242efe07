// Issue 29, the site's language: notes whose frontmatter says `lang: ru` or
// `lang: ja` are served with that <html lang> and folio's words in that
// language (backlinks, reading time, dates, the search box), after a real
// push. Real nats-server, folio-ingest and folio-edge.
#include <doctest/doctest.h>

#include <string>

#include "cluster.h"

using namespace folio;
using namespace folio::it;

namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("i18n: a ru note and a ja note are served in their language, an English note stays English") {
  Cluster c;
  auto push = c.Push(PushBody({
      {"Russian.md", "---\nlang: ru\nupdated: 2024-04-04\n---\n# Russian\n\nСм. [[Japanese]] и [[Plain]].\n"},
      {"Japanese.md", "---\nlang: ja\nupdated: 2024-04-04\n---\n# Japanese\n\n[[Russian]] を見てください。\n"},
      {"Plain.md", "---\nupdated: 2024-04-04\n---\n# Plain\n\nBack to [[Russian]].\n"},
  }));
  INFO(push.body, c.Logs());
  REQUIRE(push.status == 200);

  auto ru = c.WaitForPage("/russian", 200, "Обратные ссылки");
  REQUIRE(ru.status == 200);
  CHECK(Has(ru.body, "<html lang=\"ru\">"));
  CHECK(Has(ru.body, "<h2>Обратные ссылки</h2>"));
  CHECK(Has(ru.body, "Обновлено <time datetime=\"2024-04-04\">4 апреля 2024 г.</time>"));
  CHECK(Has(ru.body, "1 минута чтения"));
  CHECK(Has(ru.body, "placeholder=\"Поиск по заметкам\""));
  for (const char* english : {">Backlinks<", "min read", "Updated ", "placeholder=\"Search notes\"", ">Explorer<"}) {
    CHECK_MESSAGE(!Has(ru.body, english), english);
  }

  auto ja = c.WaitForPage("/japanese", 200, "バックリンク");
  REQUIRE(ja.status == 200);
  CHECK(Has(ja.body, "<html lang=\"ja\">"));
  CHECK(Has(ja.body, "<h2>バックリンク</h2>"));
  CHECK(Has(ja.body, "更新日 <time datetime=\"2024-04-04\">2024年4月4日</time>"));
  CHECK(Has(ja.body, "placeholder=\"ノートを検索\""));
  CHECK(!Has(ja.body, ">Backlinks<"));

  auto plain = c.WaitForPage("/plain", 200, "Backlinks");
  CHECK(Has(plain.body, "<html lang=\"en\">"));
  CHECK(Has(plain.body, "Updated <time datetime=\"2024-04-04\">4 April 2024</time>"));

  // A tag that is no language is not written into the page: the site's ("en").
  REQUIRE(c.Push(PushBody({{"Odd.md", "---\nlang: \"x\\\"><b>\"\n---\n# Odd\n\nText.\n"}})).status == 200);
  auto odd = c.WaitForPage("/odd", 200);
  CHECK(Has(odd.body, "<html lang=\"en\">"));
}
