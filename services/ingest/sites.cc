#include "sites.h"

#include "folio/bus/page_schema.h"
#include "folio/bus/site_schema.h"
#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/core/memory.h"
#include "folio/core/secret.h"

namespace folio::ingest {
namespace {

constexpr int64_t kAckTimeoutMs = 10'000;

SiteOptions OptionsFor(const SiteRow& row, const SiteOptions& flag_site) {
  SiteOptions o = flag_site;
  o.site = row.name;
  // A table row named like the flag site keeps --site-name unless it has a title.
  if (!row.title.empty()) o.site_name = row.title;
  else if (row.name != flag_site.site) o.site_name = row.name;
  // --base-url belongs to the flag site; another site's public URL is its first host.
  if (row.name != flag_site.site) o.base_url = row.hosts.empty() ? "" : "https://" + row.hosts.front();
  return o;
}

}  // namespace

Sites::Sites(SiteOptions flag_site, std::string flag_token, Store* store, ThreadPool* pool,
             metrics::Registry* registry)
    : flag_site_(std::move(flag_site)), flag_token_(std::move(flag_token)), store_(store), pool_(pool),
      registry_(registry), tokens_(std::make_shared<TokenTable>()) {}

Status Sites::Start() {
  auto rows = store_->ListSites();
  if (!rows.ok()) return rows.status();
  auto prefs = store_->AllSitePrefs();
  if (!prefs.ok()) return prefs.status();
  prefs_.insert(prefs->begin(), prefs->end());
  auto tokens = std::make_shared<TokenTable>();
  const SiteRow* flag_row = nullptr;
  for (SiteRow& row : *rows) {
    std::string name = row.name;
    auto [it, inserted] = rows_.emplace(name, std::move(row));
    if (name == flag_site_.site) flag_row = &it->second;
    (*tokens)[it->second.token_sha256] = name;
  }
  // The flag site first: it exists even when the table is empty.
  if (Status s = StartWriter(flag_row); !s.ok()) return s;
  for (const auto& [name, row] : rows_) {
    if (writers_.count(name)) continue;
    if (Status s = StartWriter(&row); !s.ok()) return s;
  }
  (void)store_->DataVersionChanged();  // the baseline for ReloadIfChanged
  std::lock_guard<std::mutex> l(mu_);
  tokens_ = std::move(tokens);
  return Status::Ok();
}

Status Sites::StartWriter(const SiteRow* row) {
  SiteOptions o = row ? OptionsFor(*row, flag_site_) : flag_site_;
  auto p = prefs_.find(o.site);
  o.prefs = p == prefs_.end() ? SitePrefs() : p->second;
  auto w = std::make_unique<SiteWriter>(o, store_, pool_, registry_);
  if (Status s = w->Start(); !s.ok()) {
    return Status(s.code(), "site \"" + o.site + "\": " + s.message());
  }
  if (bus_) w->SetBus(bus_);
  log::Info("serving site", {{"site", o.site}, {"title", o.site_name}});
  writers_[o.site] = std::move(w);
  return Status::Ok();
}

std::string Sites::Authenticate(std::string_view token) const {
  if (token.empty()) return "";
  if (SameSecret(token, flag_token_)) return flag_site_.site;
  // Only the hash is looked up: a timing difference reveals bits of a
  // SHA-256, not of the token.
  std::string hash = Sha256Hex(token);
  std::shared_ptr<const TokenTable> tokens;
  {
    std::lock_guard<std::mutex> l(mu_);
    tokens = tokens_;
  }
  auto it = tokens->find(hash);
  return it == tokens->end() ? std::string() : it->second;
}

Status Sites::Reload() {
  auto rows = store_->ListSites();
  if (!rows.ok()) return rows.status();
  auto all_prefs = store_->AllSitePrefs();
  if (!all_prefs.ok()) return all_prefs.status();
  std::map<std::string, SitePrefs, std::less<>> prefs(all_prefs->begin(), all_prefs->end());
  auto tokens = std::make_shared<TokenTable>();
  std::map<std::string, SiteRow, std::less<>> loaded;
  for (SiteRow& row : *rows) {
    std::string name = row.name;
    loaded.emplace(std::move(name), std::move(row));
  }
  for (const auto& [name, row] : loaded) {
    if (!writers_.count(name)) {
      if (Status s = StartWriter(&row); !s.ok()) {
        log::Error("cannot serve a new site", {{"site", name}, {"error", s.message()}});
        continue;
      }
      writers_[name]->PublishPending();
      rows_[name] = row;  // RecordOf reads it (rows_ is replaced as a whole below)
      if (bus_) {
        if (Status s = PublishSiteRecord(name); !s.ok()) {
          log::Warn("site record not published; will publish at next start",
                    {{"site", name}, {"error", s.message()}});
        }
        // A site added again: its removal purged its pages from the bus.
        if (Status s = writers_[name]->ResyncIfNeeded(); !s.ok()) {
          log::Warn("resync failed", {{"site", name}, {"error", s.message()}});
        }
      }
    }
    (*tokens)[row.token_sha256] = name;
  }
  for (auto it = writers_.begin(); it != writers_.end();) {
    if (it->first != flag_site_.site && !loaded.count(it->first)) {
      log::Info("site removed; its token no longer works", {{"site", it->first}});
      it = writers_.erase(it);
    } else {
      ++it;
    }
  }
  rows_ = std::move(loaded);
  // After the removals: a removed site's record must not come back.
  ApplyPrefs(std::move(prefs));
  std::lock_guard<std::mutex> l(mu_);
  tokens_ = std::move(tokens);
  return Status::Ok();
}

void Sites::ReloadIfChanged() {
  auto changed = store_->DataVersionChanged();
  if (!changed.ok()) {
    log::Warn("cannot check the database for new sites", {{"error", changed.status().message()}});
    return;
  }
  if (!*changed) return;
  if (Status s = Reload(); !s.ok()) log::Warn("sites reload failed", {{"error", s.message()}});
}

SiteWriter* Sites::writer(std::string_view site) {
  auto it = writers_.find(site);
  return it == writers_.end() ? nullptr : it->second.get();
}

void Sites::SetBus(bus::Bus* bus) {
  bus_ = bus;
  for (auto& [name, w] : writers_) w->SetBus(bus);
}

bool Sites::PublishPending() {
  bool all = true;
  for (auto& [name, w] : writers_) all = w->PublishPending() && all;
  return all;
}

void Sites::ResyncIfNeeded() {
  for (auto& [name, w] : writers_) {
    if (Status s = w->ResyncIfNeeded(); !s.ok()) {
      log::Warn("resync failed", {{"site", name}, {"error", s.message()}});
    }
  }
  ReleaseFreeHeap();  // a resync held every page record of a site at once
}

bus::SiteRecord Sites::RecordOf(const std::string& site) const {
  bus::SiteRecord rec;
  rec.site = site;
  if (auto row = rows_.find(site); row != rows_.end()) {
    rec.hosts = row->second.hosts;
    rec.title = row->second.title;
  } else {
    rec.title = flag_site_.site_name;  // the flag site: edges route it as their default site
  }
  if (auto p = prefs_.find(site); p != prefs_.end()) rec.access = SiteAccessOf(p->second);
  return rec;
}

void Sites::ApplyPrefs(std::map<std::string, SitePrefs, std::less<>> loaded) {
  std::vector<std::string> changed;
  for (const auto& [name, w] : writers_) {
    auto was = prefs_.find(name);
    auto now = loaded.find(name);
    const SitePrefs before = was == prefs_.end() ? SitePrefs() : was->second;
    const SitePrefs after = now == loaded.end() ? SitePrefs() : now->second;
    if (!SamePrefs(before, after)) changed.push_back(name);
  }
  std::map<std::string, SitePrefs, std::less<>> old = std::move(prefs_);
  prefs_ = std::move(loaded);
  for (const std::string& name : changed) {
    auto keep = std::move(writers_[name]);
    auto row = rows_.find(name);
    if (Status s = StartWriter(row == rows_.end() ? nullptr : &row->second); !s.ok()) {
      log::Error("site settings not applied: its writer did not start", {{"site", name}, {"error", s.message()}});
      writers_[name] = std::move(keep);
      if (auto o = old.find(name); o != old.end()) prefs_[name] = o->second;
      else prefs_.erase(name);
      continue;
    }
    log::Info("site settings changed: pages re-published", {{"site", name}});
    writers_[name]->PublishPending();
    if (!bus_) continue;
    if (Status s = PublishSiteRecord(name); !s.ok()) {
      log::Warn("site record not published; will publish at next start", {{"site", name}, {"error", s.message()}});
    }
  }
}

Status Sites::PublishSiteRecord(const std::string& site) {
  if (Status s = bus_->KvPutAsync(bus::kPagesBucket, bus::SiteKey(site), bus::EncodeSiteRecord(RecordOf(site)));
      !s.ok()) {
    return s;
  }
  return bus_->WaitForAcks(kAckTimeoutMs);
}

Status Sites::PublishSiteRecords() {
  if (!bus_) return Status::Unavailable("not connected to NATS");
  for (const auto& [name, w] : writers_) {
    if (Status s = bus_->KvPutAsync(bus::kPagesBucket, bus::SiteKey(name), bus::EncodeSiteRecord(RecordOf(name)));
        !s.ok()) {
      return s;
    }
  }
  return bus_->WaitForAcks(kAckTimeoutMs);
}

}  // namespace folio::ingest
