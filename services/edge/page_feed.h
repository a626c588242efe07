// PageFeed: turns the entries of the KV bucket "pages" into updates of every
// worker's site tables. Packs and snapshot chunks (bus/page_pack.h, issue
// 26) are decoded and their ops applied in order, each page record decoded
// once, straight from the pack's bytes, and built into a Page once; the same
// shared Page goes to each worker's loop. Per-page keys of the layout before
// packs (bus::PageKey) are still read, so edges can be upgraded first. Site
// records (bus::SiteKey) (re)map a site's hosts and title on every worker;
// a deleted one withdraws its hosts and drops its pages. Undecodable
// records are counted (folio_edge_bad_records_total), logged and skipped;
// nothing else changes.
//
// Versions: the feed keeps, per site, the version applied (the largest a
// pack or a whole snapshot brought it to). A snapshot chunk of a version
// not above it is skipped without decoding its ops (a running edge already
// has it). A snapshot applied while the edge held pages of the site (it
// lagged and the packs it missed were purged) erases, after its last chunk,
// the site's pages it did not list. A resync snapshot (bus::PackKind::kResync:
// the bus lost data, or ingest's store went back to a backup) is always
// applied, and its version becomes the site's even if lower.
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
#include <cstdint>
#include <memory>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "folio/bus/bus.h"
#include "folio/bus/page_pack.h"
#include "folio/bus/site_schema.h"
#include "folio/metrics/metrics.h"
#include "page.h"
#include "site_table.h"
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
  using UrlSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;
  // One change to every worker's tables, in order.
  struct Update {
    enum Kind : uint8_t { kPut, kErase, kSite, kDropSite, kRetain };
    Kind kind = kPut;
    std::string site;
    std::string url;                                     // kErase
    std::shared_ptr<const Page> page;                    // kPut
    std::shared_ptr<const bus::SiteRecord> record;       // kSite; null: withdrawn
    std::shared_ptr<const SiteAuth> auth;                // kSite: who may read it; null: public
    std::shared_ptr<const UrlSet> keep;  // kRetain: URLs kept
  };
  // What the feed knows of one site (watcher thread).
  struct SiteFeed {
    int64_t applied = 0;     // version applied (lower bound)
    bool has_pages = false;  // a page of it was put since it was (re)created
    // The snapshot being applied: its version and next chunk expected; -1 none.
    int64_t snap_version = -1;
    uint32_t next_chunk = 0;
    bool prune = false;  // it began over pages: erase those it does not list
    UrlSet listed;
  };
  void OnSiteRecord(const std::string& site, const bus::KvEntry& e);
  void OnPage(std::string site, std::string url, const bus::KvEntry& e);
  void OnPack(const std::string& site, const bus::KvEntry& e);
  // A snapshot chunk whose ops were decoded; the feed's state of its site.
  void OnSnapshotChunk(const std::string& site, const bus::PackHeader& h, const std::vector<bus::PackOp>& ops,
                       SiteFeed* f);
  // A put of a pack or snapshot: the record decoded once, the page built once.
  bool PutRecord(const std::string& site, std::string_view url, std::string_view record);
  void Add(Update u);
  void Flush();

  std::vector<Worker*> workers_;
  metrics::Gauge& pages_gauge_;
  metrics::Gauge& bytes_gauge_;
  metrics::Counter& updates_;
  metrics::Counter& bad_records_;
  // Watcher thread only.
  HeadTails tails_;
  std::map<std::string, SiteFeed, std::less<>> feeds_;
  std::vector<Update> batch_;
  bool replayed_ = false;
};

}  // namespace folio::edge
