// SiteWriter (site_writer.h): the pages a private site needs (issue 29):
// its sign-in page, and every stored page re-stamped with the site's access
// when the site turns private or public.
#include <set>

#include "folio/bus/page_schema.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/site/signin_page.h"
#include "site_writer.h"
#include "writer_parts.h"

namespace folio::ingest {
namespace {

constexpr int kUrlsPerRead = 1000;

// The feeds and sitemaps a private site must not publish. (Start rebuilds
// the listings without the fingerprints of those published, so it cannot
// tell which are gone: the walk over stored pages deletes them.)
bool IsFeedUrl(std::string_view url) {
  if (url == "/rss.xml" || url == "/atom.xml" || url == "/feed.json" || url == "/feed.xml") return true;
  return url.rfind("/sitemap", 0) == 0 && url.size() >= 12 && url.substr(url.size() - 4) == ".xml";
}

}  // namespace

void SiteWriter::AddSignInPage(int64_t now_s, Commit* c) const {
  const std::string url(site::kSignInUrl);
  if (!HasSignIn(options_.prefs)) {
    auto stored = store_->PageRecord(options_.site, url);
    if (stored.ok()) {
      c->deleted_pages.push_back(url);
      c->outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c->site, url), "", ""});
    }
    return;
  }
  bool named = false;
  for (const bus::SiteReader& r : options_.prefs.readers) named = named || !r.name.empty();
  // Public on purpose (not internal::AddPage, which gives it the site's
  // access): it is what a reader without a session is shown.
  PageHead head{200, internal::kHtml, "no-store", site::PageCsp(), "", now_s, c->version, bus::PageAccess::kPublic};
  c->AddPage(url, MakePageRecord(head, site::AssembleSignInPage(renderer_.Info(), named)).record);
}

Status SiteWriter::RestampStored(Commit* c) const {
  std::set<std::string> written;
  for (const PageRow& p : c->pages) written.insert(p.url);
  for (const std::string& url : c->deleted_pages) written.insert(url);
  const std::set<std::string> always_public{std::string(site::kSignInUrl), site::StyleSheetUrl()};
  std::string after;
  for (;;) {
    auto urls = store_->PageUrls(options_.site, after, kUrlsPerRead);
    if (!urls.ok()) return urls.status();
    for (const std::string& url : *urls) {
      if (written.count(url) || always_public.count(url)) continue;
      if (c->access == bus::PageAccess::kSignedIn && IsFeedUrl(url)) {
        c->deleted_pages.push_back(url);
        c->outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c->site, url), "", ""});
        continue;
      }
      auto stored = store_->PageRecord(options_.site, url);
      if (!stored.ok()) return stored.status();
      bus::PageRecord r;
      if (!bus::DecodePageRecord(*stored, &r).ok() || r.access == c->access) continue;
      r.access = c->access;
      c->AddPage(url, bus::EncodePageRecord(r));
    }
    if (urls->size() < static_cast<size_t>(kUrlsPerRead)) break;
    after = urls->back();
  }
  return Status::Ok();
}

}  // namespace folio::ingest
