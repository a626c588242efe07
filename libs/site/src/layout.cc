#include "folio/site/layout.h"

#include "folio/core/hash.h"
#include "folio/core/text.h"

namespace folio::site {
namespace {

// The stylesheet source lives in style.css next to this file; CMake embeds
// it as a raw string (see CMakeLists.txt) so the binary is self-contained.
const char kStyleCss[] =
#include "style.css.inc"
    ;

void AppendHead(std::string_view site_name, std::string_view title, std::string_view description,
                std::string* out) {
  *out += "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
          "<meta name=\"color-scheme\" content=\"light dark\"><title>";
  AppendHtmlEscaped(title, out);
  if (!site_name.empty() && title != site_name) {
    *out += " · ";
    AppendHtmlEscaped(site_name, out);
  }
  *out += "</title>";
  if (!description.empty()) {
    *out += "<meta name=\"description\" content=\"";
    AppendHtmlEscaped(description, out);
    *out += "\">";
  }
  *out += "<link rel=\"stylesheet\" href=\"" + StyleSheetUrl() + "\"></head>\n<body>";
  *out += "<header class=\"site-header\"><a class=\"site-name\" href=\"/\">";
  AppendHtmlEscaped(site_name, out);
  *out += "</a></header>\n<main>";
}

void AppendTail(std::string* out) {
  *out += "</main>\n<footer class=\"site-footer\">Published with folio</footer></body></html>\n";
}

}  // namespace

const std::string& StyleSheet() {
  static const std::string css(kStyleCss);
  return css;
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

std::string AssembleNotePage(const NotePage& p) {
  std::string out;
  out.reserve(p.body_html.size() + 2048);
  AppendHead(p.site_name, p.title, p.description, &out);
  out += "<article>";
  // A note that opens with its own H1 keeps it; otherwise show the title.
  bool has_h1 = p.body_html.compare(0, 3, "<h1") == 0;
  if (!has_h1) {
    out += "<h1>";
    AppendHtmlEscaped(p.title, &out);
    out += "</h1>";
  }
  if (!p.updated.empty()) {
    out += "<p class=\"meta\">Updated <time>";
    AppendHtmlEscaped(p.updated, &out);
    out += "</time></p>";
  }
  out += p.body_html;
  out += "</article>\n";
  if (!p.backlinks.empty()) {
    out += "<aside class=\"backlinks\"><h2>Backlinks</h2><ul>";
    for (const auto& b : p.backlinks) {
      out += "<li>";
      AppendLink(b.url, b.title, &out);
      out += "</li>";
    }
    out += "</ul>";
    if (p.backlinks_total > p.backlinks.size()) {
      out += "<p class=\"meta\">and " + std::to_string(p.backlinks_total - p.backlinks.size()) + " more</p>";
    }
    out += "</aside>\n";
  }
  AppendTail(&out);
  return out;
}

std::string AssembleHomePage(std::string_view site_name, const std::vector<LinkItem>& items, size_t total) {
  std::string out;
  out.reserve(items.size() * 80 + 1024);
  AppendHead(site_name, site_name, "", &out);
  out += "<article><h1>";
  AppendHtmlEscaped(site_name, &out);
  out += "</h1><p class=\"meta\">" + std::to_string(total) + (total == 1 ? " note" : " notes") + "</p><ul class=\"listing\">";
  for (const auto& it : items) {
    out += "<li>";
    AppendLink(it.url, it.title, &out);
    out += "</li>";
  }
  out += "</ul>";
  if (total > items.size()) {
    out += "<p class=\"meta\">and " + std::to_string(total - items.size()) + " more</p>";
  }
  out += "</article>\n";
  AppendTail(&out);
  return out;
}

std::string Assemble404Page(std::string_view site_name) {
  std::string out;
  AppendHead(site_name, "Page not found", "", &out);
  out += "<article><h1>Page not found</h1><p>There is no page at this address. "
         "It may have been renamed or removed.</p><p><a href=\"/\">Go to the home page</a></p></article>\n";
  AppendTail(&out);
  return out;
}

}  // namespace folio::site
