#include "folio/site/layout.h"

#include <algorithm>

#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/markdown/slug.h"
#include "folio/site/dates.h"
#include "folio/site/urls.h"
#include "layout_internal.h"

namespace folio::site {
namespace {

// The stylesheet source lives in style.css next to this file; CMake embeds
// it as a raw string (see CMakeLists.txt) so the binary is self-contained.
const char kStyleCss[] =
#include "style.css.inc"
    ;
const char kSiteJs[] =
#include "folio.js.inc"
    ;

std::string Absolute(const SiteInfo& site, std::string_view url) {
  return site.base_url + PercentEncodePath(url);
}

void Meta(std::string_view attr, std::string_view key, std::string_view value, std::string* out) {
  if (value.empty()) return;
  *out += "<meta ";
  *out += attr;
  *out += "=\"";
  AppendHtmlEscaped(key, out);
  *out += "\" content=\"";
  AppendHtmlEscaped(value, out);
  *out += "\">";
}

// " a b" for the note's cssclasses (nothing without them).
void AppendClasses(const std::vector<std::string>* classes, std::string* out) {
  if (!classes) return;
  for (const auto& c : *classes) {
    *out += ' ';
    AppendHtmlEscaped(c, out);
  }
}

// The search box of every page's header: a plain GET form, so it works
// without script; the search page's script enhances this same form.
void AppendSearchBox(const internal::Head& h, std::string* out) {
  *out += "<form class=\"search-box\" role=\"search\" action=\"/_/search\" method=\"get\">"
          "<label class=\"search-bar\"><span class=\"visually-hidden\">Search notes</span>"
          "<input type=\"search\" name=\"q\" placeholder=\"Search notes\" autocomplete=\"off\" "
          "enterkeyhint=\"search\" value=\"";
  AppendHtmlEscaped(h.search_query, out);
  *out += "\"></label>";
  if (!h.search_mode.empty() && h.search_mode != "hybrid") {
    *out += "<input type=\"hidden\" name=\"mode\" value=\"";
    AppendHtmlEscaped(h.search_mode, out);
    *out += "\">";
  }
  *out += "<button type=\"submit\">Search</button></form>";
}

// A folder's vault path ("A/B", the explorer's data-path) from the branch's titles: the folders' names.
std::string BranchPath(const std::vector<LinkItem>& branch, size_t n) {
  std::string path;
  for (size_t i = 0; i < n && i < branch.size(); ++i) {
    if (i) path += '/';
    path += branch[i].title;
  }
  return path;
}

// One open folder of the explorer in Publish's tree classes; closed by "</ul></details></li>".
void AppendFolderOpen(std::string_view url, std::string_view title, std::string_view path, bool current,
                      std::string* out) {
  *out += "<li class=\"tree-folder tree-item\"><details open data-tree=\"";
  AppendHtmlEscaped(PercentEncodePath(TreeUrl(url)), out);
  *out += current ? "\"><summary class=\"tree-item-self mod-collapsible mod-active\" data-path=\""
                  : "\"><summary class=\"tree-item-self mod-collapsible\" data-path=\"";
  AppendHtmlEscaped(path, out);
  *out += "\"><a class=\"tree-item-inner\" href=\"";
  AppendHtmlEscaped(PercentEncodePath(url), out);
  *out += current ? "\" aria-current=\"page\">" : "\">";
  AppendHtmlEscaped(title, out);
  *out += "</a></summary><ul class=\"tree tree-item-children\">";
}

// The explorer (the left column): server-rendered, only the open branch
// (root, the folders down to the current item, the item), so a page depends
// on its path alone and a new note elsewhere never re-renders it. The site
// script fills in every level from the folders' JSON (TreeUrl) and loads
// closed folders when opened, in the same Publish tree classes (docs/themes.md).
void AppendExplorer(const internal::Head& h, std::string* out) {
  *out += "<nav class=\"site-body-left-column explorer\" id=\"explorer\" aria-label=\"Explorer\">"
          "<div class=\"site-body-left-column-inner\"><div class=\"nav-view-outer\">"
          "<details class=\"explorer-box\" open><summary>Explorer</summary><ul class=\"tree nav-view\" data-tree=\"";
  AppendHtmlEscaped(PercentEncodePath(TreeUrl("/")), out);
  *out += "\">";
  static const std::vector<LinkItem> kNone;
  const std::vector<LinkItem>& branch = h.branch ? *h.branch : kNone;
  for (size_t i = 0; i < branch.size(); ++i) {
    AppendFolderOpen(branch[i].url, branch[i].title, BranchPath(branch, i + 1), false, out);
  }
  std::string path = BranchPath(branch, branch.size());
  if (!path.empty()) path += '/';
  path += h.current_title;
  if (!h.current_url.empty() && h.current_is_folder) {
    AppendFolderOpen(h.current_url, h.current_title, path, true, out);
    *out += "</ul></details></li>";
  } else if (!h.current_url.empty()) {
    *out += "<li class=\"tree-note tree-item\"><a class=\"tree-item-self mod-active\" data-path=\"";
    AppendHtmlEscaped(path + ".md", out);
    *out += "\" href=\"";
    AppendHtmlEscaped(PercentEncodePath(h.current_url), out);
    *out += "\" aria-current=\"page\"><span class=\"tree-item-inner\">";
    AppendHtmlEscaped(h.current_title, out);
    *out += "</span></a></li>";
  }
  for (size_t i = 0; i < branch.size(); ++i) *out += "</ul></details></li>";
  *out += "</ul></details></div></div></nav>";
}

}  // namespace

namespace internal {

void AppendHead(const SiteInfo& site, const Head& h, std::string* out) {
  *out += "<!doctype html>\n<html lang=\"";
  AppendHtmlEscaped(h.lang.empty() ? std::string_view("en") : h.lang, out);
  *out += "\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
          "<meta name=\"color-scheme\" content=\"light dark\">";
  if (site.private_site) {  // issue 29: nothing of a private site is indexed or followed
    *out += "<meta name=\"robots\" content=\"noindex, nofollow\">";
  } else if (h.noindex) {
    *out += "<meta name=\"robots\" content=\"noindex\">";
  }
  *out += "<title>";
  AppendHtmlEscaped(h.title, out);
  if (!site.name.empty() && h.title != site.name) {
    *out += " · ";
    AppendHtmlEscaped(site.name, out);
  }
  *out += "</title>";
  Meta("name", "description", h.description, out);
  Meta("property", "og:title", h.title, out);
  Meta("property", "og:description", h.description, out);
  Meta("property", "og:type", h.og_type, out);
  Meta("property", "og:site_name", site.name, out);
  if (!h.url.empty()) {
    // Absolute with --base-url; without it og:url cannot be written (it must
    // be absolute) and the canonical link is the path.
    if (!site.base_url.empty()) Meta("property", "og:url", Absolute(site, h.url), out);
    *out += "<link rel=\"canonical\" href=\"";
    AppendHtmlEscaped(site.base_url.empty() ? PercentEncodePath(h.url) : Absolute(site, h.url), out);
    *out += "\">";
  }
  if (!h.image.empty() && h.image.front() == '/') {  // an attachment of the site
    Meta("property", "og:image", site.base_url.empty() ? PercentEncodePath(h.image) : Absolute(site, h.image), out);
  } else {
    Meta("property", "og:image", h.image, out);
  }
  // X reads og:title, og:description and og:image when its own tags are
  // absent: only the card type is its own (a page pays its bytes twice in
  // the edge's memory).
  Meta("name", "twitter:card", h.image.empty() ? "summary" : "summary_large_image", out);
  *out += "<link rel=\"stylesheet\" href=\"" + StyleSheetUrl() + "\">";
  if (!site.publish_css_url.empty()) {  // the author's, after folio's so it wins
    *out += "<link rel=\"stylesheet\" href=\"";
    AppendHtmlEscaped(PercentEncodePath(site.publish_css_url), out);
    *out += "\">";
  }
  *out += "<script src=\"" + SiteScriptUrl() + "\" defer></script>";
  *out += "<link rel=\"icon\" href=\"data:,\">";  // no /favicon.ico request
  if (!site.private_site) {  // a private site publishes no feed
    *out += "<link rel=\"alternate\" type=\"application/rss+xml\" title=\"";
    AppendHtmlEscaped(site.name, out);
    *out += "\" href=\"/rss.xml\">";
  }
  *out += "</head>\n<body";
  if (h.body_classes && !h.body_classes->empty()) {
    *out += " class=\"";
    for (size_t i = 0; i < h.body_classes->size(); ++i) {
      if (i) *out += ' ';
      AppendHtmlEscaped((*h.body_classes)[i], out);
    }
    *out += "\"";
  }
  *out += "><script>";
  *out += kThemeInit;
  // Publish's wrapper of header and columns: themes scope their variables
  // and layout rules here, keyed on its modifiers.
  *out += "</script><div class=\"published-container has-navigation";
  if (h.has_outline) *out += " has-outline";
  if (h.has_graph) *out += " has-graph";
  *out += " is-readable-line-width\"><header class=\"site-header\">"
          "<button class=\"site-explorer-toggle\" type=\"button\" aria-controls=\"explorer\" aria-expanded=\"false\" "
          "aria-label=\"Explorer\" title=\"Explorer\"><span class=\"toggle-icon\" aria-hidden=\"true\"></span></button>"
          "<a class=\"site-name site-body-left-column-site-name\" href=\"/\">";
  AppendHtmlEscaped(site.name, out);
  *out += "</a><nav class=\"site-nav\"><a href=\"/_/recent\">Recent</a> <a href=\"/_/tags\">Tags</a> "
          "<a href=\"/_/graph\">Graph</a></nav>";
  AppendSearchBox(h, out);
  *out += "<button class=\"site-outline-toggle\" type=\"button\" aria-controls=\"outline\" aria-expanded=\"false\" "
          "aria-label=\"Outline\" title=\"Outline\"";
  if (!h.has_outline) *out += " hidden";
  *out += "><span class=\"toggle-icon\" aria-hidden=\"true\"></span></button></header>\n<div class=\"site-body\">";
  AppendExplorer(h, out);
  *out += "<main class=\"site-body-center-column\" data-folio-swap=\"main\"><div class=\"publish-renderer\">"
          "<div class=\"markdown-preview-view markdown-rendered";
  AppendClasses(h.body_classes, out);  // Obsidian puts cssclasses here too
  *out += "\"><div class=\"markdown-preview-sizer markdown-preview-section\">";
}

void AppendTail(std::string* out, std::string_view aside_html) {
  *out += "</div></div></div></main>\n<aside class=\"site-body-right-column\" data-folio-swap=\"aside\">";
  *out += aside_html;
  *out += "</aside></div></div>\n<footer class=\"site-footer\">Published with folio · <a href=\"/rss.xml\">RSS</a> · "
          "<a href=\"/_/recent\">Recent</a> · <a href=\"/_/tags\">Tags</a> · <a href=\"/_/graph\">Graph</a>"
          "</footer></body></html>\n";
}

}  // namespace internal

namespace {

using internal::AppendHead;
using internal::AppendTail;
using internal::Head;

void AppendList(const std::vector<LinkItem>& items, const char* cls, std::string* out) {
  *out += "<ul class=\"";
  *out += cls;
  *out += "\">";
  for (const auto& it : items) {
    *out += "<li>";
    AppendLink(it.url, it.title, out);
    if (!it.date.empty()) {
      *out += " <time>";
      AppendHtmlEscaped(it.date, out);
      *out += "</time>";
    }
    *out += "</li>";
  }
  *out += "</ul>";
}

}  // namespace

const std::string& StyleSheet() {
  static const std::string css(kStyleCss);
  return css;
}

const std::string& SiteScript() {
  static const std::string js(kSiteJs);
  return js;
}

const std::string& SiteScriptUrl() {
  // Under /_/, not /assets/: the edge serves /assets/ as untrusted uploads,
  // never as script.
  static const std::string url = std::string(markdown::kGeneratedPrefix) + "folio." +
                                 Sha256Hex(SiteScript()).substr(0, 12) + ".js";
  return url;
}

const std::string& StyleSheetUrl() {
  static const std::string url = "/assets/folio." + Sha256Hex(StyleSheet()).substr(0, 12) + ".css";
  return url;
}

void AppendLink(std::string_view url, std::string_view text, std::string* out) {
  *out += "<a href=\"";
  AppendHtmlEscaped(PercentEncodePath(url), out);
  *out += "\">";
  AppendHtmlEscaped(text, out);
  *out += "</a>";
}

namespace {

// The parts of a note page, in page order.

void AppendBreadcrumbs(const NotePage& p, std::string* out) {
  if (p.breadcrumbs.empty()) return;
  // Folder / Folder / this note: separators only between crumbs.
  *out += "<nav class=\"breadcrumbs\" aria-label=\"Breadcrumbs\">";
  for (const auto& b : p.breadcrumbs) {
    AppendLink(b.url, b.title, out);
    *out += " <span>/</span> ";
  }
  *out += "<span aria-current=\"page\">";
  AppendHtmlEscaped(p.title, out);
  *out += "</span></nav>";
}

// A note that opens with its own H1 keeps it (the meta line goes under
// it); otherwise the title is shown. Returns the body after the H1.
std::string_view AppendTitle(const NotePage& p, std::string* out) {
  std::string_view body = p.body_html;
  if (body.compare(0, 3, "<h1") == 0) {
    size_t end = body.find("</h1>");
    end = end == std::string_view::npos ? 0 : end + 5;
    *out += body.substr(0, end);
    body.remove_prefix(end);
  } else {
    *out += "<h1 class=\"page-header\">";  // Publish's title (themes restyle or hide it)
    AppendHtmlEscaped(p.title, out);
    *out += "</h1>";
  }
  return body;
}

// Created and updated dates, then tags.
void AppendMetaLine(const NotePage& p, std::string* out) {
  if (p.created.empty() && p.updated.empty() && p.tags.empty() && p.words == 0) return;
  *out += "<p class=\"meta\">";
  for (const auto& [label, date] : {std::pair{"Created ", &p.created}, std::pair{"Updated ", &p.updated}}) {
    if (date->empty()) continue;
    *out += label;
    AppendTimeElement(*date, p.lang, out);  // dates.h: as a reader reads them (issue 28)
    *out += ' ';
  }
  if (p.words > 0) {  // 200 words a minute, at least one
    size_t minutes = std::max<size_t>(1, (p.words + 199) / 200);
    *out += "<span class=\"reading\">" + std::to_string(p.words) + (p.words == 1 ? " word" : " words") + " · " +
            std::to_string(minutes) + " min read</span> ";
  }
  for (const auto& t : p.tags) {
    *out += "<a class=\"tag\" href=\"";
    AppendHtmlEscaped(PercentEncodePath(TagUrl(t)), out);
    *out += "\">#";
    AppendHtmlEscaped(t, out);
    *out += "</a> ";
  }
  *out += "</p>";
}

// The local graph's place: hidden until the site script draws it.
void AppendLocalGraph(const NotePage& p, std::string* out) {
  *out += "<section class=\"local-graph\" data-graph=\"";
  *out += markdown::kGraphDataUrl;
  *out += "\" data-url=\"";
  AppendHtmlEscaped(PercentEncodePath(p.url), out);
  *out += "\" hidden><h2>Graph</h2></section>\n";
}

// The outline (table of contents): the right column's first part, sticky
// there on wide screens, a panel behind the header's button below that; the
// site script marks the heading being read (a.is-active).
void AppendOutline(const NotePage& p, std::string* out) {
  if (p.toc.size() < 2) return;
  *out += "<nav class=\"outline outline-view-outer\" id=\"outline\" aria-labelledby=\"outline-title\">"
          "<h2 class=\"outline-title\" id=\"outline-title\">On this page</h2><ul class=\"outline-view\">";
  for (const auto& e : p.toc) {  // flat, one level per class; Publish's tree classes on each entry
    *out += "<li class=\"toc-h" + std::to_string(e.level) + " tree-item\"><a class=\"tree-item-self\" href=\"#";
    AppendHtmlEscaped(PercentEncodePath(e.id), out);
    *out += "\"><span class=\"tree-item-inner\">";
    AppendHtmlEscaped(e.text, out);
    *out += "</span></a></li>";
  }
  *out += "</ul></nav>\n";
}

void AppendBacklinks(const NotePage& p, std::string* out) {
  if (p.backlinks.empty()) return;
  *out += "<section class=\"backlinks\"><h2>Backlinks</h2>";
  AppendList(p.backlinks, "", out);
  if (p.backlinks_total > p.backlinks.size()) {
    *out += "<p class=\"meta\">and " + std::to_string(p.backlinks_total - p.backlinks.size()) + " more</p>";
  }
  *out += "</section>\n";
}

void AppendRelated(const NotePage& p, std::string* out) {
  if (p.related.empty()) return;
  *out += "<nav class=\"related\" aria-label=\"Related notes\"><h2>Related notes</h2>";
  AppendList(p.related, "", out);
  *out += "</nav>\n";
}

// One classic script with its integrity, deferred (3 MB must not block
// the page), then the inline start (csp.h allows both, nothing else).
void AppendMermaidScripts(const NotePage& p, std::string* out) {
  if (!p.has_mermaid || p.site.mermaid_url.empty()) return;
  *out += "<script src=\"";
  AppendHtmlEscaped(p.site.mermaid_url, out);
  *out += "\"";
  if (!p.site.mermaid_integrity.empty()) {
    *out += " integrity=\"";
    AppendHtmlEscaped(p.site.mermaid_integrity, out);
    *out += "\" crossorigin=\"anonymous\"";
  }
  *out += " defer></script><script>";
  *out += internal::kMermaidInit;
  *out += "</script>";
}

}  // namespace

std::string AssembleNotePage(const NotePage& p) {
  std::string out;
  out.reserve(p.body_html.size() + 4096);
  Head h{p.title, p.description, p.url, p.image, p.lang, "article", &p.cssclasses, "", "", false};
  h.branch = &p.breadcrumbs;
  h.current_url = p.url;
  h.current_title = p.title;
  h.has_outline = p.toc.size() >= 2;
  h.has_graph = true;  // the local graph's section (drawn by the site script)
  AppendHead(p.site, h, &out);
  AppendBreadcrumbs(p, &out);
  out += "<article>";
  std::string_view body = AppendTitle(p, &out);
  AppendMetaLine(p, &out);
  out += body;
  out += "</article>";
  AppendMermaidScripts(p, &out);
  std::string aside;
  AppendOutline(p, &aside);
  AppendBacklinks(p, &aside);
  AppendLocalGraph(p, &aside);
  AppendRelated(p, &aside);
  AppendTail(&out, aside);
  return out;
}

namespace {

// A folder page's breadcrumbs: its parents from the root, then itself.
void AppendListingCrumbs(const ListingPage& p, bool folder, std::string* out) {
  if (!folder) return;
  *out += "<nav class=\"breadcrumbs\" aria-label=\"Breadcrumbs\">";
  for (const auto& b : p.breadcrumbs) {
    AppendLink(b.url, b.title, out);
    *out += " <span>/</span> ";
  }
  *out += "<span aria-current=\"page\">";
  AppendHtmlEscaped(p.title, out);
  *out += "</span></nav>";
}

}  // namespace

std::string AssembleListingPage(const ListingPage& p) {
  std::string out;
  out.reserve(p.items.size() * 96 + 2048);
  Head h{p.title, p.intro, p.url, "", "", "website", nullptr, "", "", false};
  // A folder page (/docs/): the explorer opens its branch and marks it.
  const bool folder = p.url.size() > 1 && p.url.back() == '/' && !StartsWith(p.url, markdown::kGeneratedPrefix);
  h.branch = &p.breadcrumbs;
  if (folder) {
    h.current_url = p.url;
    h.current_title = p.title;
    h.current_is_folder = true;
  }
  AppendHead(p.site, h, &out);
  AppendListingCrumbs(p, folder, &out);
  out += "<article><h1>";
  AppendHtmlEscaped(p.title, &out);
  out += "</h1>";
  if (!p.intro.empty()) {
    out += "<p class=\"meta\">";
    AppendHtmlEscaped(p.intro, &out);
    out += "</p>";
  }
  if (!p.sections.empty()) AppendList(p.sections, "listing sections", &out);
  AppendList(p.items, "listing", &out);
  if (p.total > p.items.size() && p.pages <= 1) {
    out += "<p class=\"meta\">and " + std::to_string(p.total - p.items.size()) + " more</p>";
  }
  if (p.pages > 1) {
    out += "<nav class=\"pagination\">";
    if (p.page > 1) {
      out += "<a rel=\"prev\" href=\"" + HtmlEscape(PercentEncodePath(p.url)) +
             (p.page == 2 ? "" : "?page=" + std::to_string(p.page - 1)) + "\">← Newer</a> ";
    }
    out += "<span>Page " + std::to_string(p.page) + " of " + std::to_string(p.pages) + "</span>";
    if (p.page < p.pages) {
      out += " <a rel=\"next\" href=\"" + HtmlEscape(PercentEncodePath(p.url)) + "?page=" +
             std::to_string(p.page + 1) + "\">Older →</a>";
    }
    out += "</nav>";
  }
  out += "</article>";
  AppendTail(&out);
  return out;
}

std::string AssembleHomePage(std::string_view site_name, const std::vector<LinkItem>& items, size_t total) {
  ListingPage p;
  p.site.name = std::string(site_name);
  p.url = "/";
  p.title = std::string(site_name);
  p.intro = std::to_string(total) + (total == 1 ? " note" : " notes");
  p.items = items;
  p.total = total;
  return AssembleListingPage(p);
}

namespace {

// A page that says why nothing is here (404, 410): a title, one sentence,
// links home and to recent notes.
std::string NoticePage(const SiteInfo& site, std::string_view title, std::string_view sentence, bool noindex) {
  std::string out;
  AppendHead(site, Head{title, "", "", "", "", "website", nullptr, "", "", noindex}, &out);
  out += "<article><h1>";
  out += title;
  out += "</h1><p>";
  out += sentence;
  out += "</p><p><a href=\"/\">Go to the home page</a> · <a href=\"";
  out += markdown::kRecentUrl;
  out += "\">Recent notes</a></p></article>";
  AppendTail(&out);
  return out;
}

SiteInfo NamedSite(std::string_view site_name) {
  SiteInfo site;
  site.name = std::string(site_name);
  return site;
}

}  // namespace

std::string Assemble404Page(const SiteInfo& site) {
  return NoticePage(site, "Page not found", "There is no page at this address. It may have been renamed or removed.",
                    false);
}

std::string AssembleGonePage(const SiteInfo& site) {
  return NoticePage(site, "Page removed", "The note that was published here has been removed.", true);
}

std::string Assemble404Page(std::string_view site_name) { return Assemble404Page(NamedSite(site_name)); }
std::string AssembleGonePage(std::string_view site_name) { return AssembleGonePage(NamedSite(site_name)); }

std::string AssembleRedirectPage(std::string_view target_url) {
  std::string href = HtmlEscape(PercentEncodePath(target_url));
  return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Moved</title>"
         "<link rel=\"canonical\" href=\"" + href + "\"></head><body><p>This page moved to <a href=\"" + href +
         "\">" + HtmlEscape(target_url) + "</a>.</p></body></html>\n";
}

std::string AssembleGraphPage(const SiteInfo& site) {
  std::string out;
  AppendHead(site, Head{"Graph", "Every note and the links between them", markdown::kGraphUrl, "", "", "website",
                        nullptr, "", "", false},
             &out);
  out += "<article class=\"graph-page\"><h1>Graph</h1><div class=\"global-graph\" data-graph=\"";
  out += markdown::kGraphDataUrl;
  out += "\"></div><noscript><p>The graph is drawn by the site's script, which is off. Browse the <a href=\"";
  out += markdown::kTagsUrl;
  out += "\">tags</a> or the <a href=\"/\">home page</a> instead.</p></noscript></article>";
  AppendTail(&out);
  return out;
}

std::string LayoutFingerprint(std::string_view site_name, std::string_view render_settings) {
  return Sha256Hex("layout " + std::to_string(kLayoutVersion) + "\n" + StyleSheet() + "\n" + SiteScript() + "\n" +
                   Assemble404Page(site_name) + (render_settings.empty() ? "" : "\n" + std::string(render_settings)));
}

}  // namespace folio::site
