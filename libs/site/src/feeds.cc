// The feeds (feeds.h) and the XML a site publishes beside its pages:
// sitemaps and robots.txt (layout.h). Pure functions; thread-safe.
#include "folio/site/feeds.h"

#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/site/layout.h"
#include "folio/site/urls.h"

namespace folio::site {
namespace {

std::string XmlEscape(std::string_view s) {
  std::string out;
  AppendXmlText(s, &out);
  return out;
}

// An absolute URL when the site has a base URL, else the path.
std::string Absolute(const SiteInfo& site, std::string_view url) { return site.base_url + PercentEncodePath(url); }

// RFC 3339 in UTC, whole seconds: "2026-11-30T21:40:00Z".
std::string Rfc3339(int64_t ms) {
  std::string s = Iso8601Ms(ms - ms % 1000);
  return s.substr(0, 19) + "Z";
}

void AppendRssItem(const SiteInfo& site, const FeedItem& it, std::string* out) {
  const std::string link = XmlEscape(Absolute(site, it.url));
  *out += "<item><title>" + XmlEscape(it.title) + "</title><link>" + link + "</link><guid isPermaLink=\"" +
          (site.base_url.empty() ? "false" : "true") + "\">" + link + "</guid>";
  *out += "<description>" + XmlEscape(it.summary.empty() ? it.title : it.summary) + "</description>";
  if (!it.content_html.empty()) {
    // Escaped rather than CDATA: AppendXmlText also drops what XML forbids
    // (control characters), so the feed stays well-formed whatever the note.
    *out += "<content:encoded>";
    AppendXmlText(it.content_html, out);
    *out += "</content:encoded>";
  }
  // RFC 822 (the IMF-fixdate of HTTP is one): "Mon, 30 Nov 2026 21:40:00 GMT".
  if (it.published_ms > 0) *out += "<pubDate>" + HttpDate(it.published_ms / 1000) + "</pubDate>";
  if (it.updated_ms > 0) *out += "<atom:updated>" + Rfc3339(it.updated_ms) + "</atom:updated>";
  *out += "</item>";
}

}  // namespace

std::string AssembleRss(const SiteInfo& site, const std::vector<FeedItem>& items) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<rss version=\"2.0\" "
      "xmlns:atom=\"http://www.w3.org/2005/Atom\" xmlns:content=\"http://purl.org/rss/1.0/modules/content/\">"
      "<channel><title>";
  out += XmlEscape(site.name);
  out += "</title><link>" + XmlEscape(site.base_url.empty() ? "/" : site.base_url + "/") + "</link>";
  if (!site.base_url.empty()) {
    out += "<atom:link href=\"" + XmlEscape(site.base_url + std::string(kRssUrl)) +
           "\" rel=\"self\" type=\"application/rss+xml\"/>";
  }
  out += "<description>" + XmlEscape(site.name) + "</description>";
  for (const auto& it : items) AppendRssItem(site, it, &out);
  out += "</channel></rss>\n";
  return out;
}

std::string AssembleJsonFeed(const SiteInfo& site, const std::vector<FeedItem>& items) {
  std::string out = "{\"version\":\"https://jsonfeed.org/version/1.1\",\"title\":";
  AppendJsonString(site.name, &out);
  if (!site.base_url.empty()) {
    out += ",\"home_page_url\":";
    AppendJsonString(site.base_url + "/", &out);
    out += ",\"feed_url\":";
    AppendJsonString(site.base_url + std::string(kJsonFeedUrl), &out);
  }
  out += ",\"items\":[";
  for (size_t i = 0; i < items.size(); ++i) {
    const FeedItem& it = items[i];
    out += i ? ",{\"id\":" : "{\"id\":";
    const std::string url = Absolute(site, it.url);
    AppendJsonString(url, &out);
    out += ",\"url\":";
    AppendJsonString(url, &out);
    out += ",\"title\":";
    AppendJsonString(it.title, &out);
    if (!it.content_html.empty()) {
      out += ",\"content_html\":";
      AppendJsonString(it.content_html, &out);
    } else if (it.summary.empty()) {
      out += ",\"content_text\":";
      AppendJsonString(it.title, &out);
    }
    if (!it.summary.empty()) {
      out += ",\"summary\":";
      AppendJsonString(it.summary, &out);
    }
    if (it.published_ms > 0) out += ",\"date_published\":\"" + Rfc3339(it.published_ms) + "\"";
    if (it.updated_ms > 0) out += ",\"date_modified\":\"" + Rfc3339(it.updated_ms) + "\"";
    out += "}";
  }
  out += "]}\n";
  return out;
}

void BoundFeedContent(std::vector<FeedItem>* items) {
  size_t spent = 0;
  bool over = false;
  for (FeedItem& it : *items) {
    if (it.content_html.size() > kFeedItemContentMax) it.content_html.clear();
    over = over || spent + it.content_html.size() > kFeedContentBudget;
    if (over) it.content_html.clear();
    spent += it.content_html.size();
  }
}

std::string AssembleSitemap(const SiteInfo& site, const std::vector<LinkItem>& items) {
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
                    "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">";
  for (const auto& it : items) {
    out += "<url><loc>" + XmlEscape(Absolute(site, it.url)) + "</loc>";
    if (!it.date.empty()) out += "<lastmod>" + XmlEscape(it.date) + "</lastmod>";
    out += "</url>";
  }
  out += "</urlset>\n";
  return out;
}

std::string AssembleSitemapIndex(const SiteInfo& site, const std::vector<LinkItem>& sitemaps) {
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
                    "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">";
  for (const auto& it : sitemaps) out += "<sitemap><loc>" + XmlEscape(Absolute(site, it.url)) + "</loc></sitemap>";
  out += "</sitemapindex>\n";
  return out;
}

std::string AssembleRobots(const SiteInfo& site) {
  if (site.private_site) return "User-agent: *\nDisallow: /\n";  // and no sitemap (issue 29)
  return "User-agent: *\nAllow: /\nSitemap: " + site.base_url + "/sitemap.xml\n";
}

}  // namespace folio::site
