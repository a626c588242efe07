// `folio export DIR`: writes the site a folio-ingest server publishes to a
// folder, as its edge serves it: each URL's identity bytes, and beside each
// gzip-served one a `.gz` twin holding exactly the edge's gzip body, so that
// nginx (gzip_static, `try_files $uri $uri.html $uri/index.html =404`)
// serves the same bytes at the same paths (file names: export_path.h).
//
// The URL list comes from ingest (GET /api/v1/export, bounded pages, the
// site's token); the bytes from the edge (--edge, default the manifest's
// site_url). Redirects (301) are left out and counted; the 404 page is
// written as _folio/404.html. Each file is written to a temporary name and
// renamed, so a reader never sees half a file.
//
// Output contract: stdout one summary line; stderr "folio: MESSAGE" lines
// (a refused DIR, the server's errors, pages the edge did not serve).
// Exit 0 when every listed URL was written or is a redirect, 1 when some
// could not be fetched (the others are written), 2 on usage or connection
// errors and a refused DIR (nothing written).
// Thread-safety: call from main().
#pragma once

#include <filesystem>
#include <string>

#include "api.h"

namespace folio::cli {

struct ExportOptions {
  std::filesystem::path dir;  // created if missing; must be empty unless force
  ServerOptions server;       // folio-ingest and the site's token
  std::string edge;           // base URL of an edge serving the site; "" = the manifest's site_url
  bool force = false;         // write into a non-empty DIR, replacing files of the same name
};

int RunExport(const ExportOptions& options);

}  // namespace folio::cli
