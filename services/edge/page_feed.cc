#include "page_feed.h"

#include <utility>

#include "folio/bus/page_schema.h"
#include "folio/core/log.h"

namespace folio::edge {

PageFeed::PageFeed(std::vector<Worker*> workers, metrics::Registry* registry)
    : workers_(std::move(workers)),
      pages_gauge_(registry->NewGauge("folio_edge_pages", "Pages held in memory")),
      bytes_gauge_(registry->NewGauge("folio_edge_page_bytes",
                                      "Bytes of page bodies held (gzip, the only copy kept); compare with "
                                      "process_resident_memory_bytes")),
      updates_(registry->NewCounter("folio_edge_updates_total", "Page updates applied")),
      bad_records_(registry->NewCounter("folio_edge_bad_records_total", "Undecodable page records skipped")) {
  batch_.reserve(kReplayBatch);
}

size_t PageFeed::pages() const { return static_cast<size_t>(pages_gauge_.Value()); }

void PageFeed::OnEntry(bus::KvEntry&& e) {
  std::string site, url;
  if (bus::ParseSiteKey(e.key, &site)) {
    OnSiteRecord(site, e);
    return;
  }
  if (bus::ParsePageKey(e.key, &site, &url)) OnPage(std::move(site), std::move(url), e);
}

void PageFeed::OnReplayed() {
  replayed_ = true;
  Flush();
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
  Add(Update{record_site, "", nullptr, std::move(rec), /*is_site=*/true});
}

// A page: built once here, shared by every worker.
void PageFeed::OnPage(std::string site, std::string url, const bus::KvEntry& e) {
  std::shared_ptr<const Page> page;
  if (!e.deleted) {
    bus::PageRecord rec;
    Status s = bus::DecodePageRecord(e.value, &rec);
    auto built = s.ok() ? BuildPage(rec, url, &tails_) : Result<std::shared_ptr<const Page>>(s);
    if (!built.ok()) {
      bad_records_.Increment();
      log::Warn("skipping bad page record", {{"site", site}, {"url", url}, {"error", built.status().message()}});
      return;
    }
    page = std::move(*built);
    url.clear();  // the page holds it
  }
  updates_.Increment();
  Add(Update{std::move(site), std::move(url), std::move(page), nullptr, /*is_site=*/false});
}

void PageFeed::Add(Update u) {
  batch_.push_back(std::move(u));
  if (replayed_ || batch_.size() >= kReplayBatch) Flush();
}

// Posts the held updates to every worker, in order, as one task each.
void PageFeed::Flush() {
  if (batch_.empty()) return;
  auto batch = std::make_shared<const std::vector<Update>>(std::move(batch_));
  batch_ = {};
  if (!replayed_) batch_.reserve(kReplayBatch);
  for (size_t i = 0; i < workers_.size(); ++i) {
    Worker* wp = workers_[i];
    // Worker 0 sets the gauges (they outlive the loops; this feed may not).
    metrics::Gauge* pages = i == 0 ? &pages_gauge_ : nullptr;
    metrics::Gauge* bytes = &bytes_gauge_;
    wp->loop().Post([wp, batch, pages, bytes] {
      SiteTables& t = wp->sites();
      for (const Update& u : *batch) {
        if (u.is_site && u.record) t.SetHosts(u.site, u.record->hosts);
        if (u.is_site && !u.record) t.RemoveHosts(u.site);
        if (u.is_site) t.SetTitle(u.site, u.record ? u.record->title : "");
        if (!u.is_site && u.page) t.Put(u.site, u.page);
        if (!u.is_site && !u.page) t.Erase(u.site, u.url);
      }
      if (pages == nullptr) return;
      pages->Set(static_cast<double>(t.pages()));
      bytes->Set(static_cast<double>(t.page_bytes()));
    });
  }
}

}  // namespace folio::edge
