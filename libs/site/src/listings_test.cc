// Incremental listings: the ListingIndex a Vault keeps note by note, and the
// filter MarkDirty computes for a change, against full builds.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "folio/site/listings.h"
#include "folio/site/vault.h"

namespace folio::site {
namespace {

constexpr int64_t kDayMs = 86'400'000;

struct Gen {
  std::mt19937 rng;
  explicit Gen(uint32_t seed) : rng(seed) {}
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
  bool Chance(int percent) { return static_cast<int>(Pick(100)) < percent; }

  NoteMeta Note(const std::string& path, int64_t now_ms) {
    static const char* const kTitles[] = {"Alpha", "Beta", "Gamma", "Alpha", "Zeta"};
    static const char* const kTags[] = {"x", "X/y", "z", "x/y/w", "Q"};
    static const char* const kAliases[] = {"Old", "Other Name", "A", "docs"};
    NoteMeta m;
    m.path = path;
    m.title = kTitles[Pick(5)] + std::string(Chance(50) ? "" : " " + path);
    for (int i = static_cast<int>(Pick(3)); i > 0; --i) m.tags.push_back(kTags[Pick(5)]);
    if (Chance(25)) m.aliases.push_back(kAliases[Pick(4)]);
    m.published = Chance(85);
    m.updated_ms = now_ms;
    m.sha256 = std::to_string(rng());
    return m;
  }
  std::string Path() {
    static const char* const kDirs[] = {"", "A/", "A/B/", "C/", "A/B/D/"};
    static const char* const kNames[] = {"n1", "n2", "n3", "n4", "n5", "n6", "index", "A", "B", "docs", "tags"};
    return kDirs[Pick(5)] + std::string(kNames[Pick(11)]) + ".md";
  }
};

using Pages = std::map<std::string, GeneratedPage>;

// A Vault built from scratch from `v`'s notes.
Vault Rebuilt(const Vault& v) {
  Vault fresh;
  for (const auto& [path, n] : v.notes()) fresh.Load(n);
  fresh.Rebuild();
  return fresh;
}

void CheckSame(const Pages& a, const Pages& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [url, g] : a) {
    CAPTURE(url);
    REQUIRE(b.count(url) == 1);
    CHECK(g.fingerprint == b.at(url).fingerprint);
    CHECK(g.status == b.at(url).status);
  }
}

}  // namespace

TEST_CASE("listings: incremental index and filtered builds match full builds over random changes") {
  SiteInfo info;
  info.name = "S";
  ListingOptions opt;
  opt.recent_page_size = 3;
  opt.list_limit = 4;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    Gen g(seed);
    Vault v;
    int64_t now = 1'700'000'000'000;
    for (int step = 0; step < 40; ++step) {
      CAPTURE(step);
      now += g.Chance(50) ? 1000 : kDayMs;
      std::map<std::string, NoteMeta> upserts;
      std::set<std::string> deletes;
      for (int k = 1 + static_cast<int>(g.Pick(3)); k > 0; --k) {
        std::string p = g.Path();
        if (v.Find(p) && g.Chance(30)) {
          deletes.insert(p);
          upserts.erase(p);
        } else if (!deletes.count(p)) {
          upserts[p] = g.Note(p, now);
        }
      }
      const Pages before = BuildListings(v, info, opt);
      std::vector<std::pair<std::string, ListedAs>> listed;
      for (const auto& [p, m] : upserts) listed.push_back({p, ListedNow(v, p)});
      for (const auto& p : deletes) listed.push_back({p, ListedNow(v, p)});
      const size_t shards = v.listing_index().SitemapShards();
      std::vector<NoteMeta> ups;
      for (auto& [p, m] : upserts) ups.push_back(m);
      (void)v.Apply(std::move(ups), std::vector<std::string>(deletes.begin(), deletes.end()));
      ListingFilter f;
      for (const auto& [p, was] : listed) MarkDirty(p, was, ListedNow(v, p), &f);
      if (v.listing_index().SitemapShards() != shards) f.sitemap = true;

      const Pages after = BuildListings(v, info, opt);
      CheckSame(after, BuildListings(Rebuilt(v), info, opt));  // incremental index == from scratch
      const Pages part = BuildListings(v, info, opt, &f);
      for (const auto& [url, page] : after) {
        auto old = before.find(url);
        if (old != before.end() && old->second.fingerprint == page.fingerprint) continue;
        CAPTURE(url);
        REQUIRE_MESSAGE(part.count(url) == 1, "a changed listing was not rebuilt");
        CHECK(part.at(url).fingerprint == page.fingerprint);
      }
      for (const auto& [url, page] : before) {
        if (after.count(url)) continue;
        CAPTURE(url);
        CHECK_MESSAGE(f.Covers(url, page.status), "a listing that went away is not covered");
      }
      for (const auto& [url, page] : part) {
        CAPTURE(url);
        REQUIRE(after.count(url) == 1);
        CHECK(page.fingerprint == after.at(url).fingerprint);
      }
    }
  }
}

TEST_CASE("listings: a large sitemap is an index of shards; one new note rebuilds one shard") {
  Vault v;
  std::vector<NoteMeta> notes;
  const size_t n = ListingIndex::kSitemapShardTarget * 3;
  for (size_t i = 0; i < n; ++i) {
    NoteMeta m;
    m.path = "F" + std::to_string(i % 50) + "/n" + std::to_string(i) + ".md";
    m.title = "N" + std::to_string(i);
    m.updated_ms = 1000 + static_cast<int64_t>(i);
    notes.push_back(m);
  }
  (void)v.Apply(std::move(notes), {});
  REQUIRE(v.listing_index().SitemapShards() == 4);
  auto all = BuildListings(v, SiteInfo{});
  REQUIRE(all.count("/sitemap.xml") == 1);
  CHECK(all.at("/sitemap.xml").Render().find("<sitemapindex") != std::string::npos);
  size_t listed = 0;
  for (size_t i = 0; i < 4; ++i) {
    std::string url = SitemapShardUrl(i);
    REQUIRE(all.count(url) == 1);
    listed += all.at(url).items.size();
    CHECK(all.at(url).items.size() < ListingIndex::kSitemapShardTarget * 2);
  }
  CHECK(listed == n);
  CHECK(all.count(SitemapShardUrl(4)) == 0);

  NoteMeta extra;
  extra.path = "F1/new.md";
  extra.title = "New";
  extra.updated_ms = 999'999;
  ListedAs was = ListedNow(v, extra.path);
  (void)v.Apply({extra}, {});
  ListingFilter f;
  MarkDirty(extra.path, was, ListedNow(v, extra.path), &f);
  auto part = BuildListings(v, SiteInfo{}, {}, &f);
  size_t shards_built = 0;
  for (const auto& [url, page] : part) shards_built += url.rfind("/sitemap-", 0) == 0;
  CHECK(shards_built == 1);
}

// What a one-note push builds does not grow with the vault: the items on
// the pages a filtered build makes are about the same at 8k and 32k notes.
TEST_CASE("listings: a one-note change builds the same amount at 8k and 32k notes") {
  auto items_built = [](size_t n) {
    Vault v;
    std::vector<NoteMeta> notes;
    for (size_t i = 0; i < n; ++i) {
      NoteMeta m;
      m.path = "F" + std::to_string(i / 100) + "/n" + std::to_string(i) + ".md";  // folders of 100
      m.title = "N" + std::to_string(i);
      m.tags = {"t" + std::to_string(i / 100)};
      m.updated_ms = 1000 + static_cast<int64_t>(i);
      notes.push_back(m);
    }
    (void)v.Apply(std::move(notes), {});
    NoteMeta extra;
    extra.path = "F3/new.md";
    extra.title = "New";
    extra.tags = {"t3"};
    extra.updated_ms = 1'000'000'000;
    ListedAs was = ListedNow(v, extra.path);
    (void)v.Apply({extra}, {});
    ListingFilter f;
    MarkDirty(extra.path, was, ListedNow(v, extra.path), &f);
    size_t items = 0;
    for (const auto& [url, page] : BuildListings(v, SiteInfo{}, {}, &f)) {
      if (url == "/_/tags") continue;  // one entry per tag: grows with the tags, not the notes
      items += page.items.size() + page.listing.items.size() + page.listing.sections.size();
    }
    return items;
  };
  size_t small = items_built(8000), large = items_built(32000);
  MESSAGE("items built for a one-note push: " << small << " at 8k notes, " << large << " at 32k");
  CHECK(large <= small + small / 4);
}

}  // namespace folio::site
