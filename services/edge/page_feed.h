// PageFeed: turns the entries of the KV bucket "pages" into updates of every
// worker's site tables. Page entries (bus::PageKey) are decoded and built
// into a Page once, then the same shared Page is posted to each worker's
// loop; site records (bus::SiteKey) (re)map or withdraw a site's hosts and
// title on every worker. Undecodable records are counted
// (folio_edge_bad_records_total), logged and skipped; nothing else changes.
//
// Ownership: the workers and the registry are borrowed and must outlive the
// feed. Threads: OnEntry runs on the KV watcher's thread only (it keeps the
// per-key sizes behind the page gauges there); pages() may be read from any
// thread.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "folio/bus/bus.h"
#include "folio/metrics/metrics.h"
#include "worker.h"

namespace folio::edge {

class PageFeed {
 public:
  // Registers folio_edge_pages, folio_edge_page_bytes,
  // folio_edge_updates_total and folio_edge_bad_records_total in `registry`.
  PageFeed(std::vector<Worker*> workers, metrics::Registry* registry);

  // One entry of the pages bucket (bus::KvWatcher::OnEntry). Watcher thread.
  void OnEntry(bus::KvEntry&& e);

  // Pages held (the folio_edge_pages gauge).
  size_t pages() const;

 private:
  void OnSiteRecord(const std::string& site, const bus::KvEntry& e);
  void OnPage(const std::string& site, const std::string& url, const bus::KvEntry& e);

  std::vector<Worker*> workers_;
  metrics::Gauge& pages_gauge_;
  metrics::Gauge& bytes_gauge_;
  metrics::Counter& updates_;
  metrics::Counter& bad_records_;
  // Page sizes by key; the gauges are their summary. Watcher thread only.
  std::unordered_map<std::string, size_t> sizes_;
  double total_bytes_ = 0;
};

}  // namespace folio::edge
