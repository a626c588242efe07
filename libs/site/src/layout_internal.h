// The page chrome shared by layout.cc and search_page.cc: <head>, the site
// header (with the search box), the three columns (explorer | main | aside)
// and the footer, as docs/themes.md describes them. Internal to libs/site.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "folio/site/i18n.h"
#include "folio/site/layout.h"

namespace folio::site::internal {

struct Head {
  std::string_view title;
  std::string_view description;
  std::string_view url;
  std::string_view image;
  std::string_view lang;  // the note's frontmatter lang ("" = the site's): PageLang(lang, site.lang)
  std::string_view og_type = "website";
  const std::vector<std::string>* body_classes = nullptr;
  std::string_view search_query;  // prefills the header's search box
  std::string_view search_mode;   // kept as a hidden field unless "" or "hybrid"
  bool noindex = false;           // <meta name="robots" content="noindex">
  // The explorer's server-rendered part: the open branch (folders from the
  // root down, each open) and the current item under it ("" = none marked).
  const std::vector<LinkItem>* branch = nullptr;
  std::string_view current_url = {};
  std::string_view current_title = {};
  bool current_is_folder = false;  // a folder page: the current item is a folder
  bool has_outline = false;        // the page has an outline: the header shows its button
  bool has_graph = false;          // the page has a local graph (.published-container.has-graph)
  bool analytics_marker = false;   // the 404 page: AppendAnalyticsMarker, for the edge's search page
};

// Around a note page's body (AssembleNotePage): the feeds take the body
// from the stored page between them (NotePageParts, feeds.h). The body
// cannot hold the end marker's "<!--" unless a sanitised comment passes,
// so the last end marker is the one.
inline constexpr std::string_view kBodyStart = "<!--folio:body-->";
inline constexpr std::string_view kBodyEnd = "<!--/folio:body-->";

// The inline script that starts mermaid on a page with a diagram, after the
// deferred mermaid script ran. Kept byte-stable: NotePageCsp() allows it by
// its hash.
inline constexpr std::string_view kMermaidInit =
    "addEventListener(\"DOMContentLoaded\",()=>{if(window.mermaid)mermaid.initialize({startOnLoad:true,"
    "theme:(document.documentElement.dataset.theme||(matchMedia(\"(prefers-color-scheme: dark)\").matches?"
    "\"dark\":\"light\"))===\"dark\"?\"dark\":\"default\"})});";

// The inline script that is the first child of every page's <body>: before
// the first paint it sets body.theme-light or body.theme-dark from the
// reader's saved choice (the site script's toggle saves it; also mirrored as
// <html data-theme>) or else the system's, and marks <html class="js"> (the
// stylesheet turns the explorer and outline into panels only then). Kept
// byte-stable: every policy allows it by hash.
inline constexpr std::string_view kThemeInit =
    "(function(){var t,d=document.documentElement;try{t=localStorage.getItem(\"folio-theme\")}catch(e){}"
    "if(t===\"light\"||t===\"dark\")d.dataset.theme=t;"
    "else t=matchMedia(\"(prefers-color-scheme: dark)\").matches?\"dark\":\"light\";"
    "document.body.classList.add(\"theme-\"+t);d.classList.add(\"js\")})();";

// script-src of every HTML page: the site script (same origin) and the
// theme snippet by its hash.
const std::string& BaseScriptSources();

// "<!doctype html>..." through the header, the explorer (left column) and
// the opening of the centre column: "<main class=\"site-body-center-column\"
// data-folio-swap=\"main\"><div class=\"publish-renderer\"><div class=\"markdown-preview-view
// markdown-rendered [cssclasses]\"><div class=\"markdown-preview-sizer markdown-preview-section\">",
// all inside <div class=\"published-container ...\"> (header and columns, not the footer).
// <html lang> is PageLang(h.lang, site.lang); the words are its StringsFor.
void AppendHead(const SiteInfo& site, const Head& h, std::string* out);
// Closes the centre column, writes the right column (aside_html inside
// <aside class="site-body-right-column" data-folio-swap="aside">, possibly
// empty) and the footer (in t's language), to the end of the document.
void AppendTail(const SiteInfo& site, const Strings& t, std::string* out, std::string_view aside_html = {});

}  // namespace folio::site::internal
