// PageFeed: turns the entries of the KV bucket "pages" into updates of every
// worker's site tables. Page entries (bus::PageKey) are decoded and built
// into a Page once, then the same shared Page goes to each worker's loop;
// site records (bus::SiteKey) (re)map or withdraw a site's hosts and title
// on every worker. Undecodable records are counted
// (folio_edge_bad_records_total), logged and skipped; nothing else changes.
//
// Order: every worker applies the updates in the order of the entries.
// During the initial replay they travel in batches (kReplayBatch entries per
// task posted to each loop, issue 12: one wake-up per batch, not per page);
// OnReplayed hands over the last batch, and from then on each entry goes
// out at once.
//
// Ownership: the workers and the registry are borrowed and must outlive the
// feed. Threads: OnEntry and OnReplayed run on the KV watcher's thread only;
// pages() may be read from any thread. The gauges are set by worker 0's
// loop (from its site tables) after each update it applies.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "folio/bus/bus.h"
#include "folio/bus/site_schema.h"
#include "folio/metrics/metrics.h"
#include "page.h"
#include "worker.h"

namespace folio::edge {

class PageFeed {
 public:
  // Entries per task posted to each worker during the initial replay.
  static constexpr size_t kReplayBatch = 512;

  // Registers folio_edge_pages, folio_edge_page_bytes,
  // folio_edge_updates_total and folio_edge_bad_records_total in `registry`.
  PageFeed(std::vector<Worker*> workers, metrics::Registry* registry);

  // One entry of the pages bucket (bus::KvWatcher::OnEntry). Watcher thread.
  void OnEntry(bus::KvEntry&& e);
  // The initial replay is done (bus::KvWatcher::OnReplayed): hands what is
  // held back to the workers. Call before anything that waits for the
  // workers to have the replay (PublicPort::OnReplayed). Watcher thread.
  void OnReplayed();

  // Pages held (the folio_edge_pages gauge).
  size_t pages() const;

 private:
  // One change to every worker's tables: a page put (page set), a page
  // erased (url set), or a site record set or withdrawn (is_site).
  struct Update {
    std::string site;
    std::string url;
    std::shared_ptr<const Page> page;
    std::shared_ptr<const bus::SiteRecord> record;
    bool is_site = false;
  };
  void OnSiteRecord(const std::string& site, const bus::KvEntry& e);
  void OnPage(std::string site, std::string url, const bus::KvEntry& e);
  void Add(Update u);
  void Flush();

  std::vector<Worker*> workers_;
  metrics::Gauge& pages_gauge_;
  metrics::Gauge& bytes_gauge_;
  metrics::Counter& updates_;
  metrics::Counter& bad_records_;
  // Watcher thread only.
  HeadTails tails_;
  std::vector<Update> batch_;
  bool replayed_ = false;
};

}  // namespace folio::edge
