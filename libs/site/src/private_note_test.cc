// `publish: private` notes (README "Private notes") in the site model: a
// private note keeps its URL and resolves as a link target, but no listing,
// feed, sitemap, tag page, explorer JSON or graph chunk names it, a rename
// never 301s to it, and turning private or public re-renders the pages that
// show it (its linkers and the notes it links to) and marks the listings.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "folio/site/listings.h"
#include "folio/site/vault.h"

namespace folio::site {
namespace {

NoteMeta Note(std::string path, std::string title, std::vector<std::string> targets = {}, bool is_private = false) {
  NoteMeta m;
  m.path = std::move(path);
  m.title = std::move(title);
  m.targets = std::move(targets);
  m.tags = {"projects"};
  m.updated_ms = 1000;
  m.sha256 = m.path + m.title;
  m.private_note = is_private;
  return m;
}

// Every generated page's body, joined.
std::string AllListings(const Vault& v) {
  std::string all;
  for (const auto& [url, page] : BuildListings(v, SiteInfo{})) all += url + "\n" + page.Render() + "\n";
  return all;
}

Vault Sample(bool is_private) {
  Vault v;
  (void)v.Apply({Note("Projects/Secret.md", "Zanzibarquux plan", {"Hub"}, is_private),
                 Note("Hub.md", "Hub", {"Secret"}), Note("Projects/Other.md", "Other")},
                {});
  return v;
}

}  // namespace

TEST_CASE("private note: a page and a link target, in no listing, feed, sitemap, tag, explorer or graph") {
  Vault v = Sample(true);
  const NoteMeta* secret = v.Find("Projects/Secret.md");
  REQUIRE(secret != nullptr);
  CHECK(secret->url == "/projects/secret");
  CHECK(!IsListed(*secret));
  CHECK(v.UrlOwner("/projects/secret") == secret);
  REQUIRE(v.Resolve("Secret", "Hub.md"));
  CHECK(v.Find("Hub.md")->out == std::vector<std::string>{"Projects/Secret.md"});
  std::string all = AllListings(v);
  CHECK(all.find("Zanzibarquux") == std::string::npos);
  CHECK(all.find("/projects/secret") == std::string::npos);
  CHECK(all.find("/projects/other") != std::string::npos);  // the folder and tag are still listed
  CHECK(AllListings(Sample(false)).find("Zanzibarquux") != std::string::npos);  // the check can fail
}

TEST_CASE("private note: turning private or public re-renders its linkers and targets and marks the listings") {
  for (bool to_private : {true, false}) {
    CAPTURE(to_private);
    Vault v = Sample(!to_private);
    ListedAs before = ListedNow(v, "Projects/Secret.md");
    NoteMeta flipped = Note("Projects/Secret.md", "Zanzibarquux plan", {"Hub"}, to_private);
    Impact impact = v.Apply({flipped}, {});
    CHECK(impact.render.count("Projects/Secret.md"));
    CHECK(impact.render.count("Hub.md"));  // links to it (its graph node) and is linked (backlinks)
    CHECK(impact.deleted_urls.empty());
    CHECK(impact.moved.empty());
    ListingFilter f;
    MarkDirty("Projects/Secret.md", before, ListedNow(v, "Projects/Secret.md"), &f);
    CHECK(f.home);
    CHECK(f.rss);
    CHECK(f.tags.count("projects"));
    CHECK(f.folders.count("Projects"));
    CHECK(f.graph_paths.count("Projects/Secret.md"));
    CHECK((AllListings(v).find("Zanzibarquux") == std::string::npos) == to_private);
  }
}

TEST_CASE("private note: a rename never answers 301 to a private note, nor from one") {
  Vault v = Sample(false);
  NoteMeta moved = Note("Projects/Secret 2.md", "Zanzibarquux plan", {"Hub"}, true);
  moved.sha256 = v.Find("Projects/Secret.md")->sha256;  // the same bytes: a rename
  Impact impact = v.Apply({moved}, {"Projects/Secret.md"});
  CHECK(impact.moved.empty());
  CHECK(impact.deleted_urls == std::vector<std::string>{"/projects/secret"});

  NoteMeta again = Note("Projects/Secret 3.md", "Zanzibarquux plan", {"Hub"}, false);
  again.sha256 = moved.sha256;
  impact = v.Apply({again}, {"Projects/Secret 2.md"});
  CHECK(impact.moved.empty());
  CHECK(impact.deleted_urls == std::vector<std::string>{"/projects/secret-2"});
}

}  // namespace folio::site
