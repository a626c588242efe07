// A private site's pages (issue 29): the sign-in page, noindex, robots.txt
// and the listings without RSS or sitemap.
#include <doctest/doctest.h>

#include <string>

#include "folio/site/i18n.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "folio/site/signin_page.h"
#include "folio/site/vault.h"

using namespace folio::site;

namespace {

bool Has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("sign-in page: a post form to the URL asked for, the name field only for named readers") {
  SiteInfo site;
  site.name = "Ann's <Notes>";
  site.publish_css_url = "/assets/publish.0123.css";
  const std::string page = AssembleSignInPage(site, /*named_users=*/false);
  CHECK(Has(page, "<meta name=\"robots\" content=\"noindex, nofollow\">"));
  CHECK(Has(page, "Ann&#39;s &lt;Notes&gt;"));
  CHECK(!Has(page, "<Notes>"));
  CHECK(Has(page, "<form method=\"post\" class=\"signin-form\">"));
  CHECK(!Has(page, "action="));
  CHECK(Has(page, "name=\"password\""));
  CHECK(!Has(page, "name=\"name\""));
  CHECK(Has(page, "<p class=\"signin-error\" hidden>"));
  CHECK(Has(page, "<button type=\"submit\">Sign in</button>"));
  CHECK(Has(page, StyleSheetUrl()));
  CHECK(!Has(page, "publish.0123.css"));  // the vault's CSS needs a session
  CHECK(!Has(page, "<script"));
  const std::string named = AssembleSignInPage(site, /*named_users=*/true);
  CHECK(Has(named, "name=\"name\""));
  CHECK(Has(page, "<html lang=\"en\">"));
}

TEST_CASE("sign-in page: in the site's language, no English word of the table left") {
  const Strings& en = StringsFor("en");
  const std::string_view english[] = {en.signin_title, en.signin_intro, en.signin_name, en.signin_password,
                                      en.signin_submit, en.signin_wrong};
  for (const char* lang : {"ru", "ja", "zh-Hans"}) {
    CAPTURE(std::string(lang));
    SiteInfo site;
    site.name = "Notes";
    site.lang = lang;
    const std::string page = AssembleSignInPage(site, /*named_users=*/true);
    CHECK(Has(page, "<html lang=\"" + std::string(lang) + "\">"));
    const Strings& t = StringsFor(lang);
    for (std::string_view w : {t.signin_title, t.signin_intro, t.signin_name, t.signin_password, t.signin_submit,
                               t.signin_wrong}) {
      CHECK(Has(page, std::string(w)));
    }
    for (std::string_view w : english) CHECK(!Has(page, std::string(w)));
  }
  SiteInfo ru;
  ru.lang = "ru";
  const std::string ru_page = AssembleSignInPage(ru, true);
  CHECK(Has(ru_page, "<button type=\"submit\">Войти</button>"));
  CHECK(Has(ru_page, "Пароль <input type=\"password\""));
  SiteInfo bad;
  bad.lang = "\"><script>";
  CHECK(Has(AssembleSignInPage(bad, false), "<html lang=\"en\">"));
}

TEST_CASE("private site: a sign-out button in every page's header, in the site's language") {
  NotePage note;
  note.url = "/note";
  note.title = "Note";
  note.body_html = "<p>Hi</p>";
  CHECK(!Has(AssembleNotePage(note), "/_/signout"));
  note.site.private_site = true;
  note.site.lang = "de";
  const std::string page = AssembleNotePage(note);
  CHECK(Has(page, "<form class=\"site-signout\" method=\"post\" action=\"/_/signout\">"
                  "<button type=\"submit\">Abmelden</button></form>"));
  CHECK(page.find("site-signout") < page.find("</header>"));
}

TEST_CASE("private site: noindex, nofollow on every page, robots disallow, no RSS and no sitemap") {
  Vault v;
  NoteMeta m;
  m.path = "Folder/Note.md";
  m.title = "Note";
  m.updated_ms = 1000;
  (void)v.Apply({m}, {});
  SiteInfo open;
  SiteInfo closed;
  closed.private_site = true;
  auto pub = BuildListings(v, open);
  auto priv = BuildListings(v, closed);
  CHECK(pub.count("/rss.xml") == 1);
  CHECK(pub.count("/sitemap.xml") == 1);
  CHECK(priv.count("/rss.xml") == 0);
  CHECK(priv.count("/sitemap.xml") == 0);
  REQUIRE(priv.count("/robots.txt") == 1);
  CHECK(priv.at("/robots.txt").Render() == "User-agent: *\nDisallow: /\n");
  CHECK(priv.at("/robots.txt").fingerprint != pub.at("/robots.txt").fingerprint);
  CHECK(Has(pub.at("/robots.txt").Render(), "Allow: /"));
  REQUIRE(priv.count("/") == 1);
  const std::string home = priv.at("/").Render();
  CHECK(Has(home, "<meta name=\"robots\" content=\"noindex, nofollow\">"));
  CHECK(!Has(home, "application/rss+xml"));
  const std::string public_home = pub.at("/").Render();
  CHECK(!Has(public_home, "nofollow"));
  CHECK(Has(public_home, "application/rss+xml"));

  NotePage note;
  note.site = closed;
  note.url = "/folder/note";
  note.title = "Note";
  note.body_html = "<p>Hi</p>";
  CHECK(Has(AssembleNotePage(note), "<meta name=\"robots\" content=\"noindex, nofollow\">"));
}
