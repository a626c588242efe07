#include <doctest/doctest.h>

#include "folio/site/layout.h"
#include "folio/site/vault.h"

using namespace folio::site;

namespace {
NoteMeta Meta(std::string path, std::vector<std::string> targets, std::string title = "") {
  NoteMeta m;
  m.path = std::move(path);
  m.targets = std::move(targets);
  m.title = title.empty() ? m.path : title;
  return m;
}
std::set<std::string> S(std::initializer_list<std::string> l) { return l; }
}  // namespace

TEST_CASE("vault: first import renders every note and computes backlinks") {
  Vault v;
  auto imp = v.Apply({Meta("a.md", {"b"}), Meta("b.md", {}), Meta("Dir/c.md", {"a", "missing"})}, {});
  CHECK(imp.render == S({"a.md", "b.md", "Dir/c.md"}));
  CHECK(imp.home_changed);
  CHECK(v.Find("Dir/c.md")->url == "/dir/c");
  CHECK(v.Backlinks("a.md") == std::vector<std::string>{"Dir/c.md"});
  CHECK(v.Backlinks("b.md") == std::vector<std::string>{"a.md"});
}

TEST_CASE("vault: a content change with the same links renders only that note") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"b"}), Meta("b.md", {}), Meta("c.md", {})}, {});
  auto imp = v.Apply({Meta("a.md", {"b"})}, {});
  CHECK(imp.render == S({"a.md"}));
  CHECK(!imp.home_changed);
}

TEST_CASE("vault: a new link re-renders the target (its backlinks changed)") {
  Vault v;
  (void)v.Apply({Meta("a.md", {}), Meta("b.md", {}), Meta("c.md", {})}, {});
  auto imp = v.Apply({Meta("a.md", {"c"})}, {});
  CHECK(imp.render == S({"a.md", "c.md"}));
}

TEST_CASE("vault: adding a note that dangling links now resolve to re-renders the linkers") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"New"}), Meta("b.md", {})}, {});
  CHECK(v.Find("a.md")->out.empty());
  auto imp = v.Apply({Meta("New.md", {})}, {});
  CHECK(imp.render == S({"New.md", "a.md"}));
  CHECK(v.Backlinks("New.md") == std::vector<std::string>{"a.md"});
}

TEST_CASE("vault: deleting a note re-renders linkers and its link targets") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"b"}), Meta("b.md", {"c"}), Meta("c.md", {}), Meta("d.md", {})}, {});
  auto imp = v.Apply({}, {"b.md"});
  CHECK(imp.render == S({"a.md", "c.md"}));
  CHECK(imp.deleted_urls == std::vector<std::string>{"/b"});
  CHECK(v.Find("b.md") == nullptr);
  CHECK(v.Backlinks("c.md").empty());
}

TEST_CASE("vault: a title change re-renders the pages showing it as a backlink") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"b"}, "A"), Meta("b.md", {}), Meta("c.md", {})}, {});
  auto imp = v.Apply({Meta("a.md", {"b"}, "A renamed")}, {});
  CHECK(imp.render == S({"a.md", "b.md"}));
  CHECK(imp.home_changed);
}

TEST_CASE("vault: URL collisions and reserved URLs get a stable fallback and a warning") {
  Vault v;
  auto imp = v.Apply({Meta("A b.md", {}), Meta("a-b.md", {}), Meta("metrics.md", {})}, {});
  std::set<std::string> urls;
  for (const auto& [p, n] : v.notes()) urls.insert(n.url);
  CHECK(urls.size() == 3);
  CHECK(urls.count("/a-b") == 1);
  CHECK(urls.count("/metrics") == 0);
  size_t warned = 0;
  for (const auto& [p, w] : imp.url_warnings) warned += w.size();
  CHECK(warned == 2);
}

TEST_CASE("vault: reload from stored metadata gives the same graph") {
  Vault v;
  (void)v.Apply({Meta("a.md", {"b"}), Meta("b.md", {"a"})}, {});
  Vault w;
  for (const auto& [p, n] : v.notes()) w.Load(n);
  w.Rebuild();
  CHECK(w.Backlinks("a.md") == v.Backlinks("a.md"));
  CHECK(w.Backlinks("b.md") == v.Backlinks("b.md"));
}

TEST_CASE("layout: complete page with escaped title, stylesheet link, backlinks") {
  NotePage p;
  p.site_name = "Docs";
  p.title = "A <b> note";
  p.body_html = "<p>hi</p>";
  p.backlinks = {{"Other", "/other note"}};
  std::string html = AssembleNotePage(p);
  CHECK(html.rfind("<!doctype html>", 0) == 0);
  CHECK(html.find("<title>A &lt;b&gt; note · Docs</title>") != std::string::npos);
  CHECK(html.find(StyleSheetUrl()) != std::string::npos);
  CHECK(html.find("<style") == std::string::npos);
  CHECK(html.find("href=\"/other%20note\"") != std::string::npos);
  CHECK(StyleSheet().find("prefers-color-scheme:dark") != std::string::npos);
}

TEST_CASE("layout: a bounded backlinks list says how many more exist") {
  NotePage p;
  p.site_name = "S";
  p.title = "Hub";
  p.backlinks = {{"A", "/a"}};
  p.backlinks_total = 1200;
  CHECK(AssembleNotePage(p).find("and 1199 more") != std::string::npos);
}
