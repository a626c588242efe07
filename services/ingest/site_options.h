// SiteOptions: how one site is published (its name, base URL, settings'
// defaults, the mermaid script, folio-storage). Plain data: read by config.cc
// and main, copied into each SiteWriter, which reads it on the writer thread
// (its parts borrow that copy for the writer's lifetime).
#pragma once

#include <cstddef>
#include <string>

#include "folio/site/layout.h"
#include "site_prefs.h"
#include "storage_client.h"

namespace folio::ingest {

struct SiteOptions {
  std::string site = "default";        // namespace of keys and rows
  std::string site_name = "folio";     // shown on pages
  std::string base_url;                // "https://notes.example.com": absolute links in RSS, sitemap, OG; "" = relative
  bool strict_line_breaks = false;     // markdown::RenderOptions::strict_line_breaks of a site that never
                                       // sent its own (PushSettings, stored per site: issue 13)
  size_t recent_pages = 1;             // site::ListingOptions::recent_max_pages (--recent-pages)
  std::string mermaid_url = std::string(site::kMermaidUrl);  // script loaded only by pages with a
                                       // mermaid diagram; checked by site::CheckMermaidSource
  std::string mermaid_integrity = std::string(site::kMermaidIntegrity);  // its SRI ("" for a path on the site)
  std::string mermaid_blob;            // "" (default), or the full hex SHA-256 of the bundled mermaid in
                                       // storage: Start publishes a page at mermaid_url whose body is
                                       // that blob (bundled_mermaid.h)
  int64_t feed_snapshot_bytes = int64_t{64} << 20;  // --feed-snapshot-bytes: the pack bytes published
                                       // since a site's last snapshot (page_pack.h) that, once they also
                                       // exceed the site's live page bytes, make the publisher write a new
                                       // snapshot and purge the packs before it
  SitePrefs prefs;                     // the owner's settings and readers (`folio-ingest site set|reader`,
                                       // Store::LoadSitePrefs); defaults: public, "en", full feeds
  StorageAccess storage;               // folio-storage's URL ("http://127.0.0.1:8083") and write token:
                                       // attachment bytes go there, not to SQLite or the bus; url ""
                                       // (default) = as before
};

}  // namespace folio::ingest
