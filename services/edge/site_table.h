// SiteTables: one serving worker's copy of every site's pages (decoded URL
// path -> shared immutable Page) and of which site each host name selects.
// Not thread-safe: each Worker (worker.h) owns one and touches it on its
// loop thread only; updates arrive as tasks posted to that loop (page_feed.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folio/site/analytics.h"
#include "folio/bus/site_schema.h"
#include "page.h"

namespace folio::edge {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Keyed by a view of the page's own URL (Page::url()): no copy of the URL
// per page and worker (issue 12).
using PageTable = std::unordered_map<std::string_view, std::shared_ptr<const Page>, StringHash, std::equal_to<>>;

inline constexpr std::string_view kNotFoundKey = "/_folio/404";
// The site's sign-in page (ingest renders it; the edge has a built-in one
// until it does): never served at its own URL, only in place of a page.
inline constexpr std::string_view kSigninKey = "/_folio/signin";

// Who may read a site (bus::SiteAccess) as the edge checks it: built once per
// site record on the feed's thread and shared, immutable, by every worker.
// A site has one only if it is private or has readers or a session key;
// public sites without readers have none (their hot path checks a pointer).
struct SiteAuth {
  std::string site;
  bool private_site = false;            // every URL needs a session
  std::string key;                      // the 32-byte session key, or "" (nobody can sign in)
  int64_t ttl_s = 7 * 86400;            // a new session's lifetime
  std::vector<bus::SiteReader> readers;  // who may sign in (hashes only)
};
// The SiteAuth of a record's access, or null if the site is public without
// readers. A key that is not 64 lowercase hex is treated as none.
std::shared_ptr<const SiteAuth> MakeSiteAuth(const std::string& site, const bus::SiteAccess& access);

// Every site's pages, and which site a Host header selects. Not thread-safe:
// each Worker owns one and touches it on its loop thread only.
class SiteTables {
 public:
  // `default_site` answers requests without a Host header or with a host no
  // site claims.
  explicit SiteTables(std::string default_site);

  // Puts `page` at its URL (page->url()), replacing the page there.
  // Putting a site's 404 page (kNotFoundKey) also takes the site's display
  // name from it (its header), for the pages the edge assembles itself.
  // REQUIRES: page != nullptr.
  void Put(std::string_view site, std::shared_ptr<const Page> page);
  void Erase(std::string_view site, std::string_view url);
  // Erases every page of `site` whose URL `keep` returns false for (a
  // snapshot applied over pages it did not list: page_feed.h).
  void Retain(std::string_view site, const std::function<bool(std::string_view url)>& keep);
  // Erases every page of `site` (its site record was deleted).
  void EraseSite(std::string_view site);
  // Replaces the hosts of `site` (from its site record); a host another site
  // claimed moves to this one.
  void SetHosts(const std::string& site, const std::vector<std::string>& hosts);
  // Withdraws every host of `site` (its site record was deleted); its pages
  // stay until EraseSite.
  void RemoveHosts(std::string_view site);
  // The title of `site`'s site record ("" when it has none or it was deleted).
  void SetTitle(const std::string& site, std::string title);
  // Who may read `site` (MakeSiteAuth); null: public, no readers (also when
  // its record was deleted).
  void SetAuth(const std::string& site, std::shared_ptr<const SiteAuth> auth);

  // The page table for a raw Host header value ("B.example:8081"), or
  // nullptr if that site has no pages. Allocates nothing (reuses a buffer).
  // `auth` (if not null) is set to the site's SiteAuth, or null for a public
  // site without readers; valid until the tables next change (between
  // requests): hold AuthOf's pointer across an asynchronous step. `site` (if
  // not null) is set to the site it selects (a view valid until the tables
  // change; set even when the site has no pages).
  const PageTable* Find(std::string_view host_header, const SiteAuth** auth = nullptr,
                        std::string_view* site = nullptr);
  const PageTable* Find(std::string_view host_header, std::string_view* site) {
    return Find(host_header, nullptr, site);
  }
  // The SiteAuth of the site a raw Host header value selects, or null.
  std::shared_ptr<const SiteAuth> AuthOf(std::string_view host_header);
  // The site a raw Host header value selects (for search, tests and logs).
  std::string SiteOf(std::string_view host_header);
  // The name `site`'s pages show in their header: from its 404 page, else
  // its site record's title, else the site name itself.
  std::string NameOf(std::string_view site) const;
  // The language `site`'s pages are in: its 404 page's <html lang> (the
  // site's SiteInfo::lang), "" when unknown (then pages are English).
  std::string LangOf(std::string_view site) const;
  // `site`'s analytics setting, as its 404 page carries it
  // (site::AnalyticsFromPage): the edge's own pages (search) load it too.
  // None while the site has no 404 page.
  site::SiteAnalytics AnalyticsOf(std::string_view site) const;
  size_t pages() const { return pages_; }
  // Bytes of the page bodies held: gzip only, the one copy an edge keeps
  // (Page::body_bytes()).
  size_t page_bytes() const { return page_bytes_; }

 private:
  struct Site {
    PageTable pages;
    std::vector<std::string> hosts;  // as last set by SetHosts
    std::string name;                // from the 404 page's header; "" if unknown
    std::string lang;                // the 404 page's <html lang>; "" if unknown
    site::SiteAnalytics analytics;   // from the 404 page's marker; none if unknown
    std::string title;               // from the site record
    std::shared_ptr<const SiteAuth> auth;  // from the site record; null: public, no readers
  };
  std::string_view Resolve(std::string_view host_header);

  std::string default_site_;
  std::unordered_map<std::string, Site, StringHash, std::equal_to<>> sites_;
  std::unordered_map<std::string, std::string, StringHash, std::equal_to<>> hosts_;  // host -> site
  std::string host_scratch_;  // normalised Host; capacity reserved once
  size_t pages_ = 0;
  size_t page_bytes_ = 0;
};

}  // namespace folio::edge
