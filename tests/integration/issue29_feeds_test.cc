// Issue 29's feeds as a reader's feed reader meets them, through real
// nats-server, folio-ingest and folio-edge: /rss.xml and /feed.json carry
// each note's body with absolute links and its dates, newest published
// first; a deleted or unpublished note leaves both; a note's og:image is
// its first embedded image when the frontmatter names none.
#include <doctest/doctest.h>
#include <simdjson.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cluster.h"
#include "folio/core/time.h"

using namespace folio;
using namespace folio::it;

namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const std::string kBase = "https://notes.example.com";

// The items' URLs of a JSON Feed, in order.
std::vector<std::string> JsonFeedUrls(const std::string& json, simdjson::dom::parser* parser) {
  std::vector<std::string> urls;
  simdjson::dom::element doc;
  REQUIRE(parser->parse(json).get(doc) == simdjson::SUCCESS);
  for (simdjson::dom::element item : doc["items"].get_array()) urls.emplace_back(std::string_view(item["url"]));
  return urls;
}

}  // namespace

TEST_CASE("issue 29: RSS and JSON Feed carry bodies with absolute links, dates, in order; og:image falls back") {
  Cluster c({"--base-url", kBase});
  const std::string png = "\x89PNG\r\n\x1a\nfeeds-test-image";
  // Pic has no date: when ingest first saw it (now), the newest.
  REQUIRE(c.Push(AttachmentsPushBody({{"photo.png", png}}, "Pic.md", "A picture follows.\n\n![[photo.png]]\n"))
              .status == 200);
  REQUIRE(c.Push(PushBody({{"Old.md", "---\ndate: 2024-01-01\n---\n# Old heading\n\nOld text links [[Pic]].\n"},
                           {"New.md", "---\ndate: 2025-06-01\nupdated: 2025-06-10T08:00\n---\nNew text.\n"},
                           {"Tie b.md", "---\ndate: 2025-01-01\n---\nTie b text.\n"},
                           {"Tie a.md", "---\ndate: 2025-01-01\n---\nTie a text.\n"}}))
              .status == 200);
  const std::string asset = kBase + AssetPath(png, "photo.png");

  auto rss = c.WaitForPage("/rss.xml", 200, "Old text");
  INFO(rss.body);
  CHECK(rss.Header("Content-Type") == "application/rss+xml; charset=utf-8");
  CHECK(Has(rss.body, "xmlns:atom=\"http://www.w3.org/2005/Atom\""));
  // Order: published date descending, ties by URL.
  std::vector<size_t> at;
  for (const char* url : {"/pic", "/new", "/tie-a", "/tie-b", "/old"}) {
    at.push_back(rss.body.find("<link>" + kBase + url + "</link>"));
    CHECK(at.back() != std::string::npos);
  }
  for (size_t i = 1; i < at.size(); ++i) CHECK(at[i - 1] < at[i]);
  // Bodies, escaped, with absolute links and images; the summary is the first paragraph, not the heading.
  CHECK(Has(rss.body, "href=&quot;" + kBase + "/pic&quot;"));
  CHECK(Has(rss.body, "src=&quot;" + asset + "&quot;"));
  CHECK(Has(rss.body, "<description>Old text links Pic.</description>"));
  CHECK(Has(rss.body, "<pubDate>" + HttpDate(ParseDateMs("2025-06-01") / 1000) + "</pubDate>"));
  CHECK(Has(rss.body, "<atom:updated>2025-06-10T08:00:00Z</atom:updated>"));

  auto feed = c.WaitForPage("/feed.json", 200, "Old text");
  INFO(feed.body);
  CHECK(feed.Header("Content-Type") == "application/feed+json; charset=utf-8");
  simdjson::dom::parser parser;
  CHECK(JsonFeedUrls(feed.body, &parser) ==
        std::vector<std::string>{kBase + "/pic", kBase + "/new", kBase + "/tie-a", kBase + "/tie-b", kBase + "/old"});
  simdjson::dom::element doc;
  REQUIRE(parser.parse(feed.body).get(doc) == simdjson::SUCCESS);
  simdjson::dom::element pic = doc["items"].at(0), fresh = doc["items"].at(1);
  CHECK(std::string_view(pic["content_html"]).find("src=\"" + asset + "\"") != std::string_view::npos);
  CHECK(std::string_view(pic["summary"]) == "A picture follows.");
  // No frontmatter updated: the day ingest saw the content, never the second
  // (a restored ingest re-pushed the same vault gives the same feed).
  std::string_view pic_modified;
  REQUIRE(pic["date_modified"].get(pic_modified) == simdjson::SUCCESS);
  CHECK(pic_modified.size() == 20);
  CHECK(pic_modified.substr(10) == "T00:00:00Z");
  CHECK(std::string_view(fresh["date_published"]) == "2025-06-01T00:00:00Z");
  CHECK(std::string_view(fresh["date_modified"]) == "2025-06-10T08:00:00Z");

  // The page of a note with an embedded image and no frontmatter image.
  auto page = c.WaitForPage("/pic", 200);
  CHECK(Has(page.body, "<meta property=\"og:image\" content=\"" + asset + "\">"));
  CHECK(Has(page.body, "<link rel=\"alternate\" type=\"application/feed+json\""));

  // A deleted note and an unpublished one leave both feeds.
  REQUIRE(c.Push(PushBody({{"Tie a.md", "---\ndate: 2025-01-01\npublish: false\n---\nTie a text.\n"}}, {"Old.md"}))
              .status == 200);
  c.WaitForPage("/old", 410);
  for (int i = 0; i < 100 && Has(c.EdgeGet("/feed.json").body, "Tie a text"); ++i) usleep(100'000);
  rss = c.WaitForPage("/rss.xml", 200);
  CHECK(!Has(rss.body, "/old</link>"));
  CHECK(!Has(rss.body, "/tie-a</link>"));
  CHECK(Has(rss.body, "/tie-b</link>"));
  CHECK(JsonFeedUrls(c.EdgeGet("/feed.json").body, &parser) ==
        std::vector<std::string>{kBase + "/pic", kBase + "/new", kBase + "/tie-b"});

  // An edit of a feed note's body reaches the feeds.
  REQUIRE(c.Push(PushBody({{"New.md", "---\ndate: 2025-06-01\nupdated: 2025-06-10T08:00\n---\nNew text, edited.\n"}}))
              .status == 200);
  CHECK(Has(c.WaitForPage("/feed.json", 200, "New text, edited.").body, "New text, edited."));
}
