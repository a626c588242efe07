// The feeds a site publishes: RSS 2.0 at /rss.xml and JSON Feed 1.1 at
// /feed.json, each the newest notes by publication date (PublishedMs,
// newest first, ties by URL), carrying either each note's rendered body
// (SiteInfo::feed_content) or its summary only. Also the helpers that take
// a feed item's parts from an assembled note page (ingest keeps the pages,
// not the bodies) and that make a body's links absolute.
//
// Pure functions; thread-safe. Inputs are borrowed for the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/site/layout.h"

namespace folio::site {

inline constexpr std::string_view kRssUrl = "/rss.xml";
inline constexpr std::string_view kJsonFeedUrl = "/feed.json";
inline constexpr std::string_view kRssContentType = "application/rss+xml; charset=utf-8";
inline constexpr std::string_view kJsonFeedContentType = "application/feed+json; charset=utf-8";

// A body longer than this (after its links are made absolute) is left out
// of its item, which carries the summary only.
inline constexpr size_t kFeedItemContentMax = size_t{64} << 10;
// The bodies of one feed together: once the next body would pass it, that
// item and all after it carry the summary only (a feed stays well under
// the bus's message limit, and a reader's fetch stays small).
inline constexpr size_t kFeedContentBudget = size_t{512} << 10;

struct FeedItem {
  std::string title;
  std::string url;            // decoded URL path of the note
  int64_t published_ms = 0;   // PublishedMs: pubDate, date_published
  int64_t updated_ms = 0;     // atom:updated, date_modified: frontmatter updated/modified, else
                              // the UTC day ingest saw the change (never to the second: the
                              // same vault gives the same feed, restored or not); 0 = none
  std::string summary;        // plain text (the page's description); "" = none
  std::string content_html;   // the note's body with absolute links; "" = summary only
};

// RSS 2.0 with the content and atom namespaces: <description> (the summary,
// or the title when there is none) always, <content:encoded> when the item
// has content. Items in the given order (newest first).
std::string AssembleRss(const SiteInfo& site, const std::vector<FeedItem>& items);
// JSON Feed 1.1: content_html when the item has content, summary always
// when there is one (content_text = the title when neither exists, as the
// spec requires one of content_html / content_text).
std::string AssembleJsonFeed(const SiteInfo& site, const std::vector<FeedItem>& items);
// Drops item content past kFeedItemContentMax each and kFeedContentBudget
// in all (see above).
void BoundFeedContent(std::vector<FeedItem>* items);

// The parts of a page AssembleNotePage made: its body as the note shows it
// (between the markers AssembleNotePage writes around it) and its
// description (unescaped). False (outputs untouched) when `page` is no note
// page of this layout.
bool NotePageParts(std::string_view page, std::string* body, std::string* description);
// `html` with every relative href and src made absolute: "/x" -> base_url +
// "/x", "#a" -> base_url + page_url + "#a", "x" -> against page_url's
// folder. Without a base URL, root-relative links stay as they are (a feed
// reader resolves them against the feed's own URL) and the others become
// root-relative. URLs with a scheme or "//" stay as they are.
std::string AbsoluteLinks(std::string_view html, std::string_view base_url, std::string_view page_url);
// The first image of a rendered body usable as a page's og:image: an
// <img> whose src is a site attachment ("/assets/...", returned decoded,
// as NotePage::image holds it) or an http(s) URL; "" if none.
std::string FirstImage(std::string_view body_html);

}  // namespace folio::site
