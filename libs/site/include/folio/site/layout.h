// Page assembly: turns a rendered note body into a complete HTML page (and
// builds the generated pages: home listing, 404). The stylesheet is a
// separate, immutable, content-hashed asset, never inlined.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace folio::site {

struct LinkItem {
  std::string title;
  std::string url;  // decoded URL path; percent-encoded when written
};

struct NotePage {
  std::string site_name;     // shown in the header and <title>
  std::string title;
  std::string body_html;     // from markdown::RenderNote
  std::string description;   // plain-text summary for <meta name="description">
  std::string updated;       // "2026-11-30" or ""
  std::vector<LinkItem> backlinks;  // possibly a bounded prefix of all of them
  size_t backlinks_total = 0;        // how many exist; the page says "and N more"
};

std::string AssembleNotePage(const NotePage& p);
// Home listing when the vault has no root index.md. `total` may exceed
// items.size() (the listing is bounded); the page says how many more exist.
std::string AssembleHomePage(std::string_view site_name, const std::vector<LinkItem>& items, size_t total);
std::string Assemble404Page(std::string_view site_name);

// The stylesheet and its URL ("/assets/folio.<hash>.css").
const std::string& StyleSheet();
const std::string& StyleSheetUrl();

// Writes <a href="URL">text</a> with the URL percent-encoded and both escaped.
void AppendLink(std::string_view url, std::string_view text, std::string* out);

}  // namespace folio::site
