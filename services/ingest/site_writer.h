// SiteWriter: applies pushes to one site. Validated notes go through two
// parallel md4c passes (metadata and links; then full pages for exactly the
// notes the change affects), one SQLite transaction, then JetStream publish.
//
// Threading: every method runs on ingest's writer thread; rendering fans
// out to the ThreadPool and joins before returning.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "folio/bus/bus.h"
#include "folio/core/status.h"
#include "folio/core/thread_pool.h"
#include "folio/metrics/metrics.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "folio/site/vault.h"
#include "push_request.h"
#include "store.h"

namespace folio::ingest {

struct SiteOptions {
  std::string site = "default";        // namespace of keys and rows
  std::string site_name = "folio";     // shown on pages
  std::string base_url;                // "https://notes.example.com": absolute links in RSS, sitemap, OG; "" = relative
  std::string mermaid_url = "https://cdn.jsdelivr.net/npm/mermaid@11/dist/mermaid.esm.min.mjs";
                                       // loaded only by pages with a mermaid diagram
};

struct PushSummary {
  int64_t version = 0;
  size_t received = 0, changed = 0, rendered = 0, deleted = 0;
  size_t listings = 0;     // generated pages (listings, feeds, redirects) re-rendered or removed
  bool published = false;  // false: committed, publish pending (retried)
  std::string phases;      // "hash=1 meta=3 ..." milliseconds per phase, for the log
  std::string notes_json;  // [{"path","url","warnings":[...]}...]
};

class SiteWriter {
 public:
  SiteWriter(SiteOptions options, Store* store, ThreadPool* pool, metrics::Registry* registry);

  // Loads the vault and writes the site's fixed pages (stylesheet, 404) if
  // they are missing or stale.
  Status Start();
  // Sets the bus (once connected); nullptr while disconnected.
  void SetBus(bus::Bus* bus) { bus_ = bus; }

  Result<PushSummary> Push(PushRequest req);
  // {"version":N,"notes":[{"path","sha256","url"}]}
  std::string ManifestJson() const;

  // Publishes the outbox; true when it is empty afterwards.
  bool PublishPending();
  // If the bus lost its data (no marker for our version), republishes every page.
  Status ResyncIfNeeded();
  const std::string& site() const { return options_.site; }

 private:
  struct Rendered;
  void AddPage(Commit* c, std::string url, uint16_t status, std::string content_type,
               std::string cache_control, std::string body, int64_t last_modified_s,
               std::string location = "");
  // Adds every generated page whose content changed since the last commit
  // (all of them when `force`); returns how many were added or removed.
  // Only the listings `only` selects are built and diffed (null: all of them).
  size_t AddChangedListings(Commit* c, int64_t now_s, bool force, const site::ListingFilter* only,
                            std::map<std::string, std::pair<uint64_t, uint16_t>>* next_fingerprints);
  site::SiteInfo Info() const;

  SiteOptions options_;
  Store* store_;
  ThreadPool* pool_;
  bus::Bus* bus_ = nullptr;
  site::Vault vault_;
  int64_t version_ = 0;
  // Generated page URL -> (fingerprint, status) as last published.
  std::map<std::string, std::pair<uint64_t, uint16_t>> listing_fp_;
  metrics::Counter* rendered_total_;
  metrics::Counter* publish_failures_;
  metrics::Gauge* outbox_pending_;
};

}  // namespace folio::ingest
