// The URLs of a site's generated pages (folder and tag pages, sitemap
// shards, the explorer's and the graph's JSON) and the day a listing shows
// for a time: the names layout (links in a page) and listings (the pages
// themselves) must agree on, kept here so neither includes the other.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace folio::site {

// "2026-11-30" for a unix time in ms (0 -> "").
std::string DayOf(int64_t unix_ms);
// The URL of a folder's page ("Docs/Sub" -> "/docs/sub/").
std::string FolderUrl(std::string_view folder);
// The URL of a tag's page ("Topic/Sub" -> "/_/tags/topic/sub").
std::string TagUrl(std::string_view tag);
// The URL of sitemap shard i ("/sitemap-3.xml").
std::string SitemapShardUrl(size_t i);
// The explorer JSON of the folder whose page is at folder_url ("/docs/" ->
// "/_/tree/docs/"; "/" -> "/_/tree/").
std::string TreeUrl(std::string_view folder_url);
// The URL of link-graph chunk i ("/_/graph/3.json").
std::string GraphChunkUrl(size_t i);
}  // namespace folio::site
