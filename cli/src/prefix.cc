#include "prefix.h"

#include <algorithm>

#include "folio/core/text.h"

namespace folio::cli {

Result<std::string> ScopeOfPrefix(std::string_view prefix) {
  if (prefix.empty()) return std::string();
  auto bad = [prefix](const std::string& why) {
    return Status::Invalid("--prefix '" + std::string(prefix.substr(0, 200)) + "': " + why);
  };
  std::string_view p = prefix;
  if (p.ends_with('/')) p.remove_suffix(1);  // "Team A/" is "Team A"
  if (p.size() > kMaxPrefixBytes) return bad("longer than " + std::to_string(kMaxPrefixBytes) + " bytes");
  if (Status s = CheckVaultPath(p); !s.ok()) return bad(s.message());
  for (size_t start = 0; start < p.size();) {
    size_t slash = std::min(p.find('/', start), p.size());
    if (p[start] == '.') return bad("a folder name starts with '.' (hidden folders are never pushed)");
    start = slash + 1;
  }
  return std::string(p) + "/";
}

void AddScope(std::string_view scope, Vault* vault) {
  if (scope.empty()) return;
  for (auto* files : {&vault->notes, &vault->attachments}) {
    for (LocalFile& f : *files) f.path.insert(0, scope);
  }
  for (SkippedFile& s : vault->skipped) s.path.insert(0, scope);
}

size_t CountInScope(const std::vector<RemoteFile>& files, std::string_view scope) {
  if (scope.empty()) return files.size();
  return static_cast<size_t>(
      std::count_if(files.begin(), files.end(), [scope](const RemoteFile& f) { return InScope(f.path, scope); }));
}

}  // namespace folio::cli
