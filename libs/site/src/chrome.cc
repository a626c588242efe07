// The chrome every HTML page shares (layout_internal.h): <head>, the
// header with its search box, the explorer, the footer, in the page's
// language (i18n.h).
#include <string>

#include "folio/core/text.h"
#include "folio/site/analytics.h"
#include "folio/markdown/slug.h"
#include "folio/site/i18n.h"
#include "folio/site/urls.h"
#include "layout_internal.h"

namespace folio::site {
namespace {
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
void AppendSearchBox(const internal::Head& h, const Strings& t, std::string* out) {
  *out += "<form class=\"search-box\" role=\"search\" action=\"/_/search\" method=\"get\">"
          "<label class=\"search-bar\"><span class=\"visually-hidden\">";
  AppendHtmlEscaped(t.search_placeholder, out);
  *out += "</span><input type=\"search\" name=\"q\" placeholder=\"";
  AppendHtmlEscaped(t.search_placeholder, out);
  *out += "\" autocomplete=\"off\" enterkeyhint=\"search\" value=\"";
  AppendHtmlEscaped(h.search_query, out);
  *out += "\"></label>";
  if (!h.search_mode.empty() && h.search_mode != "hybrid") {
    *out += "<input type=\"hidden\" name=\"mode\" value=\"";
    AppendHtmlEscaped(h.search_mode, out);
    *out += "\">";
  }
  *out += "<button type=\"submit\">";
  AppendHtmlEscaped(t.search_button, out);
  *out += "</button></form>";
}

// Recent, Tags, Graph: the header's and the footer's links.
void AppendNavLinks(const Strings& t, std::string_view separator, std::string* out) {
  *out += "<a href=\"/_/recent\">";
  AppendHtmlEscaped(t.nav_recent, out);
  *out += "</a>";
  *out += separator;
  *out += "<a href=\"/_/tags\">";
  AppendHtmlEscaped(t.nav_tags, out);
  *out += "</a>";
  *out += separator;
  *out += "<a href=\"/_/graph\">";
  AppendHtmlEscaped(t.nav_graph, out);
  *out += "</a>";
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
void AppendExplorer(const internal::Head& h, const Strings& t, std::string* out) {
  const std::string name = HtmlEscape(t.explorer);
  *out += "<nav class=\"site-body-left-column explorer\" id=\"explorer\" aria-label=\"" + name +
          "\"><div class=\"site-body-left-column-inner\"><div class=\"nav-view-outer\">"
          "<details class=\"explorer-box\" open><summary>" + name +
          "</summary><ul class=\"tree nav-view\" data-tree=\"";
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

// A private site's sign-out button (issue 29): a plain POST form, so it
// works without the script; the edge answers it (services/edge).
void AppendSignOut(const Strings& t, std::string* out) {
  *out += "<form class=\"site-signout\" method=\"post\" action=\"/_/signout\"><button type=\"submit\">";
  AppendHtmlEscaped(t.sign_out, out);
  *out += "</button></form>";
}

}  // namespace

namespace internal {

void AppendHead(const SiteInfo& site, const Head& h, std::string* out) {
  const std::string_view lang = PageLang(h.lang, site.lang);
  const Strings& t = StringsFor(lang);
  *out += "<!doctype html>\n<html lang=\"";
  AppendHtmlEscaped(lang, out);
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
  AppendAnalyticsTags(site.analytics, out);
  if (h.analytics_marker) AppendAnalyticsMarker(site.analytics, out);
  *out += "<link rel=\"icon\" href=\"data:,\">";  // no /favicon.ico request
  if (!site.private_site) {  // a private site publishes no feed
    *out += "<link rel=\"alternate\" type=\"application/rss+xml\" title=\"";
    AppendHtmlEscaped(site.name, out);
    *out += "\" href=\"/rss.xml\"><link rel=\"alternate\" type=\"application/feed+json\" title=\"";
    AppendHtmlEscaped(site.name, out);
    *out += "\" href=\"/feed.json\">";
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
  const std::string explorer = HtmlEscape(t.explorer), outline = HtmlEscape(t.outline_button);
  *out += " is-readable-line-width\"><header class=\"site-header\">"
          "<button class=\"site-explorer-toggle\" type=\"button\" aria-controls=\"explorer\" aria-expanded=\"false\" "
          "aria-label=\"" + explorer + "\" title=\"" + explorer +
          "\"><span class=\"toggle-icon\" aria-hidden=\"true\"></span></button>"
          "<a class=\"site-name site-body-left-column-site-name\" href=\"/\">";
  AppendHtmlEscaped(site.name, out);
  *out += "</a><nav class=\"site-nav\">";
  AppendNavLinks(t, " ", out);
  *out += "</nav>";
  AppendSearchBox(h, t, out);
  if (site.private_site) AppendSignOut(t, out);
  *out += "<button class=\"site-outline-toggle\" type=\"button\" aria-controls=\"outline\" aria-expanded=\"false\" "
          "aria-label=\"" + outline + "\" title=\"" + outline + "\"";
  if (!h.has_outline) *out += " hidden";
  *out += "><span class=\"toggle-icon\" aria-hidden=\"true\"></span></button></header>\n<div class=\"site-body\">";
  AppendExplorer(h, t, out);
  *out += "<main class=\"site-body-center-column\" data-folio-swap=\"main\"><div class=\"publish-renderer\">"
          "<div class=\"markdown-preview-view markdown-rendered";
  AppendClasses(h.body_classes, out);  // Obsidian puts cssclasses here too
  *out += "\"><div class=\"markdown-preview-sizer markdown-preview-section\">";
}

void AppendTail(const SiteInfo& site, const Strings& t, std::string* out, std::string_view aside_html) {
  *out += "</div></div></div></main>\n<aside class=\"site-body-right-column\" data-folio-swap=\"aside\">";
  *out += aside_html;
  *out += "</aside></div></div>\n<footer class=\"site-footer\">";
  AppendHtmlEscaped(t.footer_published, out);
  *out += site.private_site ? " · " : " · <a href=\"/rss.xml\">RSS</a> · ";  // a private site has no feed
  AppendNavLinks(t, " · ", out);
  *out += "</footer></body></html>\n";
}

}  // namespace internal

}  // namespace folio::site
