#include "page_feed.h"

#include <memory>
#include <utility>

#include "folio/bus/page_schema.h"
#include "folio/bus/site_schema.h"
#include "folio/core/log.h"

namespace folio::edge {

PageFeed::PageFeed(std::vector<Worker*> workers, metrics::Registry* registry)
    : workers_(std::move(workers)),
      pages_gauge_(registry->NewGauge("folio_edge_pages", "Pages held in memory")),
      bytes_gauge_(registry->NewGauge("folio_edge_page_bytes", "Bytes of page bodies held (both encodings)")),
      updates_(registry->NewCounter("folio_edge_updates_total", "Page updates applied")),
      bad_records_(registry->NewCounter("folio_edge_bad_records_total", "Undecodable page records skipped")) {}

size_t PageFeed::pages() const { return static_cast<size_t>(pages_gauge_.Value()); }

void PageFeed::OnEntry(bus::KvEntry&& e) {
  std::string site, url;
  if (bus::ParseSiteKey(e.key, &site)) {
    OnSiteRecord(site, e);
    return;
  }
  if (bus::ParsePageKey(e.key, &site, &url)) OnPage(site, url, e);
}

// A site record: (re)map its hosts on every worker, or withdraw them.
void PageFeed::OnSiteRecord(const std::string& record_site, const bus::KvEntry& e) {
  std::shared_ptr<const bus::SiteRecord> rec;
  if (!e.deleted) {
    auto r = std::make_shared<bus::SiteRecord>();
    Status s = bus::DecodeSiteRecord(e.value, r.get());
    if (s.ok() && r->site != record_site) s = Status::Invalid("site record names site " + r->site);
    if (!s.ok()) {
      bad_records_.Increment();
      log::Warn("skipping bad site record", {{"key", e.key}, {"error", s.message()}});
      return;
    }
    rec = std::move(r);
  }
  std::string hosts;
  for (const auto& h : rec ? rec->hosts : std::vector<std::string>{}) hosts += (hosts.empty() ? "" : ",") + h;
  log::Info(rec ? "site hosts" : "site withdrawn", {{"site", record_site}, {"hosts", hosts}});
  for (Worker* wp : workers_) {
    wp->loop().Post([wp, record_site, rec] {
      if (rec) wp->sites().SetHosts(record_site, rec->hosts);
      else wp->sites().RemoveHosts(record_site);
      wp->sites().SetTitle(record_site, rec ? rec->title : "");
    });
  }
}

// A page: built once here, shared by every worker.
void PageFeed::OnPage(const std::string& site, const std::string& url, const bus::KvEntry& e) {
  std::shared_ptr<const Page> page;
  if (!e.deleted) {
    bus::PageRecord rec;
    Status s = bus::DecodePageRecord(e.value, &rec);
    auto built = s.ok() ? BuildPage(rec, url) : Result<std::shared_ptr<const Page>>(s);
    if (!built.ok()) {
      bad_records_.Increment();
      log::Warn("skipping bad page record", {{"site", site}, {"url", url}, {"error", built.status().message()}});
      return;
    }
    page = std::move(*built);
  }
  total_bytes_ -= static_cast<double>(sizes_[e.key]);
  if (page) {
    sizes_[e.key] = page->body.size() + page->body_gzip.size();
    total_bytes_ += static_cast<double>(sizes_[e.key]);
  } else {
    sizes_.erase(e.key);
  }
  pages_gauge_.Set(static_cast<double>(sizes_.size()));
  bytes_gauge_.Set(total_bytes_);
  updates_.Increment();
  for (Worker* wp : workers_) {
    wp->loop().Post([wp, site, url, page] {
      if (page) wp->sites().Put(site, url, page); else wp->sites().Erase(site, url);
    });
  }
}

}  // namespace folio::edge
