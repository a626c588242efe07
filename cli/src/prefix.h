// `folio push DIR --prefix P`: DIR's files are the site's files under P/
// (local "x/y.md" is the site's "P/x/y.md"), and the push neither changes
// nor deletes anything on the site outside P/.
//
// A prefix is a vault folder path: relative, '/'-separated, no empty, "."
// or ".." segment, no segment starting with '.' (hidden folders are never
// pushed), valid UTF-8, at most kMaxPrefixBytes. Its scope is the prefix
// plus '/' ("Team A/"), or "" for no prefix (the whole site).
//
// Pure functions over values; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "plan.h"
#include "vault.h"

namespace folio::cli {

inline constexpr size_t kMaxPrefixBytes = 512;

// The scope of `prefix` as given on the command line: "" for "", else the
// prefix with one trailing '/' ("Team A" and "Team A/" -> "Team A/").
// Fails with kInvalidArgument naming the problem ("--prefix '../x': ...").
Result<std::string> ScopeOfPrefix(std::string_view prefix);

// True if site path `path` lies in `scope` ("" holds every path).
inline bool InScope(std::string_view path, std::string_view scope) { return path.starts_with(scope); }

// Moves the walk's paths into `scope`: every note, attachment and skipped
// file's path gets `scope` in front. Keeps the lists sorted.
void AddScope(std::string_view scope, Vault* vault);

// The local path (relative to DIR) of site path `path`.
// REQUIRES: InScope(path, scope).
inline std::string_view LocalPath(std::string_view path, std::string_view scope) {
  return path.substr(scope.size());
}

// How many of `files` lie in `scope`.
size_t CountInScope(const std::vector<RemoteFile>& files, std::string_view scope);

}  // namespace folio::cli
