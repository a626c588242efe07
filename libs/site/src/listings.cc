#include "folio/site/listings.h"

#include "folio/site/i18n.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <tuple>

#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/markdown/slug.h"
#include "folio/site/i18n.h"
#include "folio/site/listing_index.h"

namespace folio::site {
namespace {

constexpr const char* kHtml = "text/html; charset=utf-8";

// FNV-1a over every field, with separators, so different pages differ.
struct Fingerprint {
  uint64_t h = 1469598103934665603ull;
  void Add(std::string_view s) { h = Fnv1a64("\xff", Fnv1a64(s, h)); }
  void Add(const std::vector<LinkItem>& items) {
    for (const auto& i : items) { Add(i.title); Add(i.url); Add(i.date); }
    Add("|");
  }
};

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
  f.Add(p.site.lang);  // the page's words (i18n.h)
  f.Add(p.sections);
  f.Add(p.breadcrumbs);
  f.Add(p.items);
  f.Add(std::to_string(p.total));
  g.fingerprint = f.h;
  return g;
}

using Pages = std::map<std::string, GeneratedPage>;

// What one BuildListings call builds: every listing, or only those a filter names.
struct Scope {
  const Vault& vault;
  const ListingIndex& index;
  const SiteInfo& site;
  const ListingOptions& opt;
  const ListingFilter& f;
  bool every;  // no filter: every folder, tag, shard and alias page
};

// The site's words (i18n.h).
const Strings& Words(const Scope& s) { return StringsFor(PageLang("", s.site.lang)); }

std::string NoteCount(const Scope& s, size_t n) { return Plural(Words(s), Words(s).notes, n); }

// A folder page's intro: "3 notes, 2 folders", "1 folder", "2 notes".
std::string FolderCount(const Scope& s, size_t notes, size_t folders) {
  std::string out = notes || !folders ? NoteCount(s, notes) : "";
  if (folders) out += (out.empty() ? "" : ", ") + Plural(Words(s), Words(s).folders, folders);
  return out;
}

// "A/B/C" -> [A -> /a/, A/B -> /a/b/]: the folders above a folder.
std::vector<LinkItem> FoldersAbove(std::string_view dir) {
  std::vector<LinkItem> out;
  for (size_t slash = dir.find('/'); slash != std::string_view::npos; slash = dir.find('/', slash + 1)) {
    std::string_view above = dir.substr(0, slash);
    out.push_back({std::string(PathBase(above)), FolderUrl(above), ""});
  }
  return out;
}

// The first `limit` items of an ordered set.
std::vector<LinkItem> FirstOf(const TitleOrdered& items, size_t limit) {
  std::vector<LinkItem> out;
  for (auto it = items.begin(); it != items.end() && out.size() < limit; ++it) out.push_back(*it);
  return out;
}

GeneratedPage CappedListing(const SiteInfo& site, std::string url, std::string title, std::string intro,
                            std::vector<LinkItem> sections, const TitleOrdered& items, size_t limit) {
  GeneratedPage g = Listing(site, std::move(url), std::move(title), std::move(intro), std::move(sections),
                            FirstOf(items, limit), SIZE_MAX);
  g.listing.total = items.size();
  Fingerprint f;
  f.h = g.fingerprint;
  f.Add(std::to_string(items.size()));
  g.fingerprint = f.h;
  return g;
}

// Home, unless a root index.md provides it.
void AddHome(const Scope& s, Pages& out) {
  if (!s.f.home || s.vault.HasIndexNote()) return;
  const TitleOrdered& all = s.index.by_title();
  out.emplace("/", CappedListing(s.site, "/", s.site.name, NoteCount(s, all.size()), {}, all, s.opt.list_limit));
}

// One folder's page: notes directly inside, then sub-folders.
void AddFolder(const Scope& s, const std::string& dir, const ListingIndex::Folder& folder, Pages& out) {
  std::string url = FolderUrl(dir);
  if (s.vault.UrlOwner(url) || Vault::IsReservedUrl(url)) return;  // the folder's own note (index.md or Dir/Dir.md)
  std::vector<LinkItem> sections;
  for (const auto& [sub, count] : folder.subfolders) {
    sections.push_back({std::string(PathBase(sub)) + "/", FolderUrl(sub), ""});
  }
  const size_t folders = sections.size();
  GeneratedPage g = CappedListing(s.site, url, std::string(PathBase(dir)), FolderCount(s, folder.notes.size(), folders),
                                  std::move(sections), folder.notes, s.opt.list_limit);
  // Breadcrumbs and the explorer's open branch (issue 28: a folder holding
  // only folders showed neither).
  g.listing.breadcrumbs = FoldersAbove(dir);
  Fingerprint f;
  f.h = g.fingerprint;
  f.Add(g.listing.breadcrumbs);
  g.fingerprint = f.h;
  out.emplace(url, std::move(g));
}

void AddFolders(const Scope& s, Pages& out) {
  const auto& folders = s.index.folders();
  if (s.every) {
    for (const auto& [dir, folder] : folders) AddFolder(s, dir, folder, out);
    return;
  }
  for (const auto& dir : s.f.folders) {
    if (auto it = folders.find(dir); it != folders.end()) AddFolder(s, it->first, it->second, out);
  }
}

// A JSON resource: its fingerprint is a hash of the bytes themselves.
GeneratedPage DataPage(std::string url, std::string body) {
  GeneratedPage g;
  g.url = std::move(url);
  g.content_type = "application/json";
  g.kind = GeneratedPage::Kind::kData;
  g.fingerprint = Fnv1a64(body);
  g.body = std::move(body);
  return g;
}

// One folder's explorer JSON: its sub-folders (natural order, with the notes
// at or below each), then the notes directly inside (natural order by title,
// at most `limit`, read off the index's order: the folder's size does not
// matter; "more" counts the rest, which its page lists). A folder's own note
// (Dir/Dir.md or Dir/index.md, published at the folder's URL) is the folder
// itself, not one of its notes (issue 28).
void AddTree(const Scope& s, std::string_view folder_url, const ListingIndex::Folder& folder, Pages& out) {
  std::vector<std::pair<std::string_view, size_t>> subs;
  for (const auto& [sub, count] : folder.subfolders) subs.emplace_back(sub, count);
  std::sort(subs.begin(), subs.end(), [](const auto& a, const auto& b) {
    std::string_view x = PathBase(a.first), y = PathBase(b.first);
    return NaturalLess(x, y) || (!NaturalLess(y, x) && x < y);
  });
  const LinkItem* own = nullptr;  // the folder's note, if one serves the folder's URL
  if (folder_url != "/") {
    if (const NoteMeta* n = s.vault.UrlOwner(folder_url)) {
      if (auto it = folder.notes.find(ItemOf(*n)); it != folder.notes.end()) own = &*it;
    }
  }
  const size_t listed = folder.notes.size() - (own ? 1 : 0);
  const size_t shown = std::min(listed, s.opt.list_limit);
  std::string j = "{\"folders\":[";
  for (size_t i = 0; i < subs.size(); ++i) {
    std::string url = FolderUrl(subs[i].first);
    j += i ? ",{\"name\":" : "{\"name\":";
    AppendJsonString(PathBase(subs[i].first), &j);
    j += ",\"path\":";  // the vault path: the explorer's data-path (docs/themes.md)
    AppendJsonString(subs[i].first, &j);
    j += ",\"tree\":";
    AppendJsonString(TreeUrl(url), &j);
    j += ",\"url\":";
    AppendJsonString(url, &j);
    j += ",\"notes\":" + std::to_string(subs[i].second) + "}";
  }
  j += "],\"notes\":[";
  auto note = folder.natural.begin();
  for (size_t i = 0; i < shown; ++i, ++note) {
    if (*note == own) ++note;
    j += i ? ",{\"title\":" : "{\"title\":";
    AppendJsonString((*note)->title, &j);
    j += ",\"url\":";
    AppendJsonString((*note)->url, &j);
    j += "}";
  }
  j += "],\"more\":" + std::to_string(listed - shown) + ",\"url\":";
  AppendJsonString(folder_url, &j);
  j += "}";
  std::string url = TreeUrl(folder_url);
  out.emplace(url, DataPage(url, std::move(j)));
}

void AddTrees(const Scope& s, Pages& out) {
  if (s.f.tree_root) AddTree(s, "/", s.index.root(), out);
  const auto& folders = s.index.folders();
  if (s.every) {
    for (const auto& [dir, folder] : folders) AddTree(s, FolderUrl(dir), folder, out);
    return;
  }
  for (const auto& dir : s.f.folders) {
    if (auto it = folders.find(dir); it != folders.end()) AddTree(s, FolderUrl(dir), it->second, out);
  }
}

// Link-graph chunk i: [url, title, [target urls]] per published note in it,
// by path; targets are listed notes other than the note itself (never a
// private one: README "Private notes").
std::string GraphChunk(const Scope& s, size_t i, size_t chunks) {
  std::string j = "{\"nodes\":[";
  bool first = true;
  for (const auto& path : s.index.ShardPaths(i, chunks)) {
    const NoteMeta* n = s.vault.Find(path);
    if (!n || !IsListed(*n)) continue;
    j += first ? "[" : ",[";
    first = false;
    AppendJsonString(n->url, &j);
    j += ',';
    AppendJsonString(n->title, &j);
    j += ",[";
    bool first_target = true;
    for (const auto& t : n->out) {
      const NoteMeta* target = s.vault.Find(t);
      if (!target || !IsListed(*target) || target == n) continue;
      if (!first_target) j += ',';
      first_target = false;
      AppendJsonString(target->url, &j);
    }
    j += "]]";
  }
  j += "]}";
  return j;
}

// The graph page, the chunk index and the chunks the filter names.
void AddGraph(const Scope& s, Pages& out) {
  if (!s.f.graph && s.f.graph_paths.empty()) return;
  const size_t chunks = s.index.GraphChunks();
  std::set<size_t> build;
  if (s.f.graph) {
    for (size_t i = 0; i < chunks; ++i) build.insert(i);
    GeneratedPage g;
    g.url = std::string(markdown::kGraphUrl);
    g.content_type = kHtml;
    g.kind = GeneratedPage::Kind::kGraphPage;
    g.listing.site = s.site;
    g.listing.url = g.url;
    g.listing.title = std::string(Words(s).nav_graph);
    Fingerprint f;
    f.Add("graph page");
    f.Add(s.site.lang);
    g.fingerprint = f.h;
    out.emplace(g.url, std::move(g));
  } else {
    for (const auto& p : s.f.graph_paths) build.insert(ListingIndex::ShardOf(p, chunks));
  }
  for (size_t i : build) out.emplace(GraphChunkUrl(i), DataPage(GraphChunkUrl(i), GraphChunk(s, i, chunks)));
  std::string j = "{\"notes\":" + std::to_string(s.index.size()) + ",\"chunks\":[";
  for (size_t i = 0; i < chunks; ++i) {
    if (i) j += ',';
    AppendJsonString(GraphChunkUrl(i), &j);
  }
  j += "]}";
  out.emplace(std::string(markdown::kGraphDataUrl), DataPage(std::string(markdown::kGraphDataUrl), std::move(j)));
}

void AddTag(const Scope& s, const std::string& key, const ListingIndex::Tag& tag, Pages& out) {
  const auto& tags = s.index.tags();
  std::vector<LinkItem> sections;
  for (const auto& [sub, count] : tag.subtags) {
    if (auto it = tags.find(sub); it != tags.end()) sections.push_back({"#" + it->second.name(), TagUrl(sub), ""});
  }
  std::string url = TagUrl(key);
  out.emplace(url, CappedListing(s.site, url, "#" + tag.name(), NoteCount(s, tag.notes.size()), std::move(sections),
                                 tag.notes, s.opt.list_limit));
}

// Tag pages; /tags lists them all.
void AddTags(const Scope& s, Pages& out) {
  const auto& tags = s.index.tags();
  if (s.every) {
    for (const auto& [key, tag] : tags) AddTag(s, key, tag, out);
  } else {
    for (const auto& key : s.f.tags) {
      if (auto it = tags.find(key); it != tags.end()) AddTag(s, it->first, it->second, out);
    }
  }
  if (s.f.tags_index) {
    std::vector<LinkItem> all_tags;
    for (const auto& [key, tag] : tags) {
      all_tags.push_back({"#" + tag.name() + " (" + std::to_string(tag.notes.size()) + ")", TagUrl(key), ""});
    }
    // Counted before the list is moved into Listing (argument order is unspecified).
    std::string intro = Plural(Words(s), Words(s).tags_count, all_tags.size());
    std::string url(markdown::kTagsUrl);
    out.emplace(url, Listing(s.site, url, std::string(Words(s).tags_title), std::move(intro), {}, std::move(all_tags),
                             SIZE_MAX));
  }
}

// The newest `n` notes, newest first.
std::vector<LinkItem> Newest(const Scope& s, size_t n) {
  std::vector<LinkItem> out;
  for (auto it = s.index.newest().begin(); it != s.index.newest().end() && out.size() < n; ++it) {
    if (const NoteMeta* m = s.vault.Find(it->second)) out.push_back(ItemOf(*m));
  }
  return out;
}

// Recent notes, newest first, paginated: /recent, /recent?page=2, ...
void AddRecent(const Scope& s, Pages& out) {
  if (!s.f.recent) return;
  const size_t per_page = s.opt.recent_page_size, total = s.index.size();
  size_t pages = std::max<size_t>(1, (total + per_page - 1) / per_page);
  pages = std::min(pages, s.opt.recent_max_pages);
  const std::vector<LinkItem> recent = Newest(s, pages * per_page);
  for (size_t pg = 1; pg <= pages; ++pg) {
    std::vector<LinkItem> items;
    for (size_t i = (pg - 1) * per_page; i < std::min(recent.size(), pg * per_page); ++i) items.push_back(recent[i]);
    const std::string base(markdown::kRecentUrl);
    std::string key = pg == 1 ? base : base + "?page=" + std::to_string(pg);
    auto g = Listing(s.site, base, std::string(Words(s).recent_title), "", {}, std::move(items), SIZE_MAX);
    g.url = key;
    g.listing.page = static_cast<int>(pg);
    g.listing.pages = static_cast<int>(pages);
    g.listing.total = total;
    Fingerprint f;
    f.h = g.fingerprint;
    f.Add(std::to_string(pg) + "/" + std::to_string(pages) + "/" + std::to_string(total));
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

// The feeds: the newest notes by publication date, both feeds alike. An
// item's updated date is the note's own (frontmatter updated/modified), else
// the day ingest saw the content change, never the second: that time is no
// part of the vault (a restored ingest re-pushed the same vault sees it
// anew), so to the second the same vault would not give the same bytes.
constexpr int64_t kDayMs = 86400000;

void AddFeeds(const Scope& s, Pages& out) {
  if (!s.f.rss) return;
  std::vector<FeedItem> items;
  Fingerprint f;
  f.Add(s.site.name);
  f.Add(s.site.base_url);
  f.Add(s.site.feed_content ? "content" : "summary");
  const auto& order = s.index.by_published();
  for (auto it = order.begin(); it != order.end() && items.size() < s.opt.rss_items; ++it) {
    const NoteMeta* m = s.vault.Find(std::get<2>(*it));
    if (!m) continue;
    // Without a frontmatter date, when ingest saw the change, to the day
    // (as the page's "Updated" line and the sitemap show it).
    const int64_t updated = m->modified_ms ? m->modified_ms : UpdatedMs(*m) - UpdatedMs(*m) % kDayMs;
    items.push_back({m->title, m->url, PublishedMs(*m), updated, "", ""});
    for (std::string_view v : {std::string_view(m->title), std::string_view(m->url), std::string_view(m->sha256)}) {
      f.Add(v);
    }
    f.Add(std::to_string(PublishedMs(*m)) + "/" + std::to_string(updated) + "/" + std::to_string(m->version));
  }
  for (auto [url, kind, type] : {std::tuple{kRssUrl, GeneratedPage::Kind::kRss, kRssContentType},
                                 std::tuple{kJsonFeedUrl, GeneratedPage::Kind::kJsonFeed, kJsonFeedContentType}}) {
    GeneratedPage g = PlainPage(s.site, std::string(url), kind, std::string(type));
    g.feed = items;
    g.fingerprint = f.h;
    out.emplace(g.url, std::move(g));
  }
}

constexpr const char* kXml = "application/xml; charset=utf-8";

// One urlset: the notes of shard i (all of them when there is one shard).
GeneratedPage SitemapShard(const Scope& s, std::string url, size_t i, size_t shards) {
  GeneratedPage sm = PlainPage(s.site, std::move(url), GeneratedPage::Kind::kSitemap, kXml);
  for (const auto& path : s.index.ShardPaths(i, shards)) {
    if (const NoteMeta* n = s.vault.Find(path)) sm.items.push_back(ItemOf(*n));
  }
  Fingerprint f;
  f.Add(s.site.base_url);
  f.Add(sm.items);
  sm.fingerprint = f.h;
  return sm;
}

// sitemap.xml: every note; on a large site an index of sitemap-N.xml shards,
// of which a filtered build makes only those holding the changed notes.
void AddSitemap(const Scope& s, Pages& out) {
  if (!s.f.sitemap && s.f.sitemap_paths.empty()) return;
  const size_t shards = s.index.SitemapShards();
  if (shards == 1) {
    out.emplace("/sitemap.xml", SitemapShard(s, "/sitemap.xml", 0, 1));
    return;
  }
  GeneratedPage index = PlainPage(s.site, "/sitemap.xml", GeneratedPage::Kind::kSitemapIndex, kXml);
  for (size_t i = 0; i < shards; ++i) index.items.push_back({"", SitemapShardUrl(i), ""});
  Fingerprint f;
  f.Add(s.site.base_url);
  f.Add(index.items);
  index.fingerprint = f.h;
  out.emplace(index.url, std::move(index));
  std::set<size_t> wanted;
  if (s.f.sitemap) {
    for (size_t i = 0; i < shards; ++i) wanted.insert(i);
  }
  for (const auto& path : s.f.sitemap_paths) wanted.insert(ListingIndex::ShardOf(path, shards));
  for (size_t i : wanted) out.emplace(SitemapShardUrl(i), SitemapShard(s, SitemapShardUrl(i), i, shards));
}

void AddRobots(const Scope& s, Pages& out) {
  if (!s.f.robots) return;
  GeneratedPage robots = PlainPage(s.site, "/robots.txt", GeneratedPage::Kind::kRobots, "text/plain; charset=utf-8");
  Fingerprint f;
  f.Add(s.site.base_url);
  if (s.site.private_site) f.Add("private");
  robots.fingerprint = f.h;
  out.emplace(robots.url, std::move(robots));
}

void AddAliasRedirect(const Scope& s, const std::string& url, const std::string& path, Pages& out) {
  if (out.count(url)) return;
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

// Aliases answer 301 to their note, unless a listing already has the URL.
void AddAliasRedirects(const Scope& s, Pages& out) {
  if (s.f.aliases) {
    for (const auto& [url, path] : s.vault.AliasRedirects()) AddAliasRedirect(s, url, path, out);
    return;
  }
  for (const auto& url : s.f.alias_urls) {
    if (auto path = s.vault.AliasRedirect(url)) AddAliasRedirect(s, url, *path, out);
  }
}

}  // namespace

std::string GeneratedPage::Render() const {
  switch (kind) {
    case Kind::kListing: return AssembleListingPage(listing);
    case Kind::kRss: return AssembleRss(listing.site, feed);
    case Kind::kJsonFeed: return AssembleJsonFeed(listing.site, feed);
    case Kind::kSitemap: return AssembleSitemap(listing.site, items);
    case Kind::kSitemapIndex: return AssembleSitemapIndex(listing.site, items);
    case Kind::kRobots: return AssembleRobots(listing.site);
    case Kind::kRedirect: return AssembleRedirectPage(location);
    case Kind::kGraphPage: return AssembleGraphPage(listing.site);
    case Kind::kData: return body;
  }
  return "";
}

bool ListingFilter::Covers(std::string_view url, uint16_t status) const {
  if (url == kPublishCssUrl) return true;  // built by every build
  if (status == 301) return aliases || alias_urls.count(url) > 0;
  if (url == "/") return home;
  if (url == markdown::kTagsUrl) return tags_index;
  if (url == markdown::kRecentUrl || StartsWith(url, std::string(markdown::kRecentUrl) + "?")) return recent;
  if (url == kRssUrl || url == kJsonFeedUrl) return rss;
  if (url == "/sitemap.xml") return sitemap || !sitemap_paths.empty();
  if (StartsWith(url, "/sitemap-")) return sitemap;
  if (url == "/robots.txt") return robots;
  if (url == markdown::kGraphUrl || StartsWith(url, markdown::kGraphChunkPrefix)) return graph;
  if (url == markdown::kGraphDataUrl) return graph || !graph_paths.empty();
  if (StartsWith(url, markdown::kTreePrefix)) {
    if (url == TreeUrl("/")) return tree_root;
    for (const auto& f : folders) {
      if (TreeUrl(FolderUrl(f)) == url) return true;
    }
    return false;
  }
  if (StartsWith(url, markdown::kTagUrlPrefix)) {
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
  all.tree_root = all.graph = true;
  const Scope s{vault, vault.listing_index(), site, opt, only ? *only : all, only == nullptr};
  Pages out;
  AddHome(s, out);
  AddFolders(s, out);
  AddTags(s, out);
  AddRecent(s, out);
  if (!site.private_site) {  // a private site publishes no feed and no sitemap (issue 29)
    AddFeeds(s, out);
    AddSitemap(s, out);
  }
  AddRobots(s, out);
  AddTrees(s, out);
  AddGraph(s, out);
  if (const AttachmentMeta* css = vault.FindAttachment(kPublishCssPath)) {
    GeneratedPage g;
    g.url = std::string(kPublishCssUrl);
    g.status = 301;
    g.content_type = kHtml;
    g.kind = GeneratedPage::Kind::kRedirect;
    g.location = css->url;
    g.fingerprint = Fnv1a64(css->url);
    out.emplace(g.url, std::move(g));
  }
  AddAliasRedirects(s, out);  // last: a listing's URL wins over an alias
  return out;
}

}  // namespace folio::site
