// ListingBuilder (site_listings.h).
#include "site_listings.h"

#include <set>
#include <string>
#include <vector>

#include "folio/bus/page_schema.h"
#include "folio/core/text.h"
#include "folio/markdown/slug.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "page_renderer.h"
#include "writer_parts.h"

namespace folio::ingest {
namespace {

// The published generated pages a filtered build may have dropped: those of
// the categories it rebuilds, found by key and by prefix range, not by a
// walk over every listing (an alias-wide rebuild is the exception).
template <typename Map>
std::vector<std::string> CoveredUrls(const site::ListingFilter& f, const Map& published) {
  std::set<std::string> urls;
  auto exact = [&](const std::string& url) {
    if (published.count(url)) urls.insert(url);
  };
  auto prefixed = [&](std::string_view prefix) {
    for (auto it = published.lower_bound(std::string(prefix));
         it != published.end() && std::string_view(it->first).substr(0, prefix.size()) == prefix; ++it) {
      urls.insert(it->first);
    }
  };
  for (std::string_view url : {std::string_view("/"), markdown::kTagsUrl, std::string_view("/rss.xml"),
                               std::string_view("/sitemap.xml"), std::string_view("/robots.txt")}) {
    exact(std::string(url));
  }
  for (const auto& d : f.folders) {
    exact(site::FolderUrl(d));
    exact(site::TreeUrl(site::FolderUrl(d)));
  }
  exact(site::TreeUrl("/"));
  exact(std::string(markdown::kGraphDataUrl));
  exact(std::string(site::kPublishCssUrl));
  if (f.graph) prefixed(markdown::kGraphChunkPrefix);
  for (const auto& t : f.tags) exact(site::TagUrl(t));
  for (const auto& a : f.alias_urls) exact(a);
  if (f.recent) prefixed(markdown::kRecentUrl);
  if (f.sitemap) prefixed("/sitemap-");
  if (f.aliases) {
    for (const auto& [url, fp] : published) {
      if (fp.second == 301) urls.insert(url);
    }
  }
  std::vector<std::string> out;
  for (const auto& url : urls) {
    if (f.Covers(url, published.at(url).second)) out.push_back(url);
  }
  return out;
}

}  // namespace

size_t ListingBuilder::AddChanged(Commit* c, int64_t now_s, bool force, const site::ListingFilter* only,
                                  ListingDelta* delta) const {
  const site::Vault& vault = state_->vault();
  const std::map<std::string, ListingFp>& published = state_->listing_fp();
  site::ListingOptions opt;
  opt.recent_max_pages = options_->recent_pages;
  const site::SiteInfo info = SiteInfoOf(*options_, vault);
  auto pages = site::BuildListings(vault, info, opt, only);
  // HTML pages carry the site's analytics sources; feeds, sitemaps and JSON the plain policy.
  const std::string html_csp = site::PageCsp(info);
  size_t n = 0;
  std::set<std::string> note_urls;
  for (const auto& p : c->pages) note_urls.insert(p.url);
  for (const auto& [url, g] : pages) {
    auto old = published.find(url);
    if (!force && old != published.end() && old->second.first == g.fingerprint) continue;
    (*delta)[url] = ListingFp{g.fingerprint, g.status};
    if (note_urls.count(url)) continue;  // a note took this URL in this very push
    const char* cache = g.status == 301 ? "public, max-age=300" : internal::kPageCache;
    const std::string& csp = StartsWith(g.content_type, "text/html") ? html_csp : site::PageCsp();
    internal::AddPage(c, url, {g.status, g.content_type, cache, csp, g.location, now_s, c->version},
                      g.Render());
    ++n;
  }
  // Generated pages of the rebuilt categories that no longer exist (a tag
  // nobody uses, a folder emptied), unless a note now has the URL.
  std::vector<std::string> gone;
  if (only) {
    gone = CoveredUrls(*only, published);
  } else {
    for (const auto& [url, fp] : published) gone.push_back(url);
  }
  for (const auto& url : gone) {
    if (pages.count(url) || note_urls.count(url)) continue;
    (*delta)[url] = std::nullopt;
    if (vault.UrlOwner(url)) continue;  // now a note's URL: its page replaces the listing
    c->deleted_pages.push_back(url);
    c->outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c->site, url), "", ""});
    ++n;
  }
  return n;
}

}  // namespace folio::ingest
