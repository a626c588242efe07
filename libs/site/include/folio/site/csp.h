// Content-Security-Policy of the pages this lib assembles (issue 9): what
// each page may run and load, decided here, where it is known which scripts
// a page has. Ingest stores each page's policy in its page record
// (bus::PageRecord::csp); the edge sends it with every answer of that page,
// together with X-Content-Type-Options: nosniff and X-Frame-Options:
// SAMEORIGIN, and sends PageCsp() for records that carry none.
//
// Every page policy: nothing by default; stylesheets from the site; images
// from the site, remote ones authors embed (https:, http:) and data: (the
// icon); media, frames (PDF embeds) and fonts from the site; fetch to the
// site; forms to the site; no <base>, no plugins; framed by the site only.
// Script: every HTML page runs the site script (same origin: 'self') and
// the theme snippet in its <head> (by its SHA-256 hash); a note page with a
// mermaid diagram also folio's inline start script by its hash and the
// mermaid script by its exact URL ('self' covers a same-origin path); such a
// page also allows inline styles, which mermaid draws with. Never
// 'unsafe-inline' or 'unsafe-eval' for script. A site with analytics
// (analytics.h) adds exactly its provider's sources, on that site's HTML
// pages only (an inline config script by its hash). The search page
// (search_page.h) has a policy of its own, with the same two.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "folio/core/status.h"
#include "folio/site/layout.h"

namespace folio::site {

// The policy of a page with only the site's own scripts: listings, tag
// pages, /recent, the graph page, the 404 page, redirect pages, note pages
// without a diagram, and the default for page records without a policy.
const std::string& PageCsp();
// The same for an HTML page of `site`: PageCsp() plus the sources the
// site's analytics needs (analytics.h: script-src, connect-src, img-src),
// for that site only. PageCsp() when it has none.
std::string PageCsp(const SiteInfo& site);
// The policy of a note page as AssembleNotePage(p) writes it (with the
// site's analytics, as PageCsp(p.site)).
std::string NotePageCsp(const NotePage& p);

// A CSP hash source for an inline script's text: "'sha256-<base64>'".
std::string ScriptHashSource(std::string_view script);

// Checks a mermaid script source (ingest's --mermaid-url and
// --mermaid-integrity): "" (diagrams stay text), a same-origin path "/..."
// (integrity optional), or an http(s) URL, which needs an integrity
// ("sha256-", "sha384-" or "sha512-" + base64 of the file's digest). The URL
// must not contain what would break the HTML attribute or the policy
// (spaces, quotes, '<', '>', ';', ','), nor a query or fragment ('?', '#':
// a CSP source expression cannot carry them). kInvalidArgument naming the
// problem.
Status CheckMermaidSource(std::string_view url, std::string_view integrity);

}  // namespace folio::site
