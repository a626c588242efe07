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
  std::map<std::string, GeneratedPage> out;
  ListingFilter all;
  all.home = all.tags_index = all.recent = all.rss = all.sitemap = all.robots = all.aliases = true;
  const bool every_folder = only == nullptr, every_tag = only == nullptr;
  const ListingFilter& f = only ? *only : all;
  std::vector<const NoteMeta*> notes;
  for (const auto& [path, n] : vault.notes()) {
    if (n.published) notes.push_back(&n);
  }
  auto item = [](const NoteMeta* n) { return LinkItem{n->title, n->url, DayOf(n->updated_ms)}; };

  // Home, unless a root index.md provides it.
  if (f.home && !vault.HasIndexNote()) {
    std::vector<LinkItem> all;
    for (const auto* n : notes) all.push_back(item(n));
    std::sort(all.begin(), all.end(), ByTitle);
    size_t total = all.size();
    auto g = Listing(site, "/", site.name, std::to_string(total) + (total == 1 ? " note" : " notes"), {},
                     std::move(all), opt.list_limit);
    out.emplace("/", std::move(g));
  }

  // Folder pages: notes directly inside, then sub-folders.
  std::map<std::string, std::vector<LinkItem>> folder_items;
  std::map<std::string, std::set<std::string>> subfolders;
  for (const auto* n : every_folder || !f.folders.empty() ? notes : std::vector<const NoteMeta*>{}) {
    std::string_view dir = PathDir(n->path);
    if (dir.empty()) continue;
    if (every_folder || f.folders.count(dir)) folder_items[std::string(dir)].push_back(item(n));
    // Every ancestor exists as a folder page, and lists its children.
    for (std::string_view d = dir; !d.empty();) {
      std::string_view parent = PathDir(d);
      if (every_folder || f.folders.count(d)) folder_items[std::string(d)];
      if (!parent.empty() && (every_folder || f.folders.count(parent))) subfolders[std::string(parent)].insert(std::string(d));
      d = parent;
    }
  }
  for (auto& [dir, items] : folder_items) {
    std::string url = FolderUrl(dir);
    if (vault.UrlOwner(url) || Vault::IsReservedUrl(url)) continue;  // the folder's own note (index.md or Dir/Dir.md)
    std::vector<LinkItem> sections;
    for (const auto& sub : subfolders[dir]) sections.push_back({std::string(PathBase(sub)) + "/", FolderUrl(sub), ""});
    std::sort(items.begin(), items.end(), ByTitle);
    size_t count = items.size();
    out.emplace(url, Listing(site, url, std::string(PathBase(dir)),
                             std::to_string(count) + (count == 1 ? " note" : " notes") + " in " + dir, std::move(sections),
                             std::move(items), opt.list_limit));
  }

  // Tag pages: each tag and each prefix of a nested tag; /tags lists them all.
  std::map<std::string, std::vector<LinkItem>> tag_items;  // lower-cased tag -> notes
  std::map<std::string, std::string> tag_name;             // lower-cased -> as first written
  std::map<std::string, std::set<std::string>> subtags;
  const bool any_tags = every_tag || f.tags_index || !f.tags.empty();
  for (const auto* n : any_tags ? notes : std::vector<const NoteMeta*>{}) {
    std::set<std::string> mine;
    for (const auto& t : n->tags) {
      std::string prefix;
      size_t start = 0;
      for (;;) {
        size_t slash = t.find('/', start);
        std::string part = t.substr(0, slash);
        std::string key = AsciiLower(part);
        tag_name.emplace(key, part);
        if (!prefix.empty()) subtags[prefix].insert(key);
        mine.insert(key);
        prefix = key;
        if (slash == std::string::npos) break;
        start = slash + 1;
      }
    }
    for (const auto& k : mine) {
      auto& list = tag_items[k];
      if (every_tag || f.tags.count(k)) list.push_back(item(n));
      else list.push_back(LinkItem{});  // counted for /tags, not listed
    }
  }
  std::vector<LinkItem> all_tags;
  for (auto& [key, items] : tag_items) {
    if (!every_tag && !f.tags.count(key)) {
      all_tags.push_back({"#" + tag_name[key] + " (" + std::to_string(items.size()) + ")", TagUrl(key), ""});
      continue;
    }
    std::vector<LinkItem> sections;
    for (const auto& s : subtags[key]) sections.push_back({"#" + tag_name[s], TagUrl(s), ""});
    std::sort(items.begin(), items.end(), ByTitle);
    size_t count = items.size();
    all_tags.push_back({"#" + tag_name[key] + " (" + std::to_string(count) + ")", TagUrl(key), ""});
    std::string url = TagUrl(key);
    out.emplace(url, Listing(site, url, "#" + tag_name[key], std::to_string(count) + (count == 1 ? " note" : " notes"),
                             std::move(sections), std::move(items), opt.list_limit));
  }
  if (f.tags_index) {
    out.emplace("/tags", Listing(site, "/tags", "Tags", std::to_string(all_tags.size()) + " tags", {},
                                 std::move(all_tags), SIZE_MAX));
  }

  // Recent notes, newest first, paginated: /recent, /recent?page=2, ...
  std::vector<const NoteMeta*> recent = f.recent || f.rss ? notes : std::vector<const NoteMeta*>{};
  std::sort(recent.begin(), recent.end(), [](const NoteMeta* a, const NoteMeta* b) {
    return a->updated_ms != b->updated_ms ? a->updated_ms > b->updated_ms : a->path < b->path;
  });
  size_t pages = std::max<size_t>(1, (recent.size() + opt.recent_page_size - 1) / opt.recent_page_size);
  pages = std::min(pages, opt.recent_max_pages);
  for (size_t pg = 1; f.recent && pg <= pages; ++pg) {
    std::vector<LinkItem> items;
    for (size_t i = (pg - 1) * opt.recent_page_size; i < std::min(recent.size(), pg * opt.recent_page_size); ++i) {
      items.push_back(item(recent[i]));
    }
    std::string key = pg == 1 ? "/recent" : "/recent?page=" + std::to_string(pg);
    auto g = Listing(site, "/recent", "Recent notes", "", {}, std::move(items), SIZE_MAX);
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

  // RSS (newest first), sitemap (every note), robots.txt.
  GeneratedPage rss;
  rss.url = "/rss.xml";
  rss.kind = GeneratedPage::Kind::kRss;
  rss.content_type = "application/rss+xml; charset=utf-8";
  rss.listing.site = site;
  for (size_t i = 0; i < std::min(recent.size(), opt.rss_items); ++i) rss.items.push_back(item(recent[i]));
  Fingerprint fr;
  fr.Add(site.name);
  fr.Add(site.base_url);
  fr.Add(rss.items);
  rss.fingerprint = fr.h;
  if (f.rss) out.emplace(rss.url, std::move(rss));

  GeneratedPage sm;
  sm.url = "/sitemap.xml";
  sm.kind = GeneratedPage::Kind::kSitemap;
  sm.content_type = "application/xml; charset=utf-8";
  sm.listing.site = site;
  if (f.sitemap) {
    for (const auto* n : notes) sm.items.push_back(item(n));
  }
  Fingerprint fs;
  fs.Add(site.base_url);
  fs.Add(sm.items);
  sm.fingerprint = fs.h;
  if (f.sitemap) out.emplace(sm.url, std::move(sm));

  GeneratedPage robots;
  robots.url = "/robots.txt";
  robots.kind = GeneratedPage::Kind::kRobots;
  robots.content_type = "text/plain; charset=utf-8";
  robots.listing.site = site;
  Fingerprint fb;
  fb.Add(site.base_url);
  robots.fingerprint = fb.h;
  if (f.robots) out.emplace(robots.url, std::move(robots));

  // Aliases answer 301 to their note.
  for (const auto& [url, path] : f.aliases ? vault.AliasRedirects() : std::map<std::string, std::string>{}) {
    if (out.count(url)) continue;
    GeneratedPage r;
    r.url = url;
    r.kind = GeneratedPage::Kind::kRedirect;
    r.status = 301;
    r.content_type = kHtml;
    r.location = vault.Find(path)->url;
    Fingerprint f;
    f.Add("301");
    f.Add(r.location);
    r.fingerprint = f.h;
    out.emplace(url, std::move(r));
  }
  return out;
}

}  // namespace folio::site
