#include "status.h"

#include <cstdio>
#include <system_error>

#include "index.h"
#include "prefix.h"
#include "settings.h"
#include "status_report.h"
#include "vault.h"

namespace folio::cli {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "folio: %s\n", message.c_str());
  return kStatusError;
}

}  // namespace

int RunStatus(const StatusOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_directory(options.dir, ec)) return Fail(options.dir.string() + ": no such directory");
  // The manifest first: a wrong server or token fails before a long walk.
  Result<Manifest> manifest = FetchManifest(options.server);
  if (!manifest.ok()) return Fail(manifest.status().message());
  WalkOptions walk;
  if (manifest->max_note_bytes > 0) walk.max_note_bytes = manifest->max_note_bytes;
  if (manifest->max_attachment_bytes > 0) walk.max_attachment_bytes = manifest->max_attachment_bytes;
  // Read only: the index's stat data spares hashing unchanged files; an
  // unusable index only means every file is hashed.
  Result<Index> index = ReadIndex(options.dir);
  StatCache cache = index.ok() ? StatCache(*index, options.scope) : StatCache();
  walk.cache = &cache;
  Result<Vault> vault = WalkVault(options.dir, walk);
  if (!vault.ok()) return Fail(vault.status().message());
  AddScope(options.scope, &*vault);
  std::string settings_warning;  // push reports it; status has nothing to add
  VaultSettings settings = ReadVaultSettings(options.dir, &settings_warning);
  PushPlan plan = Diff(*vault, *manifest, options.scope);
  StatusReport report = MakeStatusReport(plan, *manifest, *vault, options.scope, settings.strict_line_breaks);
  report.server = options.server.url;
  std::string text = options.json ? StatusJson(report) + "\n" : StatusText(report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return report.in_sync() ? kStatusInSync : kStatusNotInSync;
}

}  // namespace folio::cli
