#include "folio/site/listing_index.h"

#include <algorithm>
#include <cctype>

#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/markdown/slug.h"
#include "folio/site/note_meta.h"
#include "folio/site/urls.h"

namespace folio::site {
namespace {

// FNV-1a, then a splitmix64 finalizer so the top bits (the shard) are well mixed.
uint64_t PathHash(std::string_view s) {
  uint64_t h = Fnv1a64(s);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

int Log2(size_t pow2) {
  int k = 0;
  while ((size_t{1} << k) < pow2) ++k;
  return k;
}

// (parent, child) pairs of a note's nested tags, each once.
std::set<std::pair<std::string, std::string>> TagPairs(const std::vector<std::string>& tags) {
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& t : tags) {
    std::string prefix;
    for (size_t slash = 0;; ++slash) {
      slash = t.find('/', slash);
      std::string key = AsciiLower(t.substr(0, slash));
      if (!prefix.empty()) pairs.insert({prefix, key});
      prefix = key;
      if (slash == std::string::npos) break;
    }
  }
  return pairs;
}

// Adds `item` to a folder's notes, in both orders.
void AddToFolder(const LinkItem& item, ListingIndex::Folder* f) {
  auto [it, added] = f->notes.insert(item);
  if (added) f->natural.insert(&*it);
}

void RemoveFromFolder(const LinkItem& item, ListingIndex::Folder* f) {
  auto it = f->notes.find(item);
  if (it == f->notes.end()) return;
  f->natural.erase(&*it);
  f->notes.erase(it);
}

}  // namespace

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[j]);
    if (std::isdigit(x) && std::isdigit(y)) {
      size_t i0 = i, j0 = j;
      while (i0 < a.size() && a[i0] == '0') ++i0;  // leading zeros do not count
      while (j0 < b.size() && b[j0] == '0') ++j0;
      size_t i1 = i0, j1 = j0;
      while (i1 < a.size() && std::isdigit(static_cast<unsigned char>(a[i1]))) ++i1;
      while (j1 < b.size() && std::isdigit(static_cast<unsigned char>(b[j1]))) ++j1;
      if (i1 - i0 != j1 - j0) return i1 - i0 < j1 - j0;
      int c = a.substr(i0, i1 - i0).compare(b.substr(j0, j1 - j0));
      if (c != 0) return c < 0;
      i = i1;
      j = j1;
      continue;
    }
    x = static_cast<unsigned char>(std::tolower(x));
    y = static_cast<unsigned char>(std::tolower(y));
    if (x != y) return x < y;
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

bool ByNaturalTitle::operator()(const LinkItem* a, const LinkItem* b) const {
  return NaturalLess(a->title, b->title) || (!NaturalLess(b->title, a->title) && ByTitle()(*a, *b));
}

LinkItem ItemOf(const NoteMeta& n) { return LinkItem{n.title, n.url, DayOf(UpdatedMs(n))}; }

std::string ListingIndex::AliasUrl(std::string_view alias) {
  std::string url = "/" + markdown::SlugifySegment(std::string(alias));
  return url == "/-" ? "" : url;
}

std::map<std::string, std::string> ListingIndex::TagKeys(const std::vector<std::string>& tags) {
  std::map<std::string, std::string> keys;
  for (const auto& t : tags) {
    for (size_t slash = 0;; ++slash) {
      slash = t.find('/', slash);
      std::string part = t.substr(0, slash);
      keys.emplace(AsciiLower(part), part);  // the first spelling in this note wins
      if (slash == std::string::npos) break;
    }
  }
  return keys;
}

size_t ListingIndex::SitemapShardsFor(size_t notes) {
  size_t shards = 1;
  while (notes > shards * kSitemapShardTarget) shards *= 2;
  return shards;
}

size_t ListingIndex::GraphChunksFor(size_t notes) {
  size_t chunks = 1;
  while (notes > chunks * kGraphChunkTarget) chunks *= 2;
  return chunks;
}

size_t ListingIndex::ShardOf(std::string_view path, size_t shards) {
  if (shards <= 1) return 0;
  return static_cast<size_t>(PathHash(path) >> (64 - Log2(shards)));
}

std::vector<std::string> ListingIndex::ShardPaths(size_t i, size_t shards) const {
  std::vector<std::string> out;
  auto it = by_hash_.begin(), end = by_hash_.end();
  if (shards > 1) {
    const int shift = 64 - Log2(shards);
    it = by_hash_.lower_bound({static_cast<uint64_t>(i) << shift, std::string_view()});
    if (i + 1 < shards) end = by_hash_.lower_bound({static_cast<uint64_t>(i + 1) << shift, std::string_view()});
  }
  for (; it != end; ++it) out.emplace_back(it->second);
  std::sort(out.begin(), out.end());
  return out;
}

void ListingIndex::Add(const NoteMeta& n, std::string_view stored_path) {
  const LinkItem item = ItemOf(n);
  by_title_.insert(item);
  newest_.insert({-UpdatedMs(n), stored_path});
  by_published_.insert({-PublishedMs(n), n.url, stored_path});
  by_hash_.insert({PathHash(n.path), stored_path});
  std::string_view dir = PathDir(n.path);
  AddToFolder(item, dir.empty() ? &root_ : &folders_[std::string(dir)]);
  ++root_.below;
  for (std::string_view d = dir; !d.empty();) {
    ++folders_[std::string(d)].below;
    std::string_view parent = PathDir(d);
    ++(parent.empty() ? root_ : folders_[std::string(parent)]).subfolders[std::string(d)];
    d = parent;
  }
  for (const auto& [key, spelling] : TagKeys(n.tags)) {
    Tag& t = tags_[key];
    t.notes.insert(item);
    t.spelling[n.path] = spelling;
  }
  for (const auto& [parent, child] : TagPairs(n.tags)) ++tags_[parent].subtags[child];
  for (const auto& a : n.aliases) {
    std::string url = AliasUrl(a);
    if (!url.empty()) alias_urls_[url].insert(n.path);
  }
}

void ListingIndex::Retime(const NoteMeta& was, const NoteMeta& now, std::string_view stored_path) {
  if (UpdatedMs(was) != UpdatedMs(now)) {
    newest_.erase({-UpdatedMs(was), stored_path});
    newest_.insert({-UpdatedMs(now), stored_path});
  }
  if (PublishedMs(was) != PublishedMs(now)) {
    by_published_.erase({-PublishedMs(was), was.url, stored_path});
    by_published_.insert({-PublishedMs(now), now.url, stored_path});
  }
}

void ListingIndex::Remove(const NoteMeta& n) {
  const LinkItem item = ItemOf(n);
  by_title_.erase(item);
  newest_.erase({-UpdatedMs(n), n.path});
  by_published_.erase({-PublishedMs(n), n.url, n.path});
  by_hash_.erase({PathHash(n.path), n.path});
  std::string_view dir = PathDir(n.path);
  if (dir.empty()) {
    RemoveFromFolder(item, &root_);
  } else if (auto f = folders_.find(dir); f != folders_.end()) {
    RemoveFromFolder(item, &f->second);
  }
  if (root_.below > 0) --root_.below;
  for (std::string_view d = dir; !d.empty();) {
    std::string_view parent = PathDir(d);
    Folder* p = &root_;
    if (!parent.empty()) {
      auto it = folders_.find(parent);
      p = it == folders_.end() ? nullptr : &it->second;
    }
    if (p) {
      auto s = p->subfolders.find(d);
      if (s != p->subfolders.end() && --s->second == 0) p->subfolders.erase(s);
    }
    if (auto f = folders_.find(d); f != folders_.end() && --f->second.below == 0) folders_.erase(f);
    d = parent;
  }
  for (const auto& [parent, child] : TagPairs(n.tags)) {
    auto t = tags_.find(parent);
    if (t == tags_.end()) continue;
    auto s = t->second.subtags.find(child);
    if (s != t->second.subtags.end() && --s->second == 0) t->second.subtags.erase(s);
  }
  for (const auto& [key, spelling] : TagKeys(n.tags)) {
    auto t = tags_.find(key);
    if (t == tags_.end()) continue;
    t->second.notes.erase(item);
    t->second.spelling.erase(n.path);
    if (t->second.spelling.empty()) tags_.erase(t);
  }
  for (const auto& a : n.aliases) {
    auto it = alias_urls_.find(AliasUrl(a));
    if (it == alias_urls_.end()) continue;
    it->second.erase(n.path);
    if (it->second.empty()) alias_urls_.erase(it);
  }
}

}  // namespace folio::site
