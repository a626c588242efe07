// Listings: every generated page of a site (home when there is no root
// index.md, folder pages, tag pages and /tags, /recent with ?page=N, RSS,
// sitemap.xml (with sitemap-N.xml shards on a large site), robots.txt, alias
// redirects), computed from the Vault's ListingIndex.
//
// Build() returns each page's fingerprint (a hash of exactly what it shows)
// so ingest renders and publishes only the listings whose content changed.
// A filtered build costs what the selected pages show (at most list_limit
// notes per page), never a walk over the vault.
// Pure functions of their inputs; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "folio/site/layout.h"
#include "folio/site/vault.h"

namespace folio::site {

struct ListingOptions {
  size_t recent_page_size = 50;   // notes per /recent page
  // /recent?page=N is served for N <= this. A new note shifts every page,
  // so each push rewrites up to this many pages: keep it small.
  size_t recent_max_pages = 10;
  size_t list_limit = 1000;       // notes shown on a home, folder or tag page
  size_t rss_items = 50;
};

struct GeneratedPage {
  std::string url;           // key: "/_/tags/x", "/_/recent?page=2", "/rss.xml"
  uint16_t status = 200;     // 301 for alias redirects
  std::string content_type;
  std::string location;      // for 301
  uint64_t fingerprint = 0;  // equal fingerprints = identical pages
  // Renders the body (call only for pages whose fingerprint changed).
  std::string Render() const;

  // What Render() uses.
  enum class Kind { kListing, kRss, kSitemap, kSitemapIndex, kRobots, kRedirect } kind = Kind::kListing;
  ListingPage listing;          // kListing
  std::vector<LinkItem> items;  // kRss, kSitemap
};

// Which generated pages to build (a change touches only some of them).
struct ListingFilter {
  // sitemap: the whole sitemap (every shard); aliases: every alias redirect.
  bool home = false, tags_index = false, recent = false, rss = false, sitemap = false, robots = false,
       aliases = false;
  std::set<std::string, std::less<>> folders;  // vault folders ("Docs/Sub") whose pages to build
  std::set<std::string, std::less<>> tags;     // lower-cased tags (and prefixes) whose pages to build
  std::set<std::string, std::less<>> sitemap_paths;  // notes whose sitemap shard to build (and the index)
  std::set<std::string, std::less<>> alias_urls;     // alias redirect URLs to build
  // True if `url` is a page of a category this filter rebuilds; `kind` and
  // `status` come from the page that was published there.
  bool Covers(std::string_view url, uint16_t status) const;
};

// What a note looked like to listings (before or after a change).
struct ListedAs {
  bool present = false;  // published
  std::string title, url, day, dir;
  std::vector<std::string> tags, aliases;
  int64_t updated_ms = 0;
};
ListedAs ListedNow(const Vault& v, std::string_view path);
// Adds to *f the listings that a note's change from `before` to `after`
// can alter: a few folders and tags, its sitemap shard, its alias URLs,
// home, recent and RSS when what they show of it changed.
void MarkDirty(const std::string& path, const ListedAs& before, const ListedAs& after, ListingFilter* f);

// Generated pages of the site, by URL: all of them, or those `only` selects.
std::map<std::string, GeneratedPage> BuildListings(const Vault& vault, const SiteInfo& site,
                                                   const ListingOptions& options = {},
                                                   const ListingFilter* only = nullptr);

// "2026-11-30" for a unix time in ms (0 -> "").
std::string DayOf(int64_t unix_ms);
// The URL of a folder's page ("Docs/Sub" -> "/docs/sub/").
std::string FolderUrl(std::string_view folder);
// The URL of a tag's page ("Topic/Sub" -> "/_/tags/topic/sub").
std::string TagUrl(std::string_view tag);
// The URL of sitemap shard i ("/sitemap-3.xml").
std::string SitemapShardUrl(size_t i);

}  // namespace folio::site
