// ListingBuilder (site_listings.h).
#include "site_listings.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "folio/bus/page_schema.h"
#include "folio/core/gzip.h"
#include "folio/markdown/slug.h"
#include "folio/site/csp.h"
#include "folio/site/feeds.h"
#include "folio/site/layout.h"
#include "page_record.h"
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
  for (std::string_view url : {std::string_view("/"), markdown::kTagsUrl, site::kRssUrl, site::kJsonFeedUrl,
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

// The note pages the feeds read: this change's, else the stored ones; the
// parts of each (body, summary) through the cache, by the page's ETag.
class FeedPages {
 public:
  FeedPages(const Commit& c, Store* store, FeedPartsCache* cache) : c_(c), store_(store), cache_(cache) {
    for (const auto& p : c.pages) fresh_[p.url] = &p.record;
    if (cache_->size() > kMaxCached) cache_->clear();
  }

  // True if this change rendered a feed note's page anew and the body or
  // summary it shows differs from the stored page's (not, say, only its
  // related notes or backlinks).
  bool BodyChanged(const std::vector<site::FeedItem>& items) const {
    for (const auto& it : items) {
      auto f = fresh_.find(it.url);
      if (f == fresh_.end()) continue;
      auto stored = store_->PageRecord(c_.site, it.url);
      const FeedParts& now = Parts(*f->second);
      const FeedParts& was = stored.ok() ? Parts(*stored) : kNone;
      if (now.ok != was.ok || now.body != was.body || now.description != was.description) return true;
    }
    return false;
  }

  // Each item's summary and (with feed_content) body, from its page; the
  // cache keeps only these pages' parts afterwards.
  std::vector<site::FeedItem> Fill(const site::SiteInfo& info, std::vector<site::FeedItem> items) const {
    FeedPartsCache kept;
    for (site::FeedItem& it : items) {
      auto f = fresh_.find(it.url);
      std::string stored;
      if (f == fresh_.end()) {
        auto r = store_->PageRecord(c_.site, it.url);
        if (!r.ok()) continue;
        stored = std::move(*r);
      }
      std::string etag;
      const FeedParts& parts = Parts(f != fresh_.end() ? *f->second : stored, &etag);
      if (!parts.ok) continue;
      it.summary = parts.description;
      if (info.feed_content) it.content_html = site::AbsoluteLinks(parts.body, info.base_url, it.url);
      kept.emplace(etag, parts);
    }
    cache_->swap(kept);
    site::BoundFeedContent(&items);
    return items;
  }

 private:
  static constexpr size_t kMaxCached = 256;  // a few feeds' worth (Fill keeps one)
  static inline const FeedParts kNone{};

  // A record's parts (not ok when it cannot be read, is no note page of this
  // layout, or its body is in folio-storage); *etag_out: its ETag.
  const FeedParts& Parts(const std::string& record, std::string* etag_out = nullptr) const {
    bus::PageRecord rec;
    if (!bus::DecodePageRecord(record, &rec).ok() || !rec.body_blob.empty()) return kNone;
    if (etag_out) *etag_out = rec.etag;
    auto [it, added] = cache_->try_emplace(rec.etag);
    if (added) {
      std::string html;
      it->second.ok = GzipDecompress(rec.body_gzip, &html, kMaxPublishedPage * 8).ok() &&
                      site::NotePageParts(html, &it->second.body, &it->second.description);
    }
    return it->second;
  }

  const Commit& c_;
  Store* store_;
  FeedPartsCache* cache_;
  std::map<std::string_view, const std::string*> fresh_;
};

}  // namespace

size_t ListingBuilder::AddChanged(Commit* c, int64_t now_s, bool force, const site::ListingFilter* only,
                                  ListingDelta* delta) const {
  const site::Vault& vault = state_->vault();
  const std::map<std::string, ListingFp>& published = state_->listing_fp();
  site::ListingOptions opt;
  opt.recent_max_pages = options_->recent_pages;
  const site::SiteInfo info = SiteInfoOf(*options_, vault);
  // A note page rendered anew may change a feed's body without changing
  // what the listings know of the note: the feeds are built to check.
  site::ListingFilter with_feeds;
  if (only && !only->rss && !c->pages.empty()) {
    with_feeds = *only;
    with_feeds.rss = true;
    only = &with_feeds;
  }
  auto pages = site::BuildListings(vault, info, opt, only);
  size_t n = 0;
  std::set<std::string> note_urls;
  for (const auto& p : c->pages) note_urls.insert(p.url);
  std::optional<FeedPages> feed_pages;               // made when a feed is looked at
  std::optional<bool> body_changed;                 // asked once for both feeds
  std::optional<std::vector<site::FeedItem>> feed;  // filled once for both feeds
  for (auto& [url, g] : pages) {
    auto old = published.find(url);
    const bool is_feed = g.kind == site::GeneratedPage::Kind::kRss || g.kind == site::GeneratedPage::Kind::kJsonFeed;
    if (is_feed && !feed_pages) feed_pages.emplace(*c, store_, &feed_parts_);
    const bool same = !force && old != published.end() && old->second.first == g.fingerprint;
    if (same && is_feed && !body_changed) body_changed = feed_pages->BodyChanged(g.feed);
    if (same && !(is_feed && *body_changed)) continue;
    if (is_feed) {
      if (!feed) feed = feed_pages->Fill(info, std::move(g.feed));
      g.feed = *feed;
    }
    (*delta)[url] = ListingFp{g.fingerprint, g.status};
    if (note_urls.count(url)) continue;  // a note took this URL in this very push
    const char* cache = g.status == 301 ? "public, max-age=300" : internal::kPageCache;
    internal::AddPage(c, url, {g.status, g.content_type, cache, site::PageCsp(), g.location, now_s, c->version},
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
