// The reader-facing search page (GET /_/search on the edge): the site chrome
// with the search box prefilled, the results (title link + snippet), the
// "no results" and error states, and a small inline script that, as the
// reader types, fetches the results fragment and swaps it in place. Without
// script the page is a plain form submission and works the same.
//
// Unlike other pages these are assembled per request (by the edge), never
// published. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/site/layout.h"

namespace folio::site {

struct SearchResultItem {
  std::string title;         // plain text; escaped when written
  std::string url;           // decoded URL path; percent-encoded when written
  std::string snippet_html;  // from search: escaped text with <mark>..</mark>; written as is
                             // (any other markup in it is escaped, as a safety net)
  double score = 0;
  std::string path;          // vault path ("Features/Graph/Local graph.md"); the JSON answer's breadcrumb
};

struct SearchPage {
  SiteInfo site;              // its lang picks the page's words (i18n.h)
  std::string query;         // as the reader typed it (valid UTF-8); "" = no search yet
  std::string mode;          // "hybrid" (or ""), "vector", "text": kept by the form
  std::vector<SearchResultItem> results;
  std::string error;         // shown instead of results when non-empty ("Search is unavailable right now")
  int64_t took_us = 0;       // search time as the search service reported it
};

// The id of the element AssembleSearchResultsFragment returns; the page's
// script replaces the element with this id by a freshly fetched fragment.
inline constexpr std::string_view kSearchResultsId = "search-results";

// The complete page: <meta name="robots" content="noindex">, the header's
// search box prefilled with p.query, the results element, the inline script.
std::string AssembleSearchPage(const SearchPage& p);
// Only the results element (<section id="search-results" ...>...</section>),
// for GET /_/search?...&fragment=1.
std::string AssembleSearchResultsFragment(const SearchPage& p);

// The Content-Security-Policy the search page is written for: same-origin
// everything, and script only the page's own inline script (by its hash).
// The edge sends it with the page.
const std::string& SearchPageCsp();

// A hit's href: the URL path percent-encoded, a "#heading" fragment kept as
// a fragment (a section hit links to its heading); "/" for an empty url.
// Not HTML-escaped.
std::string SearchResultHref(std::string_view url);
// A snippet from search as it may be written into HTML: escaped text with
// <mark> and </mark> kept, any other '<' or '>' escaped, so a buggy or
// hostile search reply cannot inject markup.
std::string SafeSnippetHtml(std::string_view snippet_html);

// The site name a page assembled by this lib shows in its header, unescaped;
// "" if `html` has no such header (a page of another layout). Lets the edge
// give its search page the same name as the site's published pages.
std::string SiteNameFromPage(std::string_view html);
// The <html lang> of a page this lib assembled (a language tag, i18n.h); ""
// if it has none. The edge gives its search page the language of the
// site's 404 page, which is the site's (SiteInfo::lang).
std::string LangFromPage(std::string_view html);

}  // namespace folio::site
