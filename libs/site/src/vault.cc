#include "folio/site/vault.h"

#include <algorithm>

#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/markdown/slug.h"

namespace folio::site {

bool Vault::IsReservedUrl(std::string_view url) {
  return url == "/livez" || url == "/readyz" || url == "/metrics" || StartsWith(url, "/assets/") ||
         StartsWith(url, "/_folio/") || StartsWith(url, "/api/");
}

void Vault::Load(NoteMeta meta) {
  url_owner_[meta.url] = meta.path;
  index_.Add(meta.path, meta.aliases);
  std::string path = meta.path;
  notes_[path] = std::move(meta);
}

void Vault::Rebuild() {
  backlinks_.clear();
  for (auto& [path, n] : notes_) {
    n.out = ResolveAll(n);
    for (const auto& t : n.out) backlinks_[t].insert(path);
  }
}

std::string Vault::AssignUrl(const std::string& path, std::vector<std::string>* warnings) {
  std::string base = markdown::UrlForNotePath(path);
  auto owner = url_owner_.find(base);
  bool reserved = IsReservedUrl(base);
  if (!reserved && (owner == url_owner_.end() || owner->second == path)) return base;
  // Deterministic and stable: the same path always gets the same fallback.
  std::string url = base;
  if (url.size() > 1 && url.back() == '/') url.pop_back();
  url += "-" + Sha256Hex(path).substr(0, 6);
  if (reserved) {
    warnings->push_back("URL " + base + " is reserved by folio; this note is published at " + url);
  } else {
    warnings->push_back("URL " + base + " is already used by '" + owner->second +
                        "'; this note is published at " + url);
  }
  return url;
}

std::vector<std::string> Vault::ResolveAll(const NoteMeta& n) const {
  std::vector<std::string> out;
  for (const auto& t : n.targets) {
    if (t.empty()) continue;  // [[#Heading]]: same note
    if (auto r = index_.Resolve(t, n.path); r && r->path != n.path) out.push_back(r->path);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Vault::SetOut(NoteMeta& n, std::vector<std::string> out) {
  for (const auto& t : n.out) {
    auto it = backlinks_.find(t);
    if (it != backlinks_.end()) {
      it->second.erase(n.path);
      if (it->second.empty()) backlinks_.erase(it);
    }
  }
  n.out = std::move(out);
  for (const auto& t : n.out) backlinks_[t].insert(n.path);
}

namespace {
// Adds to `into` every element in exactly one of a, b (both sorted).
void AddSymmetricDifference(const std::vector<std::string>& a, const std::vector<std::string>& b,
                            std::set<std::string>* into) {
  std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(*into, into->end()));
}
}  // namespace

Impact Vault::Apply(std::vector<NoteMeta> upserts, const std::vector<std::string>& deletes) {
  Impact impact;
  bool names_changed = false;  // the set of linkable names changed: re-resolve everyone
  std::set<std::string> backlink_changed;

  for (const auto& path : deletes) {
    auto it = notes_.find(path);
    if (it == notes_.end()) continue;
    names_changed = true;
    impact.home_changed = true;
    NoteMeta& n = it->second;
    for (const auto& t : n.out) backlink_changed.insert(t);
    SetOut(n, {});
    impact.deleted_urls.push_back(n.url);
    url_owner_.erase(n.url);
    index_.Remove(path);
    notes_.erase(it);
  }

  std::set<std::string> upserted;
  for (auto& u : upserts) {
    upserted.insert(u.path);
    auto it = notes_.find(u.path);
    if (it == notes_.end()) {
      names_changed = true;
      impact.home_changed = true;
      u.url = AssignUrl(u.path, &impact.url_warnings[u.path]);
      url_owner_[u.url] = u.path;
      index_.Add(u.path, u.aliases);
      std::string path = u.path;
      u.out.clear();
      notes_.emplace(path, std::move(u));
      continue;
    }
    NoteMeta& old = it->second;
    if (old.aliases != u.aliases) {
      names_changed = true;
      index_.Add(u.path, u.aliases);
    }
    if (old.title != u.title) {
      impact.home_changed = true;
      // Pages listing this note as a backlink show its title.
      for (const auto& t : old.out) backlink_changed.insert(t);
      for (const auto& t : ResolveAll(u)) backlink_changed.insert(t);
    }
    u.url = old.url;
    u.out = std::move(old.out);
    old = std::move(u);
  }

  for (auto& [path, n] : notes_) {
    bool is_upserted = upserted.count(path) > 0;
    if (!is_upserted && !names_changed) continue;
    std::vector<std::string> out = ResolveAll(n);
    if (out == n.out) continue;
    AddSymmetricDifference(n.out, out, &backlink_changed);
    SetOut(n, std::move(out));
    if (!is_upserted) impact.render.insert(path);  // its links now land elsewhere
  }

  impact.render.insert(upserted.begin(), upserted.end());
  for (const auto& p : backlink_changed) {
    if (notes_.count(p)) impact.render.insert(p);
  }
  return impact;
}

const NoteMeta* Vault::Find(std::string_view path) const {
  auto it = notes_.find(path);
  return it == notes_.end() ? nullptr : &it->second;
}

std::vector<std::string> Vault::Backlinks(std::string_view path) const {
  auto it = backlinks_.find(path);
  if (it == backlinks_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::optional<markdown::Resolution> Vault::Resolve(std::string_view target, std::string_view from) const {
  return index_.Resolve(target, from);
}

bool Vault::HasIndexNote() const { return url_owner_.count("/") > 0; }

}  // namespace folio::site
