// The page chrome shared by layout.cc and search_page.cc: <head>, the site
// header (with the search box) and the footer. Internal to libs/site.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "folio/site/layout.h"

namespace folio::site::internal {

struct Head {
  std::string_view title;
  std::string_view description;
  std::string_view url;
  std::string_view image;
  std::string_view lang;
  std::string_view og_type = "website";
  const std::vector<std::string>* body_classes = nullptr;
  std::string_view search_query;  // prefills the header's search box
  std::string_view search_mode;   // kept as a hidden field unless "" or "hybrid"
  bool noindex = false;           // <meta name="robots" content="noindex">
};

// The inline script that starts mermaid on a page with a diagram, after the
// deferred mermaid script ran. Kept byte-stable: NotePageCsp() allows it by
// its hash.
inline constexpr std::string_view kMermaidInit =
    "addEventListener(\"DOMContentLoaded\",()=>{if(window.mermaid)mermaid.initialize({startOnLoad:true,"
    "theme:(document.documentElement.dataset.theme||(matchMedia(\"(prefers-color-scheme: dark)\").matches?"
    "\"dark\":\"light\"))===\"dark\"?\"dark\":\"default\"})});";

// The inline script in every page's <head> that applies the reader's saved
// theme before the first paint (the site script's toggle saves it; no saved
// choice = the system's). Kept byte-stable: every policy allows it by hash.
inline constexpr std::string_view kThemeInit =
    "try{var t=localStorage.getItem(\"folio-theme\");if(t===\"light\"||t===\"dark\")"
    "document.documentElement.dataset.theme=t}catch(e){}";

// script-src of every HTML page: the site script (same origin) and the
// theme snippet by its hash.
const std::string& BaseScriptSources();

// "<!doctype html>..." up to and including "<main>".
void AppendHead(const SiteInfo& site, const Head& h, std::string* out);
// "</main>" to the end of the document.
void AppendTail(std::string* out);

}  // namespace folio::site::internal
