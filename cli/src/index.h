// The vault's local index, `.folio/index`, like git's index: what `folio
// push` last saw of each file (its stat data and SHA-256, so an unchanged
// file is not read or hashed again) and of the server (the files it holds,
// their hashes, the server URL, site and version), so that the next push
// asks the server only for what changed since that version.
//
// Format (text; one record per line, fields separated by '\t'; vault paths
// hold no control characters, and the path is the last field):
//   folio-index 1
//   server <url>
//   site <name>
//   epoch <id>              the site's history id (a restore changes it)
//   version <N>             server version the server view below is at
//   walked_ns <N>           wall clock (ns since the epoch) when the walk
//                           that produced the stat data started
//   <kind> <size> <mtime_ns> <ino> <sha256> <server> <path>   per file:
//        kind     'n' note, 'a' attachment
//        size..   the local stat data when sha256 was taken; size -1 and
//                 sha256 '-' when the file is not local (on the server only)
//        server   '=' the server holds sha256, '-' it holds nothing there,
//                 else the hash it holds
//   end <number of file lines>
// Files are sorted by path. The file is replaced by rename of a temporary
// file, so a reader sees the old index or the new one; one torn by a crash
// (not fsynced) is detected by its end line and ignored.
//
// Racy stat data (git's rule): a file whose mtime is within kRacyMarginNs of
// (or after) walked_ns may have been changed again within the same clock
// tick, after it was hashed, without its stat data changing; such an entry
// is never trusted, the file is hashed again.
//
// Pure functions over the file system; call from any thread (one writer per
// vault at a time).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folio/core/status.h"

namespace folio::cli {

inline constexpr std::string_view kIndexDir = ".folio";
inline constexpr std::string_view kIndexFile = ".folio/index";
inline constexpr std::string_view kIndexMagic = "folio-index 1";
inline constexpr int64_t kRacyMarginNs = 1'000'000'000;  // 1 s: coarse file system clocks

// What a file's stat data was when it was hashed.
struct FileStat {
  int64_t size = -1;      // -1: no local file
  int64_t mtime_ns = 0;   // st_mtim, ns since the epoch
  uint64_t ino = 0;
  bool operator==(const FileStat&) const = default;
};

struct IndexEntry {
  std::string path;           // vault-relative, as pushed
  bool attachment = false;    // false: a note
  FileStat stat;              // local stat data (size -1: not local)
  std::string sha256;         // local hash when stat was taken; "" if not local
  std::string server_sha256;  // what the server holds; "" if nothing
};

struct Index {
  std::string server;       // base URL the server view belongs to
  std::string site;         // the site the token selected ("" from servers that do not say)
  std::string epoch;        // the site's history id ("" from servers that do not say)
  int64_t version = 0;      // server version of the server view
  int64_t walked_ns = 0;    // see the header comment
  std::vector<IndexEntry> entries;  // sorted by path, unique
};

// Reads <vault>/.folio/index. Fails with kNotFound if there is none and
// kInvalidArgument naming the problem if it is not a complete index of
// this format version (the caller ignores it then, with a one-line note).
Result<Index> ReadIndex(const std::filesystem::path& vault);

// Writes `index` to <vault>/.folio/index atomically (creating .folio/).
// Fails with kInternal naming the problem; the old index is then intact.
// REQUIRES: index.entries sorted by path.
Status WriteIndex(const std::filesystem::path& vault, const Index& index);

// The stat data of an index a walk may trust: entries with a local hash
// whose mtime is not racy (see above). Refers to the index's entries, which
// must outlive it; an empty cache trusts nothing. Index paths are site
// paths: a walk of `folio push --prefix P` looks up "P/" + its local path
// (`scope`, prefix.h), so a folder pushed under another prefix than last
// time trusts nothing and is hashed again.
class StatCache {
 public:
  StatCache() = default;
  explicit StatCache(const Index& index, std::string scope = {})
      : entries_(&index.entries), walked_ns_(index.walked_ns), scope_(std::move(scope)) {}
  // The hash recorded for scope + `path` if its stat data is `stat` and not
  // racy; nullptr otherwise. Binary search: O(log n).
  const std::string* Find(std::string_view path, const FileStat& stat) const;
  // Files the index knows (what a walk of an unchanged vault finds).
  size_t size() const { return entries_ ? entries_->size() : 0; }

 private:
  const std::vector<IndexEntry>* entries_ = nullptr;
  int64_t walked_ns_ = 0;
  std::string scope_;  // "" or "P/"
};

// Now, in ns since the epoch (the clock file mtimes are set from).
int64_t WallClockNs();

}  // namespace folio::cli
