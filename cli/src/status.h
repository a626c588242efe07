// `folio status DIR [--prefix P]`: what the server holds against a local
// vault, changing nothing. Reads the vault (and, read-only, the stat cache
// of DIR/.folio/index so unchanged files are not hashed again) and one
// GET /api/v1/manifest (always the full form: only it carries the notes'
// warnings); writes nothing, not even the index.
//
// Output contract (integration tests rely on it):
//   stdout  StatusText (status_report.h), or with --json one StatusJson line.
//   stderr  on failure one "folio: MESSAGE" line (wrong token, server down,
//           bad DIR).
//   exit    kStatusInSync, kStatusNotInSync, kStatusError.
// Thread-safety: call from main().
#pragma once

#include <filesystem>
#include <string>

#include "api.h"

namespace folio::cli {

inline constexpr int kStatusInSync = 0;
inline constexpr int kStatusNotInSync = 1;
inline constexpr int kStatusError = 2;  // usage, connection, auth or answer errors, bad DIR

struct StatusOptions {
  std::filesystem::path dir;  // the vault root
  std::string scope;          // "" or a result of ScopeOfPrefix (as PushOptions::scope)
  ServerOptions server;       // status uses retry_for_ms as given (main: 0, a quick look)
  bool json = false;          // one StatusJson line
};

// Runs the status and returns the process exit code.
int RunStatus(const StatusOptions& options);

}  // namespace folio::cli
