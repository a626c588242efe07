#include "folio/site/layout.h"

#include <algorithm>

#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/markdown/slug.h"
#include "folio/site/dates.h"
#include "folio/site/i18n.h"
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

using internal::AppendHead;
using internal::AppendTail;
using internal::Head;
using internal::kBodyEnd;
using internal::kBodyStart;

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

// Folder / Folder / this page: separators only between crumbs.
void AppendCrumbs(const std::vector<LinkItem>& crumbs, std::string_view title, const Strings& t, std::string* out) {
  *out += "<nav class=\"breadcrumbs\" aria-label=\"";
  AppendHtmlEscaped(t.breadcrumbs, out);
  *out += "\">";
  for (const auto& b : crumbs) {
    AppendLink(b.url, b.title, out);
    *out += " <span>/</span> ";
  }
  *out += "<span aria-current=\"page\">";
  AppendHtmlEscaped(title, out);
  *out += "</span></nav>";
}

void AppendBreadcrumbs(const NotePage& p, const Strings& t, std::string* out) {
  if (!p.breadcrumbs.empty()) AppendCrumbs(p.breadcrumbs, p.title, t, out);
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
void AppendMetaLine(const NotePage& p, std::string_view lang, const Strings& t, std::string* out) {
  if (p.created.empty() && p.updated.empty() && p.tags.empty() && p.words == 0) return;
  *out += "<p class=\"meta\">";
  for (const auto& [label, date] : {std::pair{t.created, &p.created}, std::pair{t.updated, &p.updated}}) {
    if (date->empty()) continue;
    AppendHtmlEscaped(label, out);
    *out += ' ';
    AppendTimeElement(*date, lang, out);  // dates.h: as a reader reads them (issue 28)
    *out += ' ';
  }
  if (p.words > 0) {  // 200 words a minute, at least one
    size_t minutes = std::max<size_t>(1, (p.words + 199) / 200);
    *out += "<span class=\"reading\">";
    AppendHtmlEscaped(Plural(t, t.words, p.words) + " · " + Plural(t, t.reading, minutes), out);
    *out += "</span> ";
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
void AppendLocalGraph(const NotePage& p, const Strings& t, std::string* out) {
  *out += "<section class=\"local-graph\" data-graph=\"";
  *out += markdown::kGraphDataUrl;
  *out += "\" data-url=\"";
  AppendHtmlEscaped(PercentEncodePath(p.url), out);
  *out += "\" hidden><h2>";
  AppendHtmlEscaped(t.nav_graph, out);
  *out += "</h2></section>\n";
}

// The outline (table of contents): the right column's first part, sticky
// there on wide screens, a panel behind the header's button below that; the
// site script marks the heading being read (a.is-active).
void AppendOutline(const NotePage& p, const Strings& t, std::string* out) {
  if (p.toc.size() < 2) return;
  *out += "<nav class=\"outline outline-view-outer\" id=\"outline\" aria-labelledby=\"outline-title\">"
          "<h2 class=\"outline-title\" id=\"outline-title\">";
  AppendHtmlEscaped(t.outline_title, out);
  *out += "</h2><ul class=\"outline-view\">";
  for (const auto& e : p.toc) {  // flat, one level per class; Publish's tree classes on each entry
    *out += "<li class=\"toc-h" + std::to_string(e.level) + " tree-item\"><a class=\"tree-item-self\" href=\"#";
    AppendHtmlEscaped(PercentEncodePath(e.id), out);
    *out += "\"><span class=\"tree-item-inner\">";
    AppendHtmlEscaped(e.text, out);
    *out += "</span></a></li>";
  }
  *out += "</ul></nav>\n";
}

// "and N more" under a bounded list.
void AppendMore(const Strings& t, size_t more, std::string* out) {
  *out += "<p class=\"meta\">";
  AppendHtmlEscaped(Plural(t, t.and_more, more), out);
  *out += "</p>";
}

void AppendBacklinks(const NotePage& p, const Strings& t, std::string* out) {
  if (p.backlinks.empty()) return;
  *out += "<section class=\"backlinks\"><h2>";
  AppendHtmlEscaped(t.backlinks, out);
  *out += "</h2>";
  AppendList(p.backlinks, "", out);
  if (p.backlinks_total > p.backlinks.size()) AppendMore(t, p.backlinks_total - p.backlinks.size(), out);
  *out += "</section>\n";
}

void AppendRelated(const NotePage& p, const Strings& t, std::string* out) {
  if (p.related.empty()) return;
  const std::string related = HtmlEscape(t.related);
  *out += "<nav class=\"related\" aria-label=\"" + related + "\"><h2>" + related + "</h2>";
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
  const std::string_view lang = PageLang(p.lang, p.site.lang);
  const Strings& t = StringsFor(lang);
  AppendHead(p.site, h, &out);
  AppendBreadcrumbs(p, t, &out);
  out += "<article>";
  std::string_view body = AppendTitle(p, &out);
  AppendMetaLine(p, lang, t, &out);
  out += kBodyStart;
  out += body;
  out += kBodyEnd;
  out += "</article>";
  AppendMermaidScripts(p, &out);
  std::string aside;
  AppendOutline(p, t, &aside);
  AppendBacklinks(p, t, &aside);
  AppendLocalGraph(p, t, &aside);
  AppendRelated(p, t, &aside);
  AppendTail(p.site, t, &out, aside);
  return out;
}


namespace {

// ← Newer · Page 2 of 5 · Older →
void AppendPagination(const ListingPage& p, const Strings& t, std::string* out) {
  const std::string url = HtmlEscape(PercentEncodePath(p.url));
  *out += "<nav class=\"pagination\">";
  if (p.page > 1) {
    *out += "<a rel=\"prev\" href=\"" + url + (p.page == 2 ? "" : "?page=" + std::to_string(p.page - 1)) + "\">" +
            HtmlEscape(t.newer) + "</a> ";
  }
  *out += "<span>" + HtmlEscape(Fill(t.page_of, {{"p", std::to_string(p.page)}, {"n", std::to_string(p.pages)}})) +
          "</span>";
  if (p.page < p.pages) {
    *out += " <a rel=\"next\" href=\"" + url + "?page=" + std::to_string(p.page + 1) + "\">" + HtmlEscape(t.older) +
            "</a>";
  }
  *out += "</nav>";
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
  const Strings& t = StringsFor(PageLang("", p.site.lang));
  AppendHead(p.site, h, &out);
  if (folder) AppendCrumbs(p.breadcrumbs, p.title, t, &out);  // its parents from the root, then itself
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
  if (p.total > p.items.size() && p.pages <= 1) AppendMore(t, p.total - p.items.size(), &out);
  if (p.pages > 1) AppendPagination(p, t, &out);
  out += "</article>";
  AppendTail(p.site, t, &out);
  return out;
}

std::string AssembleHomePage(std::string_view site_name, const std::vector<LinkItem>& items, size_t total) {
  ListingPage p;
  p.site.name = std::string(site_name);
  p.url = "/";
  p.title = std::string(site_name);
  p.intro = Plural(StringsFor("en"), StringsFor("en").notes, total);
  p.items = items;
  p.total = total;
  return AssembleListingPage(p);
}

namespace {

// A page that says why nothing is here (404, 410): a title, one sentence,
// links home and to recent notes.
std::string NoticePage(const SiteInfo& site, bool gone) {
  const Strings& t = StringsFor(PageLang("", site.lang));
  const std::string_view title = gone ? t.gone_title : t.not_found_title;
  std::string out;
  Head h{title, "", "", "", "", "website", nullptr, "", "", gone};
  // The 404 page also carries the analytics marker: the edge reads the site's
  // analytics back from it for the search page it assembles (analytics.h).
  h.analytics_marker = !gone;
  AppendHead(site, h, &out);
  out += "<article><h1>";
  AppendHtmlEscaped(title, &out);
  out += "</h1><p>";
  AppendHtmlEscaped(gone ? t.gone_text : t.not_found_text, &out);
  out += "</p><p><a href=\"/\">";
  AppendHtmlEscaped(t.go_home, &out);
  out += "</a> · <a href=\"";
  out += markdown::kRecentUrl;
  out += "\">";
  AppendHtmlEscaped(t.recent_title, &out);
  out += "</a></p></article>";
  AppendTail(site, t, &out);
  return out;
}

SiteInfo NamedSite(std::string_view site_name) {
  SiteInfo site;
  site.name = std::string(site_name);
  return site;
}

}  // namespace

std::string Assemble404Page(const SiteInfo& site) {
  return NoticePage(site, false);
}

std::string AssembleGonePage(const SiteInfo& site) {
  return NoticePage(site, true);
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
  const Strings& t = StringsFor(PageLang("", site.lang));
  std::string out;
  AppendHead(site, Head{t.nav_graph, t.graph_description, markdown::kGraphUrl, "", "", "website", nullptr, "", "", false},
             &out);
  out += "<article class=\"graph-page\"><h1>";
  AppendHtmlEscaped(t.nav_graph, &out);
  out += "</h1><div class=\"global-graph\" data-graph=\"";
  out += markdown::kGraphDataUrl;
  out += "\"></div><noscript><p>";
  const std::string tags = "<a href=\"" + std::string(markdown::kTagsUrl) + "\">" + HtmlEscape(t.tags_link) + "</a>";
  const std::string home = "<a href=\"/\">" + HtmlEscape(t.home_link) + "</a>";
  out += Fill(HtmlEscape(t.graph_noscript), {{"tags", tags}, {"home", home}});
  out += "</p></noscript></article>";
  AppendTail(site, t, &out);
  return out;
}

std::string LayoutFingerprint(const SiteInfo& site, std::string_view render_settings) {
  return Sha256Hex("layout " + std::to_string(kLayoutVersion) + "\n" + StyleSheet() + "\n" + SiteScript() + "\n" +
                   Assemble404Page(site) + (render_settings.empty() ? "" : "\n" + std::string(render_settings)));
}

std::string LayoutFingerprint(std::string_view site_name, std::string_view render_settings) {
  return LayoutFingerprint(NamedSite(site_name), render_settings);
}

}  // namespace folio::site
