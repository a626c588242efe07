// Listings: every generated page of a site (home when there is no root
// index.md, folder pages, tag pages and /tags, /recent with ?page=N, the
// feeds (RSS and JSON Feed, feeds.h),
// sitemap.xml (with sitemap-N.xml shards on a large site), robots.txt, alias
// redirects), and the data the site script reads (the explorer's JSON per
// folder under /_/tree/, the link graph's JSON chunks under /_/graph/ and
// the graph page), computed from the Vault's ListingIndex.
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

#include "folio/site/feeds.h"
#include "folio/site/layout.h"
#include "folio/site/urls.h"
#include "folio/site/vault.h"

namespace folio::site {

// Obsidian Publish's custom stylesheet: a vault's root "publish.css" is an
// attachment; every page links kPublishCssUrl, a short-lived redirect to the
// file's content-addressed asset URL, so editing the file rewrites one record
// (adding or removing it rewrites every page).
inline constexpr std::string_view kPublishCssPath = "publish.css";
inline constexpr std::string_view kPublishCssUrl = "/publish.css";

struct ListingOptions {
  size_t recent_page_size = 50;   // notes per /recent page
  // /recent?page=N is served for N <= this. An edit moves its note to the
  // top and so shifts every page: each push rewrites up to this many pages
  // (ingest's --recent-pages, default 1).
  size_t recent_max_pages = 10;
  size_t list_limit = 1000;       // notes shown on a home, folder or tag page
  size_t rss_items = 50;          // items of each feed (/rss.xml, /feed.json)
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
  enum class Kind {
    kListing, kRss, kJsonFeed, kSitemap, kSitemapIndex, kRobots, kRedirect, kGraphPage, kData
  } kind = Kind::kListing;
  ListingPage listing;          // kListing (and kGraphPage's site and intro; the feeds' site)
  std::vector<LinkItem> items;  // kSitemap, kSitemapIndex
  // kRss, kJsonFeed: the newest notes by PublishedMs (ties by URL) with
  // their dates; BuildListings leaves summary and content_html empty (the
  // Vault holds no bodies): the caller fills them from the notes' pages
  // (NotePageParts, AbsoluteLinks, BoundFeedContent) before Render(). The
  // fingerprint covers each note's title, URL, dates, content hash and
  // version, and the site's name, base URL and feed_content.
  std::vector<FeedItem> feed;
  std::string body;             // kData: the JSON itself (built with the fingerprint)
};

// Which generated pages to build (a change touches only some of them).
struct ListingFilter {
  // sitemap: the whole sitemap (every shard); aliases: every alias redirect;
  // rss: both feeds (/rss.xml and /feed.json).
  bool home = false, tags_index = false, recent = false, rss = false, sitemap = false, robots = false,
       aliases = false;
  std::set<std::string, std::less<>> folders;  // vault folders ("Docs/Sub") whose pages to build
  std::set<std::string, std::less<>> tags;     // lower-cased tags (and prefixes) whose pages to build
  std::set<std::string, std::less<>> sitemap_paths;  // notes whose sitemap shard to build (and the index)
  std::set<std::string, std::less<>> alias_urls;     // alias redirect URLs to build
  // The explorer's JSON: the folders above name theirs; tree_root the root's.
  bool tree_root = false;
  // The link graph: every chunk (and the graph page), or the chunks of these
  // notes; either also rebuilds the chunk index /_/graph.json.
  bool graph = false;
  std::set<std::string, std::less<>> graph_paths;
  // True if `url` is a page of a category this filter rebuilds; `kind` and
  // `status` come from the page that was published there.
  bool Covers(std::string_view url, uint16_t status) const;
};

// What a note looked like to listings (before or after a change).
struct ListedAs {
  bool present = false;  // published
  std::string title, url, day, dir;
  std::vector<std::string> tags, aliases;
  std::vector<std::string> out;  // resolved link targets (paths): the graph's edges
  int64_t updated_ms = 0;         // UpdatedMs
  int64_t published_ms = 0;       // PublishedMs
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

// NaturalLess, the file explorer's order, is declared in listing_index.h.

}  // namespace folio::site
