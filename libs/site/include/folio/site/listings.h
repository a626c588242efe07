// Listings: every generated page of a site (home when there is no root
// index.md, folder pages, tag pages and /tags, /recent with ?page=N, RSS,
// sitemap.xml, robots.txt, alias redirects), computed from the Vault.
//
// Build() returns each page's fingerprint (a hash of exactly what it shows)
// so ingest renders and publishes only the listings whose content changed.
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
  size_t recent_max_pages = 200;  // /recent?page=N is served for N <= this
  size_t list_limit = 1000;       // notes shown on a home, folder or tag page
  size_t rss_items = 50;
};

struct GeneratedPage {
  std::string url;           // key: "/tags/x", "/recent?page=2", "/rss.xml"
  uint16_t status = 200;     // 301 for alias redirects
  std::string content_type;
  std::string location;      // for 301
  uint64_t fingerprint = 0;  // equal fingerprints = identical pages
  // Renders the body (call only for pages whose fingerprint changed).
  std::string Render() const;

  // What Render() uses.
  enum class Kind { kListing, kRss, kSitemap, kRobots, kRedirect } kind = Kind::kListing;
  ListingPage listing;          // kListing
  std::vector<LinkItem> items;  // kRss, kSitemap
};

// Which generated pages to build (a change touches only some of them).
struct ListingFilter {
  bool home = false, tags_index = false, recent = false, rss = false, sitemap = false, robots = false,
       aliases = false;
  std::set<std::string, std::less<>> folders;  // vault folders ("Docs/Sub") whose pages to build
  std::set<std::string, std::less<>> tags;     // lower-cased tags (and prefixes) whose pages to build
  // True if `url` is a page of a category this filter rebuilds; `kind` and
  // `status` come from the page that was published there.
  bool Covers(std::string_view url, uint16_t status) const;
};

// Generated pages of the site, by URL: all of them, or those `only` selects.
std::map<std::string, GeneratedPage> BuildListings(const Vault& vault, const SiteInfo& site,
                                                   const ListingOptions& options = {},
                                                   const ListingFilter* only = nullptr);

// "2026-11-30" for a unix time in ms (0 -> "").
std::string DayOf(int64_t unix_ms);
// The URL of a folder's page ("Docs/Sub" -> "/docs/sub/").
std::string FolderUrl(std::string_view folder);
// The URL of a tag's page ("Topic/Sub" -> "/tags/topic/sub").
std::string TagUrl(std::string_view tag);

}  // namespace folio::site
