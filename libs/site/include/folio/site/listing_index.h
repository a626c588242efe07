// ListingIndex: the orders and groupings the generated listings read (home
// by title, newest first, folders, tags, sitemap shards, alias URLs), kept
// up to date note by note, so building one listing costs what that listing
// shows, not a walk over the vault (docs/architecture.md "A push").
//
// Ownership: the Vault owns one and calls Add when a published note enters
// it and Remove (with the same NoteMeta) before it leaves or changes.
// Threading: like the Vault: mutate from one thread; const methods may run
// on many threads while nobody mutates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "folio/site/layout.h"

namespace folio::site {

struct NoteMeta;

// Listing order: title, then URL (URLs are unique among published notes).
struct ByTitle {
  bool operator()(const LinkItem& a, const LinkItem& b) const {
    return a.title != b.title ? a.title < b.title : a.url < b.url;
  }
};
using TitleOrdered = std::set<LinkItem, ByTitle>;
// Obsidian's file-explorer order: case-insensitive, runs of digits by value
// ("Note 2" < "Note 10").
bool NaturalLess(std::string_view a, std::string_view b);

// The explorer's order: NaturalLess of the titles, then ByTitle.
struct ByNaturalTitle {
  bool operator()(const LinkItem* a, const LinkItem* b) const;
};

class ListingIndex {
 public:
  struct Folder {
    Folder() = default;
    // `natural` points into `notes`: moved together (set nodes stay put), never copied.
    Folder(Folder&&) = default;
    Folder& operator=(Folder&&) = default;
    Folder(const Folder&) = delete;
    Folder& operator=(const Folder&) = delete;

    TitleOrdered notes;                          // published notes directly inside
    // The same notes (elements of `notes`) in the explorer's order, so its
    // JSON takes the first ones instead of sorting the folder each time.
    std::set<const LinkItem*, ByNaturalTitle> natural;
    std::map<std::string, size_t, std::less<>> subfolders;  // child folder -> notes at or below it
    size_t below = 0;                            // published notes at or below this folder
  };
  struct Tag {
    TitleOrdered notes;  // notes carrying the tag or one nested below it
    // Per note carrying it, the tag as that note wrote it; the page shows
    // the spelling of the first note by path.
    std::map<std::string, std::string> spelling;
    std::map<std::string, size_t> subtags;  // lower-cased child tag -> notes using that pair
    const std::string& name() const { return spelling.begin()->second; }
  };

  // `stored_path` equals n.path and outlives n's entry (the Vault passes its
  // map key): newest() and the sitemap shards hold views of it, not copies.
  void Add(const NoteMeta& n, std::string_view stored_path);
  void Remove(const NoteMeta& n);
  // A listed note whose dates alone changed (UpdatedMs or PublishedMs from
  // `was` to `now`; entry, tags and aliases the same): moves it in newest()
  // and by_published() only.
  void Retime(const NoteMeta& was, const NoteMeta& now, std::string_view stored_path);

  size_t size() const { return by_title_.size(); }
  const TitleOrdered& by_title() const { return by_title_; }
  // (-updated_ms, path): newest first, then by path.
  const std::set<std::pair<int64_t, std::string_view>>& newest() const { return newest_; }
  // (-published_ms, URL, path): the feeds' order, newest published first,
  // then by URL (unique among published notes).
  using PublishedKey = std::tuple<int64_t, std::string, std::string_view>;
  const std::set<PublishedKey>& by_published() const { return by_published_; }
  const std::map<std::string, Folder, std::less<>>& folders() const { return folders_; }
  // The vault's root as a folder: notes at the top level, top-level folders.
  const Folder& root() const { return root_; }
  const std::map<std::string, Tag, std::less<>>& tags() const { return tags_; }
  // Alias URL ("/old-name") -> paths of the published notes claiming it.
  const std::map<std::string, std::set<std::string>, std::less<>>& alias_urls() const { return alias_urls_; }

  // The sitemap is split into shards of at most kSitemapShardTarget notes
  // (a power of two of them, by a hash of the path), so one new note
  // rewrites one shard. One shard = /sitemap.xml itself.
  static constexpr size_t kSitemapShardTarget = 5000;
  static size_t SitemapShardsFor(size_t notes);
  size_t SitemapShards() const { return SitemapShardsFor(size()); }
  static size_t ShardOf(std::string_view path, size_t shards);
  // The link graph's data is split the same way into chunks of at most
  // kGraphChunkTarget notes, so a note whose links change rewrites one chunk.
  static constexpr size_t kGraphChunkTarget = 1000;
  static size_t GraphChunksFor(size_t notes);
  size_t GraphChunks() const { return GraphChunksFor(size()); }
  // Paths of the published notes in shard `i` of `shards`, sorted.
  std::vector<std::string> ShardPaths(size_t i, size_t shards) const;

  // The URL an alias redirects from ("Old Name" -> "/old-name"; "" for none).
  static std::string AliasUrl(std::string_view alias);
  // A note's lower-cased tags with every prefix of a nested one
  // ("A/b" -> "a", "a/b"), each with its spelling in this note.
  static std::map<std::string, std::string> TagKeys(const std::vector<std::string>& tags);

 private:
  TitleOrdered by_title_;
  std::set<std::pair<int64_t, std::string_view>> newest_;
  std::set<PublishedKey> by_published_;
  std::map<std::string, Folder, std::less<>> folders_;
  Folder root_;
  std::map<std::string, Tag, std::less<>> tags_;
  std::set<std::pair<uint64_t, std::string_view>> by_hash_;  // (hash of path, path)
  std::map<std::string, std::set<std::string>, std::less<>> alias_urls_;
};

// The listing entry of a note: title, URL and day.
LinkItem ItemOf(const NoteMeta& n);

}  // namespace folio::site
