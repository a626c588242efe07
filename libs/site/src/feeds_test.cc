// The feeds (issue 29): RSS with the notes' bodies or summaries, JSON Feed,
// their dates and order, bodies taken from the stored page with absolute
// links, and a page's og:image from its first image.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "folio/core/time.h"
#include "folio/site/feeds.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "folio/site/summary.h"
#include "folio/site/vault.h"

namespace folio::site {
namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

NoteMeta Dated(std::string path, int64_t published_ms, int64_t updated_ms) {
  NoteMeta m;
  m.path = std::move(path);
  m.title = m.path.substr(0, m.path.size() - 3);
  m.sha256 = m.path;
  m.date_ms = published_ms;
  m.updated_ms = updated_ms;
  return m;
}

// A note's page as ingest stores it, and the feed item the feeds make of it.
FeedItem ItemFromPage(const SiteInfo& site, const std::string& url, const std::string& body_html,
                      const std::string& description) {
  NotePage p;
  p.site = site;
  p.url = url;
  p.title = "Post";
  p.body_html = body_html;
  p.description = description;
  std::string body, summary;
  REQUIRE(NotePageParts(AssembleNotePage(p), &body, &summary));
  FeedItem it{"Post", url, 1'790'000'000'000, 1'790'000'360'000, summary, ""};
  if (site.feed_content) it.content_html = AbsoluteLinks(body, site.base_url, url);
  return it;
}

std::vector<std::string> Urls(const std::vector<FeedItem>& items) {
  std::vector<std::string> out;
  for (const auto& it : items) out.push_back(it.url);
  return out;
}

}  // namespace

TEST_CASE("feeds: RSS carries the body with absolute links, the summary, pubDate and atom:updated") {
  SiteInfo site;
  site.name = "Notes & co";
  site.base_url = "https://notes.example.com";
  const std::string body =
      "<p>See <a href=\"/other-note\" class=\"internal-link\">other</a>, <a href=\"#part\">below</a>, "
      "<a href=\"https://x.org/a\">x</a>.</p><p><img src=\"/assets/ab12/pic%20one.png\" alt=\"p\"></p>";
  FeedItem it = ItemFromPage(site, "/blog/post", body, "Quotes \"and\" <tags>");
  CHECK(it.summary == "Quotes \"and\" <tags>");
  CHECK(Has(it.content_html, "href=\"https://notes.example.com/other-note\""));
  CHECK(Has(it.content_html, "href=\"https://notes.example.com/blog/post#part\""));
  CHECK(Has(it.content_html, "href=\"https://x.org/a\""));
  CHECK(Has(it.content_html, "src=\"https://notes.example.com/assets/ab12/pic%20one.png\""));
  CHECK(!Has(it.content_html, "folio:body"));
  const std::string rss = AssembleRss(site, {it});
  CHECK(Has(rss, "xmlns:atom=\"http://www.w3.org/2005/Atom\""));
  CHECK(Has(rss, "xmlns:content=\"http://purl.org/rss/1.0/modules/content/\""));
  CHECK(Has(rss, "<title>Notes &amp; co</title>"));
  CHECK(Has(rss, "<link>https://notes.example.com/blog/post</link>"));
  CHECK(Has(rss, "<description>Quotes &quot;and&quot; &lt;tags&gt;</description>"));
  CHECK(Has(rss, "<content:encoded>&lt;p&gt;See &lt;a href=&quot;https://notes.example.com/other-note&quot;"));
  CHECK(Has(rss, "<pubDate>" + HttpDate(1'790'000'000) + "</pubDate>"));
  CHECK(Has(rss, "<atom:updated>2026-09-21T14:19:20Z</atom:updated>"));
  CHECK(Iso8601Ms(1'790'000'360'000) == "2026-09-21T14:19:20.000Z");
}

TEST_CASE("feeds: summary mode carries the description only") {
  SiteInfo site;
  site.base_url = "https://n.example";
  site.feed_content = false;
  FeedItem it = ItemFromPage(site, "/post", "<p>The whole body</p>", "The summary");
  CHECK(it.content_html.empty());
  const std::string rss = AssembleRss(site, {it});
  CHECK(!Has(rss, "<content:encoded>"));
  CHECK(Has(rss, "<description>The summary</description>"));
  CHECK(!Has(rss, "The whole body"));
  const std::string json = AssembleJsonFeed(site, {it});
  CHECK(!Has(json, "content_html"));
  CHECK(Has(json, "\"summary\":\"The summary\""));
  // The setting is part of the feeds' fingerprint: switching it rewrites them.
  Vault v;
  (void)v.Apply({Dated("a.md", 10, 10)}, {});
  SiteInfo full = site;
  full.feed_content = true;
  CHECK(BuildListings(v, site).at("/rss.xml").fingerprint != BuildListings(v, full).at("/rss.xml").fingerprint);
  CHECK(BuildListings(v, site).at("/feed.json").fingerprint != BuildListings(v, full).at("/feed.json").fingerprint);
}

TEST_CASE("feeds: without a base URL links stay root-relative; a relative one resolves against the note") {
  CHECK(AbsoluteLinks("<a href=\"/x\">", "", "/a/b") == "<a href=\"/x\">");
  CHECK(AbsoluteLinks("<a href=\"#h\">", "", "/a/b") == "<a href=\"/a/b#h\">");
  CHECK(AbsoluteLinks("<img src=\"c.png\">", "https://e.x", "/a/b") == "<img src=\"https://e.x/a/c.png\">");
  CHECK(AbsoluteLinks("<a href=\"mailto:m@e.x\" data-href=\"/y\">", "https://e.x", "/") ==
        "<a href=\"mailto:m@e.x\" data-href=\"/y\">");
  CHECK(AbsoluteLinks("<a href=\"//cdn.x/y\">", "https://e.x", "/") == "<a href=\"//cdn.x/y\">");
}

TEST_CASE("feeds: ordered by published date, newest first, ties by URL; the newest 50 by the same key") {
  Vault v;
  std::vector<NoteMeta> notes;
  // Updated order is the reverse of published order: the feed must follow published.
  for (int i = 0; i < 60; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "n%02d.md", i);
    notes.push_back(Dated(name, 1'000'000 + i * 1000, 9'000'000 - i * 1000));
  }
  notes.push_back(Dated("tie-b.md", 1'059'000, 1));  // the same date as n59: b after n59? by URL
  notes.push_back(Dated("tie-a.md", 1'059'000, 1));
  (void)v.Apply(notes, {});
  auto pages = BuildListings(v, SiteInfo{});
  const auto& items = pages.at("/rss.xml").feed;
  REQUIRE(items.size() == 50);
  std::vector<std::string> urls = Urls(items);
  CHECK(urls[0] == "/n59");
  CHECK(urls[1] == "/tie-a");
  CHECK(urls[2] == "/tie-b");
  CHECK(urls[3] == "/n58");
  CHECK(urls.back() == "/n12");
  for (size_t i = 1; i < items.size(); ++i) CHECK(items[i - 1].published_ms >= items[i].published_ms);
  CHECK(Urls(pages.at("/feed.json").feed) == urls);
  // The rendered RSS lists them in that order.
  const std::string rss = pages.at("/rss.xml").Render();
  CHECK(rss.find("<link>/n59</link>") < rss.find("<link>/tie-a</link>"));
  CHECK(rss.find("<link>/tie-b</link>") < rss.find("<link>/n58</link>"));
  // A note's frontmatter date moving it back reorders the feed (Retime).
  NoteMeta moved = Dated("n59.md", 1, 9'000'000 - 59'000);
  (void)v.Apply({moved}, {});
  CHECK(BuildListings(v, SiteInfo{}).at("/rss.xml").feed.front().url == "/tie-a");
  // Deleted and unpublished notes leave both feeds.
  NoteMeta hidden = Dated("tie-a.md", 1'059'000, 1);
  hidden.published = false;
  (void)v.Apply({hidden}, {"tie-b.md"});
  auto after = BuildListings(v, SiteInfo{});
  CHECK(after.at("/rss.xml").feed.front().url == "/n58");
  CHECK(after.at("/feed.json").feed.front().url == "/n58");
}

// The faults test's case (issue 23): ingest loses its disk, restores a
// backup taken before a note's last edit, and the author pushes the same
// vault again. The edit arrives at another time; the feeds must not show it.
TEST_CASE("feeds: the same vault gives the same bytes whenever ingest saw its changes (a restore and re-push)") {
  auto build = [](int64_t edit_seen_ms) {
    Vault v;
    std::vector<NoteMeta> first;
    for (const char* p : {"a.md", "b.md", "c.md"}) {
      first.push_back(Dated(p, 0, 1'000'000));
      first.back().date_ms = 0;  // no frontmatter dates: published = when ingest first saw it
    }
    first.back().modified_ms = 1'790'000'360'000;  // c says when it was updated
    (void)v.Apply(first, {});
    NoteMeta edit = Dated("a.md", 0, edit_seen_ms);
    edit.sha256 = "edited";
    (void)v.Apply({edit}, {});
    const auto pages = BuildListings(v, SiteInfo{});
    return std::pair{pages.at("/rss.xml").Render(), pages.at("/feed.json").Render()};
  };
  const auto before = build(2'000'000);         // the edit as first pushed
  const auto after_restore = build(9'000'000);  // the same edit, re-pushed after the restore
  CHECK(before.first == after_restore.first);
  CHECK(before.second == after_restore.second);
  // The dates the notes carry still show: first seen (published) and c's updated.
  CHECK(Has(before.first, "<pubDate>" + HttpDate(1'000) + "</pubDate>"));
  CHECK(Has(before.first, "<atom:updated>2026-09-21T14:19:20Z</atom:updated>"));
  CHECK(Has(before.second, "\"date_modified\":\"2026-09-21T14:19:20Z\""));
  CHECK(!Has(before.second, "1970-01-01T00:33:20Z"));  // 2'000'000 ms: when ingest saw the edit
}

TEST_CASE("feeds: JSON Feed 1.1 parses and names its items' fields") {
  SiteInfo site;
  site.name = "My \"site\"";
  site.base_url = "https://n.example";
  FeedItem a = ItemFromPage(site, "/a note", "<p>Body <a href=\"/b\">b</a></p>", "Sum");
  FeedItem b{"B", "/b", 1'000'000, 2'000'000, "", ""};
  const std::string json = AssembleJsonFeed(site, {a, b});
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(json).get(doc) == simdjson::SUCCESS);
  CHECK(std::string_view(doc["version"]) == "https://jsonfeed.org/version/1.1");
  CHECK(std::string_view(doc["title"]) == "My \"site\"");
  CHECK(std::string_view(doc["home_page_url"]) == "https://n.example/");
  CHECK(std::string_view(doc["feed_url"]) == "https://n.example/feed.json");
  simdjson::dom::array items = doc["items"];
  REQUIRE(items.size() == 2);
  simdjson::dom::element first = items.at(0);
  CHECK(std::string_view(first["id"]) == "https://n.example/a%20note");
  CHECK(std::string_view(first["url"]) == "https://n.example/a%20note");
  CHECK(std::string_view(first["title"]) == "Post");
  CHECK(std::string_view(first["summary"]) == "Sum");
  CHECK(std::string_view(first["content_html"]).find("href=\"https://n.example/b\"") != std::string_view::npos);
  CHECK(std::string_view(first["date_published"]) == "2026-09-21T14:13:20Z");
  CHECK(std::string_view(first["date_modified"]) == "2026-09-21T14:19:20Z");
  simdjson::dom::element second = items.at(1);
  CHECK(std::string_view(second["content_text"]) == "B");  // neither body nor summary: the title
  CHECK(second["content_html"].error() == simdjson::NO_SUCH_FIELD);
  CHECK(std::string_view(second["date_published"]) == "1970-01-01T00:16:40Z");
}

TEST_CASE("feeds: a body past 64 KiB, or past the feed's budget, falls back to the summary") {
  std::vector<FeedItem> items;
  items.push_back({"big", "/big", 1, 1, "s", std::string(kFeedItemContentMax + 1, 'x')});
  for (int i = 0; i < 12; ++i) items.push_back({"n", "/n", 1, 1, "s", std::string(60 << 10, 'y')});
  BoundFeedContent(&items);
  CHECK(items[0].content_html.empty());
  size_t total = 0, with = 0;
  for (const auto& it : items) {
    total += it.content_html.size();
    with += !it.content_html.empty();
  }
  CHECK(total <= kFeedContentBudget);
  CHECK(with == kFeedContentBudget / (60 << 10));  // the newest first, then summaries only
  CHECK(!items[1].content_html.empty());
  CHECK(items.back().content_html.empty());
}

TEST_CASE("feeds: og:image falls back to the first image; the head links both feeds") {
  CHECK(FirstImage("<p>x</p><img src=\"/assets/ab/my%20pic.png\" alt=\"a\"><img src=\"/assets/cd/2.png\">") ==
        "/assets/ab/my pic.png");
  CHECK(FirstImage("<img alt=\"x\" src=\"https://img.example/a.png?w=1&amp;h=2\">") ==
        "https://img.example/a.png?w=1&h=2");
  CHECK(FirstImage("<p>no image</p><a href=\"/assets/x.png\">x</a>").empty());
  NotePage p;
  p.site.name = "S";
  p.site.base_url = "https://s.example";
  p.url = "/n";
  p.title = "N";
  p.image = FirstImage("<img src=\"/assets/ab/my%20pic.png\">");
  const std::string html = AssembleNotePage(p);
  CHECK(Has(html, "<meta property=\"og:image\" content=\"https://s.example/assets/ab/my%20pic.png\">"));
  CHECK(Has(html, "<meta name=\"twitter:card\" content=\"summary_large_image\">"));
  CHECK(Has(html, "<link rel=\"alternate\" type=\"application/rss+xml\" title=\"S\" href=\"/rss.xml\">"));
  CHECK(Has(html, "<link rel=\"alternate\" type=\"application/feed+json\" title=\"S\" href=\"/feed.json\">"));
}

TEST_CASE("feeds: a note opening with a heading is described by its first paragraph (issue 28)") {
  CHECK(NoteDescription("# A heading\n\nThe first paragraph, said plainly.\n\nThe second.\n") ==
        "The first paragraph, said plainly.");
}

}  // namespace folio::site
