// Page assembly: turns a rendered note body into a complete HTML page (and
// builds the generated pages: home listing, 404). Every HTML page has the
// same chrome, in Obsidian Publish's class names (docs/themes.md is the
// contract): header.site-header, div.site-body holding
// nav.site-body-left-column (the explorer), main.site-body-center-column
// and aside.site-body-right-column (outline, backlinks, local graph), each
// column that changes per page marked data-folio-swap. The stylesheet is a
// separate, immutable, content-hashed asset, never inlined. Every page's
// header carries the search box: a plain GET form to /_/search (the edge's
// search page, search_page.h), so it works without script.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folio/site/analytics.h"

namespace folio::site {

struct LinkItem {
  std::string title;
  std::string url;   // decoded URL path; percent-encoded when written
  std::string date;  // "2026-11-30" or "" (listings show it)
};

struct TocEntry {
  int level = 2;
  std::string text;
  std::string id;
};

// The mermaid build on its CDN: one file (it defines window.mermaid), pinned
// to an exact version, with the Subresource Integrity of that file as
// published on npm (`npm pack mermaid@11.17.2`; `openssl dgst -sha384
// -binary dist/mermaid.min.js | openssl base64 -A`). The same version is
// bundled (web/mermaid/package.json): ingest serves that from the site and
// falls back to this URL without storage (services/ingest/bundled_mermaid.h).
inline constexpr std::string_view kMermaidUrl = "https://cdn.jsdelivr.net/npm/mermaid@11.17.2/dist/mermaid.min.js";
inline constexpr std::string_view kMermaidIntegrity =
    "sha384-EOXBFmc3gx5mb+vn0vPvvGqACToJD24hhacX5Yx+8NUUQrHIle/Qi5Bg9o3zKwW2";

// Site-wide settings every page shares.
struct SiteInfo {
  std::string name = "folio";  // shown in the header and <title>
  std::string base_url;        // "https://notes.example.com" or "" (then links stay relative)
  std::string mermaid_url;     // script loaded only on pages with a mermaid diagram ("" = none);
                               // checked by CheckMermaidSource (csp.h)
  std::string mermaid_integrity;  // its Subresource Integrity ("sha384-..."); "" for a same-origin path
  std::string publish_css_url;    // the vault's publish.css (an asset URL), loaded after folio's; "" = none
  std::string lang;               // the site's language, a BCP 47 tag ("de", "pt-BR"); "" = "en". Sets
                                  // <html lang> and the words of every page (i18n.h) but a note's own
                                  // frontmatter lang's
  bool feed_content = true;       // the feeds (feeds.h) carry each note's body; false = its summary only
  SiteAnalytics analytics;        // third-party analytics (analytics.h): its script on every HTML page
                                  // and its sources in their policies (csp.h); default none
  bool private_site = false;      // only signed-in readers see it (issue 29): every page says
                                  // noindex, nofollow and links no feed; robots.txt disallows all;
                                  // BuildListings makes no RSS and no sitemap
};

struct NotePage {
  SiteInfo site;
  std::string url;           // this page's URL path (canonical, og:url)
  std::string title;
  std::string body_html;     // from markdown::RenderNote
  std::string description;   // plain-text summary for <meta name="description"> and OG
  std::string created;       // "2026-11-30" or ""
  std::string updated;       // "2026-11-30" or ""
  std::string image;         // OG image URL or "" (an attachment's /assets/ URL, made absolute with base_url)
  size_t words = 0;          // words in the note's text (CJK: characters); 0 = no reading-time line
  std::string lang;          // frontmatter lang: <html lang> and the page's words when it is a
                             // language tag, else the site's (i18n.h PageLang)
  std::vector<std::string> cssclasses;  // classes on <body>
  std::vector<std::string> tags;        // shown as links to /_/tags/...
  std::vector<LinkItem> breadcrumbs;    // folders from the root to the note's folder (also the
                                        // explorer's branch: each folder's JSON is at TreeUrl(url))
  std::vector<TocEntry> toc;            // headings (shown when there are 2 or more)
  bool has_mermaid = false;
  std::vector<LinkItem> backlinks;  // possibly a bounded prefix of all of them
  size_t backlinks_total = 0;        // how many exist; the page says "and N more"
  std::vector<LinkItem> related;     // related notes as search computed them, best first
};

// A generated listing: home, folder, tag, recent.
struct ListingPage {
  SiteInfo site;
  std::string url;
  std::string title;
  std::string intro;                   // optional line under the title (escaped)
  std::vector<LinkItem> sections;      // sub-folders or sub-tags, listed first
  std::vector<LinkItem> breadcrumbs;   // a folder page: the folders from the root to its parent
                                       // (also the explorer's open branch); empty elsewhere
  std::vector<LinkItem> items;
  size_t total = 0;                    // items that exist (items may be bounded)
  int page = 1, pages = 1;             // pagination: links to url?page=N
};

// A note page; its Content-Security-Policy is NotePageCsp(p) (csp.h).
std::string AssembleNotePage(const NotePage& p);
std::string AssembleListingPage(const ListingPage& p);
// Home listing when the vault has no root index.md. `total` may exceed
// items.size() (the listing is bounded); the page says how many more exist.
std::string AssembleHomePage(std::string_view site_name, const std::vector<LinkItem>& items, size_t total);
// The 404 page; with the site's SiteInfo it links the vault's publish.css too.
std::string Assemble404Page(const SiteInfo& site);
std::string Assemble404Page(std::string_view site_name);
// A tiny page for a 301 (browsers follow the Location header; this is for humans).
std::string AssembleRedirectPage(std::string_view target_url);
// The page at the URL of a deleted (or unpublished) note: status 410.
std::string AssembleGonePage(const SiteInfo& site);
std::string AssembleGonePage(std::string_view site_name);
// RSS and JSON Feed: feeds.h.
std::string AssembleSitemap(const SiteInfo& site, const std::vector<LinkItem>& items);
// A sitemap index (a large site's /sitemap.xml) naming the sitemaps' URLs.
std::string AssembleSitemapIndex(const SiteInfo& site, const std::vector<LinkItem>& sitemaps);
std::string AssembleRobots(const SiteInfo& site);
// The global graph page (/_/graph): the site script draws it from the graph
// data; without script it says so and links to the tag index.
std::string AssembleGraphPage(const SiteInfo& site);

// The stylesheet and its URL ("/assets/folio.<hash>.css").
const std::string& StyleSheet();
// The site script every HTML page loads (theme toggle, explorer, link
// previews, graph) and its URL ("/_/folio.<hash>.js", immutable).
const std::string& SiteScript();
const std::string& SiteScriptUrl();

// Names the markup AssembleNotePage produces. Bump it with any change to a
// note page's HTML that the stylesheet and the 404 page do not show (ingest
// re-renders every note page of a site when LayoutFingerprint changes).
// 2: search box, related notes; 3: mermaid with SRI, CSP; 4: Obsidian's line
// breaks, callout kinds, task states, heading ids without #tags; 5: explorer,
// local graph, site script, theme; 7: Obsidian Publish's classes and
// variables, three columns (explorer | note | outline, backlinks, graph);
// 8: Publish's page wrappers (.published-container with its modifiers,
// .publish-renderer, .markdown-preview-sizer, cssclasses on
// .markdown-preview-view, h1.page-header) and tree classes with data-path on
// the explorer and outline, so community Publish themes match (docs/themes.md).
// 9: `publish: private` notes (README "Private notes"): public pages drop
// their backlinks and embeds, and the start re-reads which notes are private.
// 10: the page's language (issue 29): its words from i18n.h, dates per language;
// links to /feed.json beside /rss.xml in <head>, markers around the body
// (the feeds read it from the stored page, feeds.h), og:image falls back to
// the note's first image.
// 11: a private site's pages carry a sign-out button in the header, and its
// sign-in page is in the site's language (issue 29).
// Bump it too when the title rule (markdown::NoteTitle) changes: at a new
// fingerprint ingest's start also retitles the notes stored under the old rule.
inline constexpr int kLayoutVersion = 11;
// A digest of this build's layout: kLayoutVersion, the stylesheet, the site
// script, the 404 page of a site named site_name and the render settings
// ("" = defaults) that change every note's body (and the publish.css URL).
std::string LayoutFingerprint(std::string_view site_name, std::string_view render_settings = {});
// The same with the site's SiteInfo: its 404 page in the site's language, so
// a new SiteInfo::lang re-renders every page.
std::string LayoutFingerprint(const SiteInfo& site, std::string_view render_settings = {});
const std::string& StyleSheetUrl();

// Writes <a href="URL">text</a> with the URL percent-encoded and both escaped.
void AppendLink(std::string_view url, std::string_view text, std::string* out);

}  // namespace folio::site
