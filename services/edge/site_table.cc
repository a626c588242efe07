#include "site_table.h"

#include "folio/auth/session.h"
#include "folio/bus/hosts.h"
#include "folio/site/search_page.h"

namespace folio::edge {

std::shared_ptr<const SiteAuth> MakeSiteAuth(const std::string& site, const bus::SiteAccess& access) {
  if (!access.private_site && access.readers.empty() && access.session_key.empty()) return nullptr;
  auto a = std::make_shared<SiteAuth>();
  a->site = site;
  a->private_site = access.private_site;
  (void)auth::DecodeSessionKey(access.session_key, &a->key);  // "" when absent or malformed: nobody signs in
  a->ttl_s = access.session_ttl_s;
  a->readers = access.readers;
  return a;
}

SiteTables::SiteTables(std::string default_site) : default_site_(std::move(default_site)) {
  host_scratch_.reserve(bus::kMaxHostNameSize);
}

void SiteTables::Put(std::string_view site, std::shared_ptr<const Page> page) {
  auto it = sites_.find(site);
  if (it == sites_.end()) it = sites_.emplace(std::string(site), Site{}).first;
  PageTable& pages = it->second.pages;
  std::string_view url = page->url();
  if (url == kNotFoundKey) {
    Result<std::string> html = page->Identity();  // a corrupt body: no name
    it->second.name = html.ok() ? site::SiteNameFromPage(html.value()) : std::string();
    it->second.lang = html.ok() ? site::LangFromPage(html.value()) : std::string();
    it->second.analytics = html.ok() ? site::AnalyticsFromPage(html.value()) : site::SiteAnalytics{};
  }
  page_bytes_ += page->body_bytes();
  auto at = pages.find(url);
  if (at == pages.end()) {
    pages.emplace(url, std::move(page));
    ++pages_;
    return;
  }
  page_bytes_ -= at->second->body_bytes();
  // The key views the old page's URL: re-key it before that page can go.
  auto node = pages.extract(at);
  node.key() = url;
  node.mapped() = std::move(page);
  pages.insert(std::move(node));
}

void SiteTables::Erase(std::string_view site, std::string_view url) {
  auto it = sites_.find(site);
  if (it == sites_.end()) return;
  if (url == kNotFoundKey) {
    it->second.name.clear();
    it->second.lang.clear();
    it->second.analytics = {};
  }
  auto at = it->second.pages.find(url);
  if (at == it->second.pages.end()) return;
  page_bytes_ -= at->second->body_bytes();
  --pages_;
  it->second.pages.erase(at);
}

void SiteTables::Retain(std::string_view site, const std::function<bool(std::string_view url)>& keep) {
  auto it = sites_.find(site);
  if (it == sites_.end()) return;
  PageTable& pages = it->second.pages;
  for (auto at = pages.begin(); at != pages.end();) {
    if (keep(at->first)) {
      ++at;
      continue;
    }
    if (at->first == kNotFoundKey) {
      it->second.name.clear();
      it->second.lang.clear();
      it->second.analytics = {};
    }
    page_bytes_ -= at->second->body_bytes();
    --pages_;
    at = pages.erase(at);
  }
}

void SiteTables::EraseSite(std::string_view site) {
  Retain(site, [](std::string_view) { return false; });
}

void SiteTables::SetHosts(const std::string& site, const std::vector<std::string>& hosts) {
  RemoveHosts(site);
  auto it = sites_.find(site);
  if (it == sites_.end()) it = sites_.emplace(site, Site{}).first;
  it->second.hosts = hosts;
  for (const std::string& h : hosts) hosts_.insert_or_assign(h, site);
}

void SiteTables::RemoveHosts(std::string_view site) {
  auto it = sites_.find(site);
  if (it == sites_.end()) return;
  for (const std::string& h : it->second.hosts) {
    auto at = hosts_.find(h);
    if (at != hosts_.end() && at->second == site) hosts_.erase(at);  // unless another site took it since
  }
  it->second.hosts.clear();
}

void SiteTables::SetTitle(const std::string& site, std::string title) {
  auto it = sites_.find(site);
  if (it == sites_.end()) it = sites_.emplace(site, Site{}).first;
  it->second.title = std::move(title);
}

void SiteTables::SetAuth(const std::string& site, std::shared_ptr<const SiteAuth> auth) {
  auto it = sites_.find(site);
  if (it == sites_.end()) it = sites_.emplace(site, Site{}).first;
  it->second.auth = std::move(auth);
}

std::string SiteTables::NameOf(std::string_view site) const {
  auto it = sites_.find(site);
  if (it != sites_.end() && !it->second.name.empty()) return it->second.name;
  if (it != sites_.end() && !it->second.title.empty()) return it->second.title;
  return std::string(site);
}

std::string SiteTables::LangOf(std::string_view site) const {
  auto it = sites_.find(site);
  return it == sites_.end() ? std::string() : it->second.lang;
}

site::SiteAnalytics SiteTables::AnalyticsOf(std::string_view site) const {
  auto it = sites_.find(site);
  return it == sites_.end() ? site::SiteAnalytics{} : it->second.analytics;
}

std::string_view SiteTables::Resolve(std::string_view host_header) {
  if (host_header.empty() || !bus::NormalizeHost(host_header, &host_scratch_)) return default_site_;
  auto it = hosts_.find(std::string_view(host_scratch_));
  return it == hosts_.end() ? std::string_view(default_site_) : std::string_view(it->second);
}

const PageTable* SiteTables::Find(std::string_view host_header, const SiteAuth** auth, std::string_view* site) {
  std::string_view name = Resolve(host_header);
  if (site != nullptr) *site = name;
  auto it = sites_.find(name);
  if (auth != nullptr) *auth = it == sites_.end() ? nullptr : it->second.auth.get();
  return it == sites_.end() ? nullptr : &it->second.pages;
}

std::shared_ptr<const SiteAuth> SiteTables::AuthOf(std::string_view host_header) {
  auto it = sites_.find(Resolve(host_header));
  return it == sites_.end() ? nullptr : it->second.auth;
}

std::string SiteTables::SiteOf(std::string_view host_header) { return std::string(Resolve(host_header)); }

}  // namespace folio::edge
