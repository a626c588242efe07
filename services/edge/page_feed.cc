#include "page_feed.h"

#include <algorithm>
#include <utility>

#include "folio/bus/page_schema.h"
#include "folio/core/log.h"

namespace folio::edge {
namespace {

// One update on one worker's tables (PageFeed::Update; a template: the type is private).
template <typename U>
void Apply(const U& u, SiteTables* t) {
  switch (u.kind) {
    case U::kPut: t->Put(u.site, u.page); break;
    case U::kErase: t->Erase(u.site, u.url); break;
    case U::kSite:
      if (u.record) t->SetHosts(u.site, u.record->hosts);
      else t->RemoveHosts(u.site);
      t->SetTitle(u.site, u.record ? u.record->title : "");
      t->SetAuth(u.site, u.auth);
      break;
    case U::kDropSite: t->EraseSite(u.site); break;
    case U::kRetain: t->Retain(u.site, [&](std::string_view url) { return u.keep->find(url) != u.keep->end(); }); break;
  }
}

}  // namespace

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
  if (bus::ParsePackKey(e.key, &site)) {
    OnPack(site, e);
    return;
  }
  if (bus::ParsePageKey(e.key, &site, &url)) OnPage(std::move(site), std::move(url), e);
}

void PageFeed::OnReplayed() {
  replayed_ = true;
  Flush();
}

// A site record: (re)map its hosts on every worker, or withdraw them and
// drop the site's pages (ingest purged them from the bucket: issue 26).
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
  const bool withdrawn = rec == nullptr;
  Update u;
  u.kind = Update::kSite;
  u.site = record_site;
  if (rec) u.auth = MakeSiteAuth(record_site, rec->access);
  u.record = std::move(rec);
  Add(std::move(u));
  if (withdrawn) {
    feeds_.erase(record_site);
    Update drop;
    drop.kind = Update::kDropSite;
    drop.site = record_site;
    Add(std::move(drop));
  }
}

// A page of the per-page layout: built once here, shared by every worker.
void PageFeed::OnPage(std::string site, std::string url, const bus::KvEntry& e) {
  if (!e.deleted) {
    PutRecord(site, url, e.value);
    return;
  }
  updates_.Increment();
  Update u;
  u.kind = Update::kErase;
  u.site = std::move(site);
  u.url = std::move(url);
  Add(std::move(u));
}

bool PageFeed::PutRecord(const std::string& site, std::string_view url, std::string_view record) {
  bus::PageRecord rec;
  Status s = bus::DecodePageRecord(record, &rec);
  auto built = s.ok() ? BuildPage(rec, url, &tails_) : Result<std::shared_ptr<const Page>>(s);
  if (!built.ok()) {
    bad_records_.Increment();
    log::Warn("skipping bad page record", {{"site", site}, {"url", url}, {"error", built.status().message()}});
    return false;
  }
  updates_.Increment();
  Update u;
  u.kind = Update::kPut;
  u.site = site;
  u.page = std::move(*built);
  Add(std::move(u));
  return true;
}

void PageFeed::OnPack(const std::string& site, const bus::KvEntry& e) {
  if (e.deleted) return;  // ingest never deletes a pack: it purges them, which nobody sees
  bus::PackHeader h;
  Status s = bus::DecodePackHeader(e.value, &h);
  SiteFeed& f = feeds_[site];
  // A snapshot this edge already has (it applied every pack up to it).
  if (s.ok() && h.kind == bus::PackKind::kSnapshot && f.applied >= h.version) return;
  std::vector<bus::PackOp> ops;
  if (s.ok()) s = bus::DecodePagePack(e.value, &h, &ops);
  if (!s.ok()) {
    bad_records_.Increment();
    log::Warn("skipping bad page pack", {{"key", e.key}, {"error", s.message()}});
    return;
  }
  if (bus::IsSnapshot(h.kind)) {
    OnSnapshotChunk(site, h, ops, &f);
    return;
  }
  f.snap_version = -1;  // a snapshot cut short (never, unless a purge raced us): nothing to prune
  f.listed.clear();
  for (const bus::PackOp& op : ops) {
    if (op.put) {
      f.has_pages = PutRecord(site, op.url, op.record) || f.has_pages;
      continue;
    }
    updates_.Increment();
    Update u;
    u.kind = Update::kErase;
    u.site = site;
    u.url = std::string(op.url);
    Add(std::move(u));
  }
  f.applied = std::max(f.applied, h.version);
}

void PageFeed::OnSnapshotChunk(const std::string& site, const bus::PackHeader& h,
                               const std::vector<bus::PackOp>& ops, SiteFeed* f) {
  if (h.chunk == 0) {
    f->snap_version = h.version;
    f->next_chunk = 0;
    f->prune = f->has_pages;
    f->listed.clear();
  }
  // Chunks out of sequence (the first ones were purged while this edge
  // lagged): their pages are still the newest, but nothing can be pruned.
  const bool in_sequence = f->snap_version == h.version && f->next_chunk == h.chunk;
  if (!in_sequence) f->snap_version = -1;
  for (const bus::PackOp& op : ops) {
    if (!op.put) continue;  // a snapshot lists pages only
    if (PutRecord(site, op.url, op.record)) f->has_pages = true;
    if (in_sequence && f->prune) f->listed.emplace(op.url);
  }
  f->next_chunk = h.chunk + 1;
  if (!in_sequence || h.chunk + 1 != h.chunks) return;
  // A resync's version is the site's now, even below what the edge had (a
  // restore from backup: its versions come again).
  f->applied = h.kind == bus::PackKind::kResync ? h.version : std::max(f->applied, h.version);
  f->snap_version = -1;
  if (!f->prune) return;
  Update u;
  u.kind = Update::kRetain;
  u.site = site;
  u.keep = std::make_shared<const UrlSet>(std::move(f->listed));
  f->listed = {};
  Add(std::move(u));
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
      for (const Update& u : *batch) Apply(u, &t);
      if (pages == nullptr) return;
      pages->Set(static_cast<double>(t.pages()));
      bytes->Set(static_cast<double>(t.page_bytes()));
    });
  }
}

}  // namespace folio::edge
