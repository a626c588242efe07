// Sites: every site one folio-ingest serves, each with its own SiteWriter,
// and the API tokens that select them. A request's bearer token picks
// exactly one site and reaches that site's writer only, so one site's token
// can never write another.
//
// Two kinds of site: the flag site (--site, --site-name, --token; always
// served, token compared in constant time) and every row of the Store's
// sites table (token known only by its SHA-256). A table row named like the
// flag site shares its writer; both tokens then select it.
//
// Ownership: owns the SiteWriters; borrows the Store, ThreadPool, Registry
// and Bus, which must outlive it.
// Threading: Authenticate() may be called from any thread: it reads an
// immutable snapshot of the token table, swapped under mu_. Every other
// method runs on ingest's writer thread (it touches the Store and writers).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "folio/bus/bus.h"
#include "folio/core/status.h"
#include "folio/core/thread_pool.h"
#include "folio/metrics/metrics.h"
#include "site_writer.h"
#include "store.h"

namespace folio::ingest {

class Sites {
 public:
  // REQUIRES: bus::IsValidSiteName(flag_site.site). An empty flag_token
  // selects nothing.
  Sites(SiteOptions flag_site, std::string flag_token, Store* store, ThreadPool* pool,
        metrics::Registry* registry);

  // Loads the sites table and starts one writer per site plus the flag
  // site's. Fails (naming the site) if a writer cannot start.
  Status Start();

  // Any thread. The site the bearer token selects, or "" if none does.
  std::string Authenticate(std::string_view token) const;

  // Re-reads the sites table: starts writers for added sites and publishes
  // their site records (when a bus is set); drops removed sites, whose
  // tokens stop working at once. A new site whose writer fails to start is
  // logged and left out. A served site whose settings or readers changed
  // (`folio-ingest site set|reader|rotate-key`, Store::AllSitePrefs) gets
  // a new writer with them, whose Start re-publishes what they change, and
  // its site record is published again (if the new writer fails to start,
  // the old one stays, logged). Errors reading the tables leave everything
  // as it was.
  Status Reload();
  // Reloads only if another process committed to the database since the
  // last check (`folio-ingest site add|remove`). For the periodic timer.
  void ReloadIfChanged();

  // nullptr if the site is not (or no longer) served.
  SiteWriter* writer(std::string_view site);
  Store* store() { return store_; }

  // Each applies to every writer (the outbox is shared; see Store).
  void SetBus(bus::Bus* bus);
  bool PublishPending();
  void ResyncIfNeeded();  // logs failures and goes on with the next site
  // Puts every served site's record (bus::SiteKey; the flag site's too,
  // with the hosts of its table row or none) into the pages bucket and
  // waits for the acks. kUnavailable without a bus.
  Status PublishSiteRecords();
  // The record of a served site: hosts and title from its table row (the
  // flag site without one: no hosts, --site-name), access from its
  // settings (SiteAccessOf). SECRET: holds its session key and hashes.
  bus::SiteRecord RecordOf(const std::string& site) const;

 private:
  using TokenTable = std::unordered_map<std::string, std::string>;  // token sha256 -> site
  Status StartWriter(const SiteRow* row);
  Status PublishSiteRecord(const std::string& site);
  // Replaces the writers of the served sites whose settings differ from
  // prefs_ by ones started with `loaded`'s, and publishes their records.
  void ApplyPrefs(std::map<std::string, SitePrefs, std::less<>> loaded);

  const SiteOptions flag_site_;
  const std::string flag_token_;
  Store* store_;
  ThreadPool* pool_;
  metrics::Registry* registry_;
  bus::Bus* bus_ = nullptr;
  std::map<std::string, std::unique_ptr<SiteWriter>, std::less<>> writers_;
  std::map<std::string, SiteRow, std::less<>> rows_;  // the sites table as last loaded
  std::map<std::string, SitePrefs, std::less<>> prefs_;  // site_prefs as last loaded (absent: defaults)

  mutable std::mutex mu_;
  std::shared_ptr<const TokenTable> tokens_;  // GUARDED_BY(mu_); never null
};

}  // namespace folio::ingest
