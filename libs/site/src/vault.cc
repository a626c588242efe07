#include "folio/site/vault.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/markdown/slug.h"

namespace folio::site {
namespace {

// Adds to `into` every element in exactly one of a, b (both sorted).
void AddSymmetricDifference(const std::vector<std::string>& a, const std::vector<std::string>& b,
                            std::set<std::string>* into) {
  std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(*into, into->end()));
}

// A permalink as an URL path: leading '/', no trailing '/' (except "/").
std::string NormalizePermalink(std::string_view p) {
  std::string u;
  if (p.empty() || p.front() != '/') u = "/";
  u += p;
  while (u.size() > 1 && u.back() == '/') u.pop_back();
  return u;
}

// "Docs/Docs.md": a note named like its folder is the folder's page (docs/markdown.md "URLs").
bool IsFolderNote(std::string_view path) {
  std::string_view dir = PathDir(path);
  if (dir.empty()) return false;
  std::string_view name = PathBase(path);
  if (name.size() > 3) name.remove_suffix(3);  // ".md"
  return EqualsIgnoreAsciiCase(name, PathBase(dir));
}

}  // namespace

bool Vault::IsReservedUrl(std::string_view url) {
  // Generated listings, tags and search are under markdown::kGeneratedPrefix,
  // which no slug can produce (only a permalink could ask for it).
  return url == "/livez" || url == "/readyz" || url == "/metrics" || url == "/rss.xml" || url == "/feed.json" ||
         url == "/publish.css" || url == "/sitemap.xml" || url == "/robots.txt" || StartsWith(url, "/assets/") ||
         StartsWith(url, "/_folio/") || StartsWith(url, "/api/") || StartsWith(url, markdown::kGeneratedPrefix) ||
         url == "/_";
}

// Private notes keep their URL and resolve as link targets (Index) but are
// never listed: listing_ feeds every listing, feed, sitemap and the graph.
void Vault::List(const NoteMeta& n) {
  if (IsListed(n)) listing_.Add(n, KeyOf(n));
}

void Vault::Unlist(const NoteMeta& n) {
  if (IsListed(n)) listing_.Remove(n);
}

void Vault::Index(const NoteMeta& n) {
  if (!n.published) return;
  url_owner_[n.url] = KeyOf(n);
  index_.Add(n.path, n.aliases);
}

void Vault::Unindex(const NoteMeta& n) {
  if (!n.published) return;
  auto it = url_owner_.find(n.url);
  if (it != url_owner_.end() && it->second == n.path) url_owner_.erase(it);
  index_.Remove(n.path);
}

std::string_view Vault::KeyOf(const NoteMeta& n) const {
  auto it = notes_.find(n.path);
  if (it == notes_.end()) {  // a broken invariant: the link maps would dangle
    std::fprintf(stderr, "vault: note '%s' linked before it is stored\n", n.path.c_str());
    std::abort();
  }
  return it->first;
}

void Vault::AddLinker(const NoteMeta& n) {
  if (n.targets.empty() && n.embeds.empty()) return;
  std::string_view key = KeyOf(n);
  for (const auto* list : {&n.targets, &n.embeds}) {
    for (const auto& t : *list) {
      for (auto& k : markdown::LinkIndex::DependencyKeys(t)) linkers_[std::move(k)].insert(key);
    }
  }
}

void Vault::RemoveLinker(const NoteMeta& n) {
  for (const auto* list : {&n.targets, &n.embeds}) {
    for (const auto& t : *list) {
      for (const auto& k : markdown::LinkIndex::DependencyKeys(t)) {
        auto it = linkers_.find(k);
        if (it == linkers_.end()) continue;
        it->second.erase(n.path);
        if (it->second.empty()) linkers_.erase(it);
      }
    }
  }
}

void Vault::Load(NoteMeta meta) {
  auto [it, added] = notes_.try_emplace(meta.path);
  if (!added) {
    RemoveLinker(it->second);
    Unlink(it->second);
    Unindex(it->second);
    Unlist(it->second);
  }
  it->second = std::move(meta);
  Index(it->second);
  List(it->second);
  AddLinker(it->second);
}

void Vault::Rebuild() {
  backlinks_.clear();
  embedders_.clear();
  for (auto& [path, n] : notes_) {
    n.out = n.published ? ResolveAll(n.targets, n.path) : std::vector<std::string>{};
    n.embeds_out = n.published ? ResolveAll(n.embeds, n.path) : std::vector<std::string>{};
    for (const auto& t : n.out) backlinks_[t].insert(path);
    for (const auto& t : n.embeds_out) embedders_[t].insert(path);
  }
}

std::string Vault::AssignUrl(const NoteMeta& n, std::vector<std::string>* warnings) {
  std::string base = !n.permalink.empty() ? NormalizePermalink(n.permalink)
                     : IsFolderNote(n.path)  ? markdown::UrlForNotePath(std::string(PathDir(n.path)) + "/index.md")
                                             : markdown::UrlForNotePath(n.path);
  auto owner = url_owner_.find(base);
  bool reserved = IsReservedUrl(base);
  if (!reserved && (owner == url_owner_.end() || owner->second == n.path)) return base;
  // Deterministic and stable: the same path always gets the same fallback.
  std::string url = base;
  if (url.size() > 1 && url.back() == '/') url.pop_back();
  url += "-" + Sha256Hex(n.path).substr(0, 6);
  if (reserved) {
    warnings->push_back("URL " + base + " is reserved by folio; this note is published at " + url);
  } else {
    warnings->push_back("URL " + base + " is already used by '" + std::string(owner->second) +
                        "'; this note is published at " + url);
  }
  return url;
}

std::vector<std::string> Vault::ResolveAll(const std::vector<std::string>& targets, const std::string& from) const {
  std::vector<std::string> out;
  for (const auto& t : targets) {
    if (t.empty()) continue;  // [[#Heading]]: same note
    if (auto r = index_.Resolve(t, from); r && r->path != from && notes_.count(r->path)) out.push_back(r->path);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Vault::Unlink(NoteMeta& n) {
  for (const auto& t : n.out) {
    auto it = backlinks_.find(t);
    if (it != backlinks_.end()) {
      it->second.erase(n.path);
      if (it->second.empty()) backlinks_.erase(it);
    }
  }
  for (const auto& t : n.embeds_out) {
    auto it = embedders_.find(t);
    if (it != embedders_.end()) {
      it->second.erase(n.path);
      if (it->second.empty()) embedders_.erase(it);
    }
  }
  n.out.clear();
  n.embeds_out.clear();
}

void Vault::SetOut(NoteMeta& n, std::vector<std::string> out) {
  Unlink(n);
  n.out = std::move(out);
  n.embeds_out = n.published ? ResolveAll(n.embeds, n.path) : std::vector<std::string>{};
  if (n.out.empty() && n.embeds_out.empty()) return;
  std::string_view key = KeyOf(n);
  for (const auto& t : n.out) backlinks_[t].insert(key);
  for (const auto& t : n.embeds_out) embedders_[t].insert(key);
}

std::set<std::string> Vault::EmbeddersOf(const std::set<std::string>& paths) const {
  std::set<std::string> seen;
  std::vector<std::string> todo(paths.begin(), paths.end());
  while (!todo.empty()) {
    std::string p = std::move(todo.back());
    todo.pop_back();
    auto it = embedders_.find(p);
    if (it == embedders_.end()) continue;
    for (std::string_view e : it->second) {
      if (seen.emplace(e).second) todo.emplace_back(e);
    }
  }
  return seen;
}

// What one Apply call has found so far.
struct Vault::ApplyState {
  Impact impact;
  std::vector<NoteMeta>* replaced = nullptr;  // Apply's: where overwritten and deleted notes go
  // Names (LinkIndex::NameKeys) added or removed: the notes whose links
  // depend on them are resolved again.
  std::set<std::string> changed_names;
  void NamesOf(const NoteMeta& n) {
    for (auto& k : markdown::LinkIndex::NameKeys(n.path, n.aliases)) changed_names.insert(std::move(k));
  }
  std::set<std::string> backlink_changed;
  std::set<std::string> content_changed;  // notes whose own rendering changes (for embedders)
  std::set<std::string> upserted;
  // Upserted notes whose own links must be resolved again: new ones, and
  // those whose targets, embeds or publication changed (an edit of the text
  // alone keeps its resolved links unless a name they depend on changed).
  std::set<std::string> relinked;
  std::vector<NoteMeta> deleted;  // published notes this change deleted (their last state)
  std::vector<std::string> created;  // paths of notes this change added
};

namespace {

// Whether the listing index holds `a` and `b` alike but for their recency:
// the same presence, entry (title, URL, day), tags and aliases.
bool SameListing(const NoteMeta& a, const NoteMeta& b) {
  if (IsListed(a) != IsListed(b)) return false;
  if (!IsListed(a)) return true;
  const LinkItem x = ItemOf(a), y = ItemOf(b);
  return x.title == y.title && x.url == y.url && x.date == y.date && a.tags == b.tags && a.aliases == b.aliases;
}

// "Folder/Old name.md" -> "old name": what an alias keeping the old name says.
std::string NoteName(std::string_view path) {
  std::string_view base = PathBase(path);
  if (base.size() > 3 && EqualsIgnoreAsciiCase(base.substr(base.size() - 3), ".md")) base.remove_suffix(3);
  return AsciiLower(base);
}

// A note added in the same change as `gone` was deleted is its new self when
// it has the same bytes, the same permalink, keeps the old name as an alias,
// or its text mostly repeats gone's (renamed_from, found by ingest).
bool IsRenameOf(const NoteMeta& added, const NoteMeta& gone) {
  // A public URL never redirects to a private note (nor a private one
  // anywhere): the 301 would name where it went.
  if (!IsListed(added) || !IsListed(gone)) return false;
  if (added.sha256 == gone.sha256 || added.renamed_from == gone.path) return true;
  if (!gone.permalink.empty() && added.permalink == gone.permalink) return true;
  std::string old_name = NoteName(gone.path);
  for (const auto& a : added.aliases) {
    if (AsciiLower(a) == old_name) return true;
  }
  return false;
}

}  // namespace

Impact Vault::Apply(std::vector<NoteMeta> upserts, const std::vector<std::string>& deletes,
                    std::vector<NoteMeta>* replaced) {
  ApplyState s;
  s.replaced = replaced;
  for (const auto& path : deletes) ApplyDelete(path, s);
  for (auto& u : upserts) ApplyUpsert(u, s);
  // Renames: a deleted note's URL answers 301 to the note that replaced it.
  for (const NoteMeta& gone : s.deleted) {
    for (const auto& path : s.created) {
      const NoteMeta* added = Find(path);
      if (added == nullptr || added->url == gone.url || !IsRenameOf(*added, gone)) continue;
      std::erase(s.impact.deleted_urls, gone.url);
      s.impact.moved[gone.url] = added->url;
      break;
    }
  }
  for (const auto& path : s.created) {  // a hint for this change only
    if (auto it = notes_.find(path); it != notes_.end()) it->second.renamed_from.clear();
  }
  ReresolveLinks(s);
  CollectRender(s);
  return std::move(s.impact);
}

void Vault::Restore(std::vector<NoteMeta> notes, const std::vector<std::string>& remove) {
  restoring_ = true;
  (void)Apply(std::move(notes), remove);
  restoring_ = false;
}

void Vault::ApplyDelete(const std::string& path, ApplyState& s) {
  auto it = notes_.find(path);
  if (it == notes_.end()) return;
  NoteMeta& n = it->second;
  s.NamesOf(n);
  s.impact.home_changed = true;
  RemoveLinker(n);
  for (const auto& t : n.out) s.backlink_changed.insert(t);
  s.content_changed.insert(path);
  Unlink(n);  // not SetOut: that would list the note's embeds again
  if (n.published) {
    s.impact.deleted_urls.push_back(n.url);
    s.deleted.push_back(n);
  }
  Unindex(n);
  Unlist(n);
  if (s.replaced) s.replaced->push_back(std::move(n));
  notes_.erase(it);
}

void Vault::ApplyUpsert(NoteMeta& u, ApplyState& s) {
  s.upserted.insert(u.path);
  s.content_changed.insert(u.path);
  auto it = notes_.find(u.path);
  // First seen: kept from the note's earlier version.
  if (!restoring_ && it != notes_.end() && it->second.created_ms) u.created_ms = it->second.created_ms;
  if (!restoring_ && !u.created_ms) u.created_ms = it != notes_.end() ? it->second.updated_ms : u.updated_ms;
  if (it == notes_.end()) {
    s.created.push_back(u.path);
    s.NamesOf(u);
    s.impact.home_changed = true;
    if (u.published && !restoring_) u.url = AssignUrl(u, &s.impact.url_warnings[u.path]);
    u.out.clear();
    u.embeds_out.clear();
    s.relinked.insert(u.path);
    std::string path = u.path;
    NoteMeta& stored = notes_.emplace(std::move(path), std::move(u)).first->second;
    Index(stored);
    List(stored);
    AddLinker(stored);
    return;
  }
  NoteMeta& old = it->second;
  bool relink = old.aliases != u.aliases || old.published != u.published || old.permalink != u.permalink;
  if (relink) {
    s.NamesOf(old);
    s.NamesOf(u);
    s.impact.home_changed = true;
    Unindex(old);
    if (!restoring_) u.url = u.published ? AssignUrl(u, &s.impact.url_warnings[u.path]) : "";
    if (old.published && old.url != u.url) {
      if (IsListed(old) && IsListed(u)) s.impact.moved[old.url] = u.url; else s.impact.deleted_urls.push_back(old.url);
    }
    Index(u);
  } else {
    u.url = old.url;
  }
  if (old.title != u.title) {
    s.impact.home_changed = true;
    // Pages listing this note as a backlink show its title.
    for (const auto& t : old.out) s.backlink_changed.insert(t);
    for (const auto& t : ResolveAll(u.targets, u.path)) s.backlink_changed.insert(t);
  }
  if (old.private_note != u.private_note) PrivacyFlipped(old, s);
  if (old.targets != u.targets || old.embeds != u.embeds || old.published != u.published) {
    RemoveLinker(old);
    AddLinker(u);
    s.relinked.insert(u.path);
  }
  // The listings: only the recency order moves when what they show is the same.
  const bool relist = !SameListing(old, u);
  if (relist) {
    Unlist(old);
  } else if (IsListed(u)) {
    listing_.Retime(old, u, KeyOf(old));
  }
  u.out = std::move(old.out);
  u.embeds_out = std::move(old.embeds_out);
  // ReresolveLinks() re-derives links; keep the reverse maps consistent meanwhile.
  if (s.replaced) {
    s.replaced->push_back(std::exchange(old, std::move(u)));
  } else {
    old = std::move(u);
  }
  if (relist) List(old);
}

// A note turned private or public: the notes it links to show it as a
// backlink or stop, and the notes linking to it (their graph nodes' edges,
// their links' previews) render again; its embedders do as content_changed.
void Vault::PrivacyFlipped(const NoteMeta& old, ApplyState& s) {
  for (const auto& t : old.out) s.backlink_changed.insert(t);
  ForEachBacklink(old.path, [&](const NoteMeta& src) { s.impact.render.insert(src.path); });
}

// Re-resolves the links of upserted notes, and of the notes whose links
// depend on a name this change added or removed (never the whole vault).
void Vault::ReresolveLinks(ApplyState& s) {
  std::set<std::string> candidates = s.relinked;
  if (!s.changed_names.empty()) {
    s.changed_names.insert(std::string(markdown::LinkIndex::kAnyKey));
    for (const auto& k : s.changed_names) {
      if (auto it = linkers_.find(k); it != linkers_.end()) candidates.insert(it->second.begin(), it->second.end());
    }
  }
  for (const auto& path : candidates) {
    auto found = notes_.find(path);
    if (found == notes_.end()) continue;  // deleted
    NoteMeta& n = found->second;
    bool is_upserted = s.upserted.count(path) > 0;
    std::vector<std::string> out = n.published ? ResolveAll(n.targets, path) : std::vector<std::string>{};
    std::vector<std::string> embeds_out = n.published ? ResolveAll(n.embeds, path) : std::vector<std::string>{};
    if (out == n.out && embeds_out == n.embeds_out) continue;
    AddSymmetricDifference(n.out, out, &s.backlink_changed);
    bool embeds_moved = embeds_out != n.embeds_out;
    SetOut(n, std::move(out));
    if (!is_upserted) s.impact.render.insert(path);  // its links now land elsewhere
    if (embeds_moved) s.content_changed.insert(path);
  }
}

void Vault::CollectRender(ApplyState& s) const {
  std::set<std::string>& render = s.impact.render;
  render.insert(s.upserted.begin(), s.upserted.end());
  for (const auto& p : s.backlink_changed) render.insert(p);
  // Notes that embed a changed note (directly or through others) show its content.
  for (const auto& p : EmbeddersOf(s.content_changed)) render.insert(p);
  // Only published notes that exist have pages.
  for (auto it = render.begin(); it != render.end();) {
    auto n = notes_.find(*it);
    if (n == notes_.end() || !n->second.published) it = render.erase(it); else ++it;
  }
}

std::string Vault::AssetUrl(std::string_view sha256, std::string_view path) {
  return "/assets/" + std::string(sha256.substr(0, 16)) + "/" + std::string(PathBase(path));
}

void Vault::LoadAttachment(AttachmentMeta meta) {
  index_.Add(meta.path);
  std::string path = meta.path;
  attachments_[path] = std::move(meta);
}

std::set<std::string> Vault::ApplyAttachments(std::vector<AttachmentMeta> upserts, const std::vector<std::string>& deletes,
                                              std::vector<std::string>* unused_urls) {
  std::set<std::string> changed;  // attachment paths added, changed or removed
  std::set<std::string> old_urls;
  for (const auto& d : deletes) {
    auto it = attachments_.find(d);
    if (it == attachments_.end()) continue;
    changed.insert(d);
    old_urls.insert(it->second.url);
  }
  for (const auto& u : upserts) {
    auto it = attachments_.find(u.path);
    if (it != attachments_.end() && it->second.sha256 == u.sha256) continue;
    changed.insert(u.path);
    if (it != attachments_.end()) old_urls.insert(it->second.url);
  }
  if (changed.empty()) return {};
  std::set<std::string> render;
  // Notes whose targets resolve to a changed attachment, before and after:
  // only those whose links depend on a changed attachment's name can.
  std::set<std::string> candidates;
  for (const auto& path : changed) {
    for (const auto& k : markdown::LinkIndex::NameKeys(path, {})) {
      if (auto it = linkers_.find(k); it != linkers_.end()) candidates.insert(it->second.begin(), it->second.end());
    }
  }
  if (auto it = linkers_.find(markdown::LinkIndex::kAnyKey); it != linkers_.end()) {
    candidates.insert(it->second.begin(), it->second.end());
  }
  auto scan = [&] {
    for (const auto& path : candidates) {
      const NoteMeta* n = Find(path);
      if (!n || !n->published) continue;
      for (const auto& t : n->targets) {
        auto r = index_.Resolve(t, path);
        if (r && changed.count(r->path)) { render.insert(path); break; }
      }
    }
  };
  scan();
  for (const auto& d : deletes) {
    if (attachments_.erase(d)) index_.Remove(d);
  }
  for (auto& u : upserts) {
    u.url = AssetUrl(u.sha256, u.path);
    index_.Add(u.path);
    std::string path = u.path;
    attachments_[path] = std::move(u);
  }
  scan();
  for (const auto& [path, a] : attachments_) old_urls.erase(a.url);  // still used (same bytes elsewhere)
  unused_urls->assign(old_urls.begin(), old_urls.end());
  // Embedders of those notes show them too.
  for (const auto& p : EmbeddersOf(render)) render.insert(p);
  return render;
}

const AttachmentMeta* Vault::FindAttachment(std::string_view path) const {
  auto it = attachments_.find(path);
  return it == attachments_.end() ? nullptr : &it->second;
}

std::optional<std::string> Vault::AttachmentUrl(std::string_view target, std::string_view from) const {
  auto r = index_.Resolve(target, from);
  if (!r) return std::nullopt;
  auto it = attachments_.find(r->path);
  if (it == attachments_.end()) return std::nullopt;
  return it->second.url;
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

std::map<std::string, std::string> Vault::AliasRedirects() const {
  std::map<std::string, std::string> out;
  for (const auto& [url, paths] : listing_.alias_urls()) {
    if (auto r = AliasRedirect(url)) out.emplace(url, *r);
  }
  return out;
}

std::optional<std::string> Vault::AliasRedirect(std::string_view url) const {
  auto it = listing_.alias_urls().find(url);
  if (it == listing_.alias_urls().end() || url_owner_.count(url) || IsReservedUrl(url)) return std::nullopt;
  return *it->second.begin();  // first (lexicographic) path wins
}

std::optional<markdown::Resolution> Vault::Resolve(std::string_view target, std::string_view from) const {
  return index_.Resolve(target, from);
}

bool Vault::HasIndexNote() const { return url_owner_.count("/") > 0; }

const NoteMeta* Vault::UrlOwner(std::string_view url) const {
  auto it = url_owner_.find(url);
  return it == url_owner_.end() ? nullptr : Find(it->second);
}

}  // namespace folio::site
