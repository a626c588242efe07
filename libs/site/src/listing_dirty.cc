// Which generated pages a note's change can alter (ListingFilter).
#include <set>
#include <string>

#include "folio/core/text.h"
#include "folio/site/listing_index.h"
#include "folio/site/listings.h"

namespace folio::site {
namespace {

void AddTagPrefixes(const std::vector<std::string>& tags, std::set<std::string, std::less<>>* out) {
  for (const auto& t : tags) {
    for (size_t slash = 0;; ++slash) {
      slash = t.find('/', slash);
      out->insert(AsciiLower(t.substr(0, slash)));
      if (slash == std::string::npos) break;
    }
  }
}

void AddFolderAndAncestors(const std::string& dir, bool ancestors, std::set<std::string, std::less<>>* out) {
  if (dir.empty()) return;
  out->insert(dir);
  for (size_t slash = dir.rfind('/'); ancestors && slash != std::string::npos; slash = dir.rfind('/', slash - 1)) {
    out->insert(dir.substr(0, slash));
    if (slash == 0) break;
  }
}

// Alias redirect URLs that may appear, move or go: the aliases' URLs and,
// when the note arrives, leaves or moves, its own URLs (an alias may have
// been waiting for the URL it held, or be hidden by the URL it takes).
void AddAliasUrls(const ListedAs& l, bool with_url, std::set<std::string, std::less<>>* out) {
  for (const auto& a : l.aliases) {
    std::string url = ListingIndex::AliasUrl(a);
    if (!url.empty()) out->insert(std::move(url));
  }
  if (with_url && !l.url.empty()) out->insert(l.url);
}

}  // namespace

ListedAs ListedNow(const Vault& v, std::string_view path) {
  ListedAs l;
  const NoteMeta* n = v.Find(path);
  if (!n || !IsListed(*n)) return l;
  l.present = true;
  l.title = n->title;
  l.url = n->url;
  l.day = DayOf(UpdatedMs(*n));
  l.dir = PathDir(n->path);
  l.tags = n->tags;
  l.aliases = n->aliases;
  l.out = n->out;
  l.updated_ms = UpdatedMs(*n);
  l.published_ms = PublishedMs(*n);
  return l;
}

// The listings a note's change can alter (OBSIDIAN/README "Incremental").
void MarkDirty(const std::string& path, const ListedAs& before, const ListedAs& after, ListingFilter* f) {
  bool presence = before.present != after.present;
  bool shown = presence || before.title != after.title || before.url != after.url || before.day != after.day;
  if (presence || before.title != after.title || before.url != after.url || before.out != after.out) {
    f->graph_paths.insert(path);
  }
  if (!presence && !shown && before.updated_ms == after.updated_ms && before.published_ms == after.published_ms &&
      before.tags == after.tags &&
      before.aliases == after.aliases) {
    return;
  }
  if (presence || before.updated_ms != after.updated_ms || shown) f->recent = f->rss = true;
  if (before.published_ms != after.published_ms) f->rss = true;
  if (shown) {
    f->home = true;
    f->sitemap_paths.insert(path);
    // A note arriving, leaving or moving changes the note counts of every
    // folder above it (the explorer shows them).
    bool counts = presence || before.dir != after.dir;
    AddFolderAndAncestors(before.dir, counts, &f->folders);
    AddFolderAndAncestors(after.dir, counts, &f->folders);
    if (counts || before.dir.empty() || after.dir.empty()) f->tree_root = true;
    AddTagPrefixes(before.tags, &f->tags);
    AddTagPrefixes(after.tags, &f->tags);
  }
  if (before.tags != after.tags || (presence && (!before.tags.empty() || !after.tags.empty()))) {
    f->tags_index = true;
    AddTagPrefixes(before.tags, &f->tags);
    AddTagPrefixes(after.tags, &f->tags);
  }
  if (presence || before.url != after.url || before.aliases != after.aliases) {
    bool moved = presence || before.url != after.url;
    AddAliasUrls(before, moved, &f->alias_urls);
    AddAliasUrls(after, moved, &f->alias_urls);
  }
}

}  // namespace folio::site
