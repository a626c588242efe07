#include "folio/site/listings.h"

#include <algorithm>
#include <functional>
#include <set>

#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/markdown/slug.h"

namespace folio::site {
namespace {

constexpr const char* kHtml = "text/html; charset=utf-8";

// FNV-1a over every field, with separators, so different pages differ.
struct Fingerprint {
  uint64_t h = 1469598103934665603ull;
  void Add(std::string_view s) {
    for (unsigned char c : s) { h ^= c; h *= 1099511628211ull; }
    h ^= 0xff; h *= 1099511628211ull;
  }
  void Add(const std::vector<LinkItem>& items) {
    for (const auto& i : items) { Add(i.title); Add(i.url); Add(i.date); }
    Add("|");
  }
};

bool ByTitle(const LinkItem& a, const LinkItem& b) { return a.title != b.title ? a.title < b.title : a.url < b.url; }

GeneratedPage Listing(const SiteInfo& site, std::string url, std::string title, std::string intro,
                      std::vector<LinkItem> sections, std::vector<LinkItem> items, size_t limit) {
  GeneratedPage g;
  g.url = url;
  g.content_type = kHtml;
  g.kind = GeneratedPage::Kind::kListing;
  ListingPage& p = g.listing;
  p.site = site;
  p.url = std::move(url);
  p.title = std::move(title);
  p.intro = std::move(intro);
  p.sections = std::move(sections);
  p.total = items.size();
  if (items.size() > limit) items.resize(limit);
  p.items = std::move(items);
  Fingerprint f;
  f.Add(p.title);
  f.Add(p.intro);
  f.Add(p.sections);
  f.Add(p.items);
  f.Add(std::to_string(p.total));
  g.fingerprint = f.h;
  return g;
}

using Pages = std::map<std::string, GeneratedPage>;
using Notes = std::vector<const NoteMeta*>;

// What one BuildListings call builds: every listing, or only those a filter names.
struct Scope {
  const Vault& vault;
  const SiteInfo& site;
  const ListingOptions& opt;
  const ListingFilter& f;
  bool every;   // no filter: every folder and tag page
  Notes notes;  // the published notes
};

LinkItem Item(const NoteMeta* n) { return LinkItem{n->title, n->url, DayOf(n->updated_ms)}; }

std::string NoteCount(size_t n) { return std::to_string(n) + (n == 1 ? " note" : " notes"); }

// Home, unless a root index.md provides it.
void AddHome(const Scope& s, Pages& out) {
  if (!s.f.home || s.vault.HasIndexNote()) return;
  std::vector<LinkItem> all;
  for (const auto* n : s.notes) all.push_back(Item(n));
  std::sort(all.begin(), all.end(), ByTitle);
  size_t total = all.size();
  out.emplace("/", Listing(s.site, "/", s.site.name, NoteCount(total), {}, std::move(all), s.opt.list_limit));
}

// Folder pages: notes directly inside, then sub-folders.
void AddFolders(const Scope& s, Pages& out) {
  if (!s.every && s.f.folders.empty()) return;
  auto wanted = [&](std::string_view dir) { return s.every || s.f.folders.count(dir) > 0; };
  std::map<std::string, std::vector<LinkItem>> folder_items;
  std::map<std::string, std::set<std::string>> subfolders;
  for (const auto* n : s.notes) {
    std::string_view dir = PathDir(n->path);
    if (dir.empty()) continue;
    if (wanted(dir)) folder_items[std::string(dir)].push_back(Item(n));
    // Every ancestor exists as a folder page, and lists its children.
    for (std::string_view d = dir; !d.empty();) {
      std::string_view parent = PathDir(d);
      if (wanted(d)) folder_items[std::string(d)];
      if (!parent.empty() && wanted(parent)) subfolders[std::string(parent)].insert(std::string(d));
      d = parent;
    }
  }
  for (auto& [dir, items] : folder_items) {
    std::string url = FolderUrl(dir);
    if (s.vault.UrlOwner(url) || Vault::IsReservedUrl(url)) continue;  // the folder's own note (index.md or Dir/Dir.md)
    std::vector<LinkItem> sections;
    for (const auto& sub : subfolders[dir]) sections.push_back({std::string(PathBase(sub)) + "/", FolderUrl(sub), ""});
    std::sort(items.begin(), items.end(), ByTitle);
    size_t count = items.size();
    out.emplace(url, Listing(s.site, url, std::string(PathBase(dir)), NoteCount(count) + " in " + dir,
                             std::move(sections), std::move(items), s.opt.list_limit));
  }
}

// Each tag and each prefix of a nested tag, with the notes that carry it.
struct TagIndex {
  std::map<std::string, std::vector<LinkItem>> items;  // lower-cased tag -> notes
  std::map<std::string, std::string> name;             // lower-cased -> as first written
  std::map<std::string, std::set<std::string>> subtags;
};

// The lower-cased tags of one note, with every prefix of a nested tag ("a/b" -> "a", "a/b").
std::set<std::string> IndexNoteTags(const NoteMeta& n, TagIndex& index) {
  std::set<std::string> mine;
  for (const auto& t : n.tags) {
    std::string prefix;
    size_t start = 0;
    for (;;) {
      size_t slash = t.find('/', start);
      std::string part = t.substr(0, slash);
      std::string key = AsciiLower(part);
      index.name.emplace(key, part);
      if (!prefix.empty()) index.subtags[prefix].insert(key);
      mine.insert(key);
      prefix = key;
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
  }
  return mine;
}

TagIndex IndexTags(const Scope& s) {
  TagIndex index;
  for (const auto* n : s.notes) {
    for (const auto& k : IndexNoteTags(*n, index)) {
      auto& list = index.items[k];
      if (s.every || s.f.tags.count(k)) list.push_back(Item(n));
      else list.push_back(LinkItem{});  // counted for /tags, not listed
    }
  }
  return index;
}

// Tag pages; /tags lists them all.
void AddTags(const Scope& s, Pages& out) {
  if (!s.every && !s.f.tags_index && s.f.tags.empty()) return;
  TagIndex index = IndexTags(s);
  std::vector<LinkItem> all_tags;
  for (auto& [key, items] : index.items) {
    all_tags.push_back({"#" + index.name[key] + " (" + std::to_string(items.size()) + ")", TagUrl(key), ""});
    if (!s.every && !s.f.tags.count(key)) continue;
    std::vector<LinkItem> sections;
    for (const auto& sub : index.subtags[key]) sections.push_back({"#" + index.name[sub], TagUrl(sub), ""});
    std::sort(items.begin(), items.end(), ByTitle);
    size_t count = items.size();
    std::string url = TagUrl(key);
    out.emplace(url, Listing(s.site, url, "#" + index.name[key], NoteCount(count), std::move(sections),
                             std::move(items), s.opt.list_limit));
  }
  if (s.f.tags_index) {
    out.emplace("/tags", Listing(s.site, "/tags", "Tags", std::to_string(all_tags.size()) + " tags", {},
                                 std::move(all_tags), SIZE_MAX));
  }
}

Notes NewestFirst(Notes notes) {
  std::sort(notes.begin(), notes.end(), [](const NoteMeta* a, const NoteMeta* b) {
    return a->updated_ms != b->updated_ms ? a->updated_ms > b->updated_ms : a->path < b->path;
  });
  return notes;
}

// Recent notes, newest first, paginated: /recent, /recent?page=2, ...
void AddRecent(const Scope& s, const Notes& recent, Pages& out) {
  if (!s.f.recent) return;
  const size_t per_page = s.opt.recent_page_size;
  size_t pages = std::max<size_t>(1, (recent.size() + per_page - 1) / per_page);
  pages = std::min(pages, s.opt.recent_max_pages);
  for (size_t pg = 1; pg <= pages; ++pg) {
    std::vector<LinkItem> items;
    for (size_t i = (pg - 1) * per_page; i < std::min(recent.size(), pg * per_page); ++i) {
      items.push_back(Item(recent[i]));
    }
    std::string key = pg == 1 ? "/recent" : "/recent?page=" + std::to_string(pg);
    auto g = Listing(s.site, "/recent", "Recent notes", "", {}, std::move(items), SIZE_MAX);
    g.url = key;
    g.listing.page = static_cast<int>(pg);
    g.listing.pages = static_cast<int>(pages);
    g.listing.total = recent.size();
    Fingerprint f;
    f.h = g.fingerprint;
    f.Add(std::to_string(pg) + "/" + std::to_string(pages));
    g.fingerprint = f.h;
    out.emplace(key, std::move(g));
  }
}

GeneratedPage PlainPage(const SiteInfo& site, std::string url, GeneratedPage::Kind kind, std::string content_type) {
  GeneratedPage g;
  g.url = std::move(url);
  g.kind = kind;
  g.content_type = std::move(content_type);
  g.listing.site = site;
  return g;
}

// RSS: the newest notes.
void AddRss(const Scope& s, const Notes& recent, Pages& out) {
  if (!s.f.rss) return;
  GeneratedPage rss = PlainPage(s.site, "/rss.xml", GeneratedPage::Kind::kRss, "application/rss+xml; charset=utf-8");
  for (size_t i = 0; i < std::min(recent.size(), s.opt.rss_items); ++i) rss.items.push_back(Item(recent[i]));
  Fingerprint f;
  f.Add(s.site.name);
  f.Add(s.site.base_url);
  f.Add(rss.items);
  rss.fingerprint = f.h;
  out.emplace(rss.url, std::move(rss));
}

// sitemap.xml: every note.
void AddSitemap(const Scope& s, Pages& out) {
  if (!s.f.sitemap) return;
  GeneratedPage sm = PlainPage(s.site, "/sitemap.xml", GeneratedPage::Kind::kSitemap, "application/xml; charset=utf-8");
  for (const auto* n : s.notes) sm.items.push_back(Item(n));
  Fingerprint f;
  f.Add(s.site.base_url);
  f.Add(sm.items);
  sm.fingerprint = f.h;
  out.emplace(sm.url, std::move(sm));
}

void AddRobots(const Scope& s, Pages& out) {
  if (!s.f.robots) return;
  GeneratedPage robots = PlainPage(s.site, "/robots.txt", GeneratedPage::Kind::kRobots, "text/plain; charset=utf-8");
  Fingerprint f;
  f.Add(s.site.base_url);
  robots.fingerprint = f.h;
  out.emplace(robots.url, std::move(robots));
}

// Aliases answer 301 to their note, unless a listing already has the URL.
void AddAliasRedirects(const Scope& s, Pages& out) {
  if (!s.f.aliases) return;
  for (const auto& [url, path] : s.vault.AliasRedirects()) {
    if (out.count(url)) continue;
    GeneratedPage r;
    r.url = url;
    r.kind = GeneratedPage::Kind::kRedirect;
    r.status = 301;
    r.content_type = kHtml;
    r.location = s.vault.Find(path)->url;
    Fingerprint f;
    f.Add("301");
    f.Add(r.location);
    r.fingerprint = f.h;
    out.emplace(url, std::move(r));
  }
}

Notes PublishedNotes(const Vault& vault) {
  Notes notes;
  for (const auto& [path, n] : vault.notes()) {
    if (n.published) notes.push_back(&n);
  }
  return notes;
}

}  // namespace

std::string DayOf(int64_t unix_ms) { return unix_ms > 0 ? Iso8601Ms(unix_ms).substr(0, 10) : ""; }

std::string FolderUrl(std::string_view folder) {
  std::string url = markdown::UrlForNotePath(std::string(folder) + "/index.md");
  return url;
}

std::string TagUrl(std::string_view tag) { return "/tags/" + AsciiLower(tag); }

std::string GeneratedPage::Render() const {
  switch (kind) {
    case Kind::kListing: return AssembleListingPage(listing);
    case Kind::kRss: return AssembleRss(listing.site, items);
    case Kind::kSitemap: return AssembleSitemap(listing.site, items);
    case Kind::kRobots: return AssembleRobots(listing.site);
    case Kind::kRedirect: return AssembleRedirectPage(location);
  }
  return "";
}

bool ListingFilter::Covers(std::string_view url, uint16_t status) const {
  if (status == 301) return aliases;
  if (url == "/") return home;
  if (url == "/tags") return tags_index;
  if (url == "/recent" || StartsWith(url, "/recent?")) return recent;
  if (url == "/rss.xml") return rss;
  if (url == "/sitemap.xml") return sitemap;
  if (url == "/robots.txt") return robots;
  if (StartsWith(url, "/tags/")) {
    for (const auto& t : tags) {
      if (TagUrl(t) == url) return true;
    }
    return false;
  }
  for (const auto& f : folders) {
    if (FolderUrl(f) == url) return true;
  }
  return false;
}

std::map<std::string, GeneratedPage> BuildListings(const Vault& vault, const SiteInfo& site,
                                                   const ListingOptions& opt, const ListingFilter* only) {
  ListingFilter all;
  all.home = all.tags_index = all.recent = all.rss = all.sitemap = all.robots = all.aliases = true;
  const Scope s{vault, site, opt, only ? *only : all, only == nullptr, PublishedNotes(vault)};
  const Notes recent = NewestFirst(s.f.recent || s.f.rss ? s.notes : Notes{});
  Pages out;
  AddHome(s, out);
  AddFolders(s, out);
  AddTags(s, out);
  AddRecent(s, recent, out);
  AddRss(s, recent, out);
  AddSitemap(s, out);
  AddRobots(s, out);
  AddAliasRedirects(s, out);  // last: a listing's URL wins over an alias
  return out;
}

}  // namespace folio::site
