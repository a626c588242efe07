#include "folio/site/search_page.h"

#include <cstdio>

#include "folio/core/text.h"
#include "folio/markdown/slug.h"
#include "folio/site/csp.h"
#include "folio/site/i18n.h"
#include "layout_internal.h"

namespace folio::site {
namespace {

// Live results: as the reader types (debounced), fetch the fragment of the
// same query and swap the results' children in place (the element stays, so
// its aria-live announcements work); the address follows with replaceState.
// Stale answers are dropped (seq) and superseded fetches aborted. Submitting
// does the same without a reload. Kept byte-stable: SearchPageCsp() hashes it.
constexpr std::string_view kScript =
    "(()=>{const f=document.querySelector('form[role=search]'),i=f&&f.querySelector('input[name=q]');"
    "if(!i)return;let t=0,seq=0,ctl=null;"
    "const run=()=>{const p=new URLSearchParams(new FormData(f));"
    "history.replaceState(null,'','/_/search?'+p);p.set('fragment','1');const n=++seq;"
    "if(ctl)ctl.abort();ctl=new AbortController();"
    "fetch('/_/search?'+p,{signal:ctl.signal}).then(r=>r.text()).then(h=>{"
    "const old=document.getElementById('search-results');if(n!==seq||!old)return;"
    "const tpl=document.createElement('template');tpl.innerHTML=h;const e=tpl.content.firstElementChild;"
    "if(!e||e.id!=='search-results')return;old.replaceChildren(...e.childNodes);"
    "if(e.dataset.title){old.dataset.title=e.dataset.title;document.title=e.dataset.title;}"
    "}).catch(()=>{});};"
    "i.addEventListener('input',e=>{if(e.isComposing)return;clearTimeout(t);t=setTimeout(run,150);});"
    "f.addEventListener('submit',e=>{e.preventDefault();clearTimeout(t);run();});"
    "if(!i.value)i.focus();})();";

const Strings& PageStrings(const SearchPage& p) { return StringsFor(PageLang("", p.site.lang)); }

// "Search" or "Search: q", in the site's language.
std::string Heading(const SearchPage& p) {
  const Strings& t = PageStrings(p);
  return p.query.empty() ? std::string(t.search_title) : Fill(t.search_title_query, {{"q", p.query}});
}

std::string PageTitle(const SearchPage& p) {
  std::string t = Heading(p);
  if (!p.site.name.empty()) t += " · " + p.site.name;
  return t;
}

// `text` escaped, with {q} (and {n}) as <q>query</q>.
void AppendWithQuery(std::string_view text, const SearchPage& p, std::string* out) {
  *out += Fill(HtmlEscape(text), {{"q", "<q>" + HtmlEscape(p.query) + "</q>"}});
}

// Snippets come from search already escaped, with matches in <mark>. They
// are written as they are, except that any markup other than <mark> and
// </mark> is escaped (SafeSnippetHtml).
void AppendSnippet(std::string_view s, std::string* out) {
  while (!s.empty()) {
    if (StartsWith(s, "<mark>") || StartsWith(s, "</mark>")) {
      size_t n = s[1] == '/' ? 7 : 6;
      out->append(s.substr(0, n));
      s.remove_prefix(n);
      continue;
    }
    char c = s.front();
    if (c == '<') *out += "&lt;";
    else if (c == '>') *out += "&gt;";
    else out->push_back(c);
    s.remove_prefix(1);
  }
}

void AppendTook(int64_t took_us, std::string* out) {
  if (took_us <= 0) return;
  char buf[48];
  double ms = static_cast<double>(took_us) / 1000.0;
  snprintf(buf, sizeof buf, ms < 10 ? " (%.1f ms)" : " (%.0f ms)", ms);
  *out += buf;
}

void AppendResults(const SearchPage& p, std::string* out) {
  const Strings& t = PageStrings(p);
  *out += "<section id=\"";
  *out += kSearchResultsId;
  *out += "\" class=\"search-results\" aria-live=\"polite\" data-title=\"";
  AppendHtmlEscaped(PageTitle(p), out);
  *out += "\">";
  if (!p.error.empty()) {
    *out += "<p class=\"search-error\" role=\"alert\">";
    AppendHtmlEscaped(p.error, out);
    *out += "</p>";
  } else if (p.query.empty()) {
    *out += "<p class=\"meta\">";
    AppendHtmlEscaped(t.search_prompt, out);
    *out += "</p>";
  } else if (p.results.empty()) {
    *out += "<p class=\"search-empty\">";
    AppendWithQuery(t.search_none, p, out);
    *out += "</p>";
  } else {
    *out += "<p class=\"meta\">";
    AppendWithQuery(Plural(t, t.search_results, p.results.size()), p, out);
    AppendTook(p.took_us, out);
    *out += "</p><ol class=\"search-hits\">";
    for (const auto& r : p.results) {
      *out += "<li>";
      *out += "<a href=\"";
      AppendHtmlEscaped(SearchResultHref(r.url), out);
      *out += "\">";
      AppendHtmlEscaped(r.title.empty() ? r.url : r.title, out);
      *out += "</a>";
      if (!r.snippet_html.empty()) {
        *out += "<p class=\"snippet\">";
        AppendSnippet(r.snippet_html, out);
        *out += "</p>";
      }
      *out += "</li>";
    }
    *out += "</ol>";
  }
  *out += "</section>";
}

std::string HtmlUnescape(std::string_view s) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
  std::string out;
  while (!s.empty()) {
    bool matched = false;
    if (s.front() == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (StartsWith(s, entity)) {
          out += c;
          s.remove_prefix(entity.size());
          matched = true;
          break;
        }
      }
    }
    if (!matched) {
      out += s.front();
      s.remove_prefix(1);
    }
  }
  return out;
}

}  // namespace

std::string AssembleSearchResultsFragment(const SearchPage& p) {
  std::string out;
  out.reserve(512 + p.results.size() * 320);
  AppendResults(p, &out);
  return out;
}

std::string AssembleSearchPage(const SearchPage& p) {
  std::string out;
  out.reserve(4096 + p.results.size() * 320);
  const std::string title = Heading(p);
  internal::Head h;
  h.title = title;
  h.url = markdown::kSearchUrl;  // Head holds views: a constant, not a temporary
  h.search_query = p.query;
  h.search_mode = p.mode;
  h.noindex = true;
  internal::AppendHead(p.site, h, &out);
  out += "<article class=\"search-page\"><h1>";
  AppendHtmlEscaped(PageStrings(p).search_title, &out);
  out += "</h1>";
  AppendResults(p, &out);
  out += "</article>\n<script>";
  out += kScript;
  out += "</script>";
  internal::AppendTail(p.site, PageStrings(p), &out);
  return out;
}

std::string SearchPageCsp(const SiteInfo& site) {
  AnalyticsCsp a = AnalyticsCspOf(site.analytics);
  return "default-src 'none'; script-src " + internal::BaseScriptSources() + " " + ScriptHashSource(kScript) +
         a.script_src + "; style-src 'self'; img-src 'self' data:" + a.img_src + "; connect-src 'self'" +
         a.connect_src + "; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'";
}

const std::string& SearchPageCsp() {
  static const std::string csp = SearchPageCsp(SiteInfo{});
  return csp;
}

std::string SearchResultHref(std::string_view url) {
  if (url.empty()) return "/";
  size_t hash = url.find('#');
  std::string href = PercentEncodePath(url.substr(0, hash));
  if (hash != std::string_view::npos) {
    href += '#';
    href += PercentEncodePath(url.substr(hash + 1));
  }
  return href;
}

std::string SafeSnippetHtml(std::string_view snippet_html) {
  std::string out;
  out.reserve(snippet_html.size() + 16);
  AppendSnippet(snippet_html, &out);
  return out;
}

std::string SiteNameFromPage(std::string_view html) {
  // The header's link as layout.cc writes it, and as layouts before
  // version 8 wrote it (a record published by an older build).
  static constexpr std::string_view kOpens[] = {
      "<a class=\"site-name site-body-left-column-site-name\" href=\"/\">", "<a class=\"site-name\" href=\"/\">"};
  size_t at = std::string_view::npos;
  for (std::string_view open : kOpens) {
    if ((at = html.find(open)) != std::string_view::npos) {
      html.remove_prefix(at + open.size());
      break;
    }
  }
  if (at == std::string_view::npos) return "";
  size_t end = html.find("</a>");
  if (end == std::string_view::npos) return "";
  return HtmlUnescape(html.substr(0, end));
}

std::string LangFromPage(std::string_view html) {
  static constexpr std::string_view kOpen = "<!doctype html>\n<html lang=\"";
  if (!StartsWith(html, kOpen)) return "";
  html.remove_prefix(kOpen.size());
  std::string_view lang = html.substr(0, html.find('"'));
  return IsLanguageTag(lang) ? std::string(lang) : "";
}

}  // namespace folio::site
