#include "site_table.h"

#include <doctest/doctest.h>

#include "folio/site/layout.h"

using namespace folio;
using namespace folio::edge;

namespace {
std::shared_ptr<const Page> PageWithBody(std::string_view url, std::string_view body) {
  return PageForTest(url, body);
}
std::string BodyAt(SiteTables& t, std::string_view host, const std::string& url) {
  const PageTable* pages = t.Find(host);
  if (!pages) return "<no site>";
  auto it = pages->find(url);
  return it == pages->end() ? "<none>" : it->second->Identity().value();
}
}  // namespace

TEST_CASE("site tables: the Host header picks the site; unknown hosts get the default") {
  SiteTables t("default");
  t.Put("default", PageWithBody("/", "home of default"));
  t.Put("a", PageWithBody("/", "home of a"));
  t.Put("b", PageWithBody("/", "home of b"));
  t.Put("b", PageWithBody("/only-b", "b page"));
  CHECK(t.pages() == 4);
  t.SetHosts("a", {"a.example"});
  t.SetHosts("b", {"b.example", "www.b.example"});
  CHECK(BodyAt(t, "a.example", "/") == "home of a");
  CHECK(BodyAt(t, "A.Example:8081", "/") == "home of a");
  CHECK(BodyAt(t, "b.example:8081", "/only-b") == "b page");
  CHECK(BodyAt(t, "www.b.example.", "/") == "home of b");
  CHECK(BodyAt(t, "a.example", "/only-b") == "<none>");
  CHECK(BodyAt(t, "", "/") == "home of default");
  CHECK(BodyAt(t, "unknown.example", "/") == "home of default");
  CHECK(BodyAt(t, "bad host!", "/") == "home of default");
  CHECK(BodyAt(t, std::string(1000, 'a'), "/") == "home of default");
  CHECK(t.SiteOf("[::1]:8081") == "default");
}

TEST_CASE("site tables: hosts move, are withdrawn, and pages are per site") {
  SiteTables t("default");
  t.SetHosts("a", {"a.example", "x.example"});
  CHECK(t.SiteOf("x.example") == "a");
  t.SetHosts("a", {"a.example"});  // a replaced its hosts
  CHECK(t.SiteOf("x.example") == "default");
  t.SetHosts("b", {"a.example"});  // b took a host over
  CHECK(t.SiteOf("a.example") == "b");
  t.RemoveHosts("a");              // does not withdraw b's host
  CHECK(t.SiteOf("a.example") == "b");
  t.RemoveHosts("b");
  CHECK(t.SiteOf("a.example") == "default");
  CHECK(t.Find("a.example") == nullptr);  // default has no pages yet

  t.Put("a", PageWithBody("/p", "1"));
  t.Put("a", PageWithBody("/p", "2"));
  CHECK(t.pages() == 1);
  CHECK(t.page_bytes() == PageWithBody("/p", "2")->body_bytes());
  t.SetHosts("a", {"a.example"});
  CHECK(BodyAt(t, "a.example", "/p") == "2");
  t.Erase("b", "/p");
  CHECK(t.pages() == 1);
  t.Erase("a", "/p");
  CHECK(t.pages() == 0);
  CHECK(t.page_bytes() == 0);
  CHECK(BodyAt(t, "a.example", "/p") == "<none>");
}

TEST_CASE("site tables: a site's display name comes from its 404 page, else its record's title") {
  SiteTables t("default");
  CHECK(t.NameOf("default") == "default");
  t.SetTitle("a", "Site A");
  CHECK(t.NameOf("a") == "Site A");
  t.Put("a", PageWithBody(kNotFoundKey, "<header class=\"site-header\"><a class=\"site-name\" href=\"/\">A &amp; co</a>"));
  CHECK(t.NameOf("a") == "A & co");
  t.Erase("a", std::string(kNotFoundKey));
  CHECK(t.NameOf("a") == "Site A");
  t.SetTitle("a", "");
  CHECK(t.NameOf("a") == "a");
}

TEST_CASE("site tables: who may read a site comes from its record; public sites without readers have none") {
  bus::SiteAccess open;
  CHECK(MakeSiteAuth("a", open) == nullptr);
  bus::SiteAccess closed;
  closed.private_site = true;
  closed.session_key = std::string(64, 'f');
  closed.session_ttl_s = 120;
  closed.readers = {{"ann", "$argon2id$x", true}};
  auto auth = MakeSiteAuth("a", closed);
  REQUIRE(auth != nullptr);
  CHECK(auth->private_site);
  CHECK(auth->key == std::string(32, '\xff'));
  CHECK(auth->ttl_s == 120);
  closed.session_key = "not hex";
  CHECK(MakeSiteAuth("a", closed)->key.empty());  // nobody can sign in; still private
  SiteTables t("default");
  t.SetHosts("a", {"a.example"});
  t.Put("a", PageWithBody("/", "home of a"));
  const SiteAuth* got = reinterpret_cast<const SiteAuth*>(1);
  CHECK(t.Find("a.example", &got) != nullptr);
  CHECK(got == nullptr);
  t.SetAuth("a", auth);
  CHECK(t.Find("A.example:80", &got) != nullptr);
  CHECK(got == auth.get());
  CHECK(t.AuthOf("a.example") == auth);
  CHECK(t.AuthOf("other.example") == nullptr);
  t.SetAuth("a", nullptr);
  t.Find("a.example", &got);
  CHECK(got == nullptr);
}

TEST_CASE("site tables: a site's language comes from its 404 page's <html lang> (issue 29)") {
  SiteTables t("default");
  CHECK(t.LangOf("a").empty());
  site::SiteInfo info;
  info.name = "A";
  info.lang = "ru";
  t.Put("a", PageWithBody(kNotFoundKey, site::Assemble404Page(info)));
  CHECK(t.LangOf("a") == "ru");
  t.Put("a", PageWithBody(kNotFoundKey, "<html lang=\"\"><p>not ours</p>"));
  CHECK(t.LangOf("a").empty());
  t.Put("a", PageWithBody(kNotFoundKey, site::Assemble404Page(info)));
  t.Erase("a", std::string(kNotFoundKey));
  CHECK(t.LangOf("a").empty());
  t.Put("a", PageWithBody(kNotFoundKey, site::Assemble404Page(info)));
  t.EraseSite("a");
  CHECK(t.LangOf("a").empty());
}

TEST_CASE("site tables: a site's analytics come from its 404 page, for the edge's own pages (issue 29)") {
  SiteTables t("default");
  site::SiteInfo info;
  info.name = "A";
  info.analytics = *site::CheckAnalytics("plausible", "a.example.com", "");
  t.Put("a", PageForTest(kNotFoundKey, site::Assemble404Page(info), 404));
  t.Put("b", PageForTest(kNotFoundKey, site::Assemble404Page("B"), 404));
  CHECK(t.AnalyticsOf("a") == info.analytics);
  CHECK(t.AnalyticsOf("b").provider == site::AnalyticsProvider::kNone);
  CHECK(t.AnalyticsOf("nosuch").provider == site::AnalyticsProvider::kNone);
  std::string_view which;
  t.SetHosts("a", {"a.example"});
  CHECK(t.Find("a.example", &which) != nullptr);
  CHECK(which == "a");
  t.Erase("a", kNotFoundKey);
  CHECK(t.AnalyticsOf("a").provider == site::AnalyticsProvider::kNone);
}
