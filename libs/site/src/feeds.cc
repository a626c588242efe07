// The XML a site publishes beside its pages: RSS, sitemaps, robots.txt
// (layout.h declares them). Pure functions; thread-safe.
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/site/layout.h"
#include "folio/site/urls.h"

namespace folio::site {
namespace {

std::string XmlEscape(std::string_view s) { return HtmlEscape(s); }

// An absolute URL when the site has a base URL, else the path.
std::string Absolute(const SiteInfo& site, std::string_view url) { return site.base_url + PercentEncodePath(url); }

}  // namespace

std::string AssembleRss(const SiteInfo& site, const std::vector<LinkItem>& items) {
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<rss version=\"2.0\"><channel><title>";
  out += XmlEscape(site.name);
  out += "</title><link>" + XmlEscape(site.base_url.empty() ? "/" : site.base_url + "/") + "</link>";
  out += "<description>" + XmlEscape(site.name) + "</description>";
  for (const auto& it : items) {
    std::string link = Absolute(site, it.url);
    out += "<item><title>" + XmlEscape(it.title) + "</title><link>" + XmlEscape(link) + "</link><guid>" +
           XmlEscape(link) + "</guid>";
    // RFC 822 (the IMF-fixdate of HTTP is one): "Mon, 30 Nov 2026 21:40:00 GMT".
    if (it.time_ms > 0) out += "<pubDate>" + HttpDate(it.time_ms / 1000) + "</pubDate>";
    out += "</item>";
  }
  out += "</channel></rss>\n";
  return out;
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
