// A private site's pages (issue 29): the sign-in page, noindex, robots.txt
// and the listings without RSS or sitemap.
#include <doctest/doctest.h>

#include <string>

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
  SignInStrings de;
  de.submit = "Anmelden";
  CHECK(Has(AssembleSignInPage(site, false, de), ">Anmelden</button>"));
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
