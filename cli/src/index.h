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
// The journal, `.folio/index.log`: a push that changes few entries does not
// rewrite a 100k-file index (15 MB) but records its changes here (issue 26):
//   folio-index-log 1
//   base <size> <mtime_ns> <ino>   the stat data of the index it extends; a
//                                  journal naming another index is ignored
// then per push, a block:
//   push <version> <walked_ns>     the server version after it; the walk its
//                                  entries' stat data is from
//   <file line as above>           an entry added or replaced
//   del <path>                     an entry removed
//   done <number of lines in the block>
// Blocks apply in order; a torn last block is ignored (it costs the next
// push a hash of what it recorded, never a missed change). The journal is
// replaced by rename too (old blocks plus the new one) and dropped when the
// index is rewritten, which a push does once the journal outgrows
// 1/16 of the index (or its server, site or epoch changed).
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
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folio/core/status.h"

namespace folio::cli {

inline constexpr std::string_view kIndexDir = ".folio";
inline constexpr std::string_view kIndexFile = ".folio/index";
inline constexpr std::string_view kIndexMagic = "folio-index 1";
inline constexpr std::string_view kIndexLogFile = ".folio/index.log";
inline constexpr std::string_view kIndexLogMagic = "folio-index-log 1";
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
  int64_t walked_ns = 0;      // the walk `stat` is from (a journal block's); 0: Index::walked_ns
};

// An entry by reference, as a push computes the next index (sync.h): no
// copy of 100k paths and hashes. The bytes belong to whoever made it.
struct IndexRow {
  std::string_view path;
  bool attachment = false;
  FileStat stat;                   // size -1: not local
  std::string_view sha256;         // "" if not local
  std::string_view server_sha256;  // "" if nothing
};

inline IndexRow RowOf(const IndexEntry& e) { return {e.path, e.attachment, e.stat, e.sha256, e.server_sha256}; }

struct Index {
  std::string server;       // base URL the server view belongs to
  std::string site;         // the site the token selected ("" from servers that do not say)
  std::string epoch;        // the site's history id ("" from servers that do not say)
  int64_t version = 0;      // server version of the server view
  int64_t walked_ns = 0;    // see the header comment
  std::vector<IndexEntry> entries;  // sorted by path, unique
  // What ReadIndex found on disk, for SaveIndex: the index file's stat data
  // (size -1: none) and the journal's text ("" if none or not of this index).
  FileStat file;
  std::string journal;
};

// Reads <vault>/.folio/index and applies its journal (complete blocks only;
// a journal of another index is ignored). Fails with kNotFound if there is none and
// kInvalidArgument naming the problem if it is not a complete index of
// this format version (the caller ignores it then, with a one-line note).
Result<Index> ReadIndex(const std::filesystem::path& vault);

// Writes `index` to <vault>/.folio/index atomically (creating .folio/).
// Fails with kInternal naming the problem; the old index is then intact.
// REQUIRES: index.entries sorted by path.
Status WriteIndex(const std::filesystem::path& vault, const Index& index);

// Records the index after a push: `next`'s header (server, site, epoch,
// version, walked_ns; its entries are not used) and `rows`, given `old` as
// ReadIndex returned it (or a default Index: none). Written as a journal
// block of the rows that differ from old's entries when old's file and
// journal are intact, of the same server, site and epoch, and the journal
// stays under 1/16 of the index file; else by a whole new index, then
// removing the journal. A row whose fields equal its old entry's is
// recorded again only when the new walk makes its stat data trusted where
// the old one did not (see racy stat data). Fails like WriteIndex.
// REQUIRES: rows and old.entries sorted by path, unique.
Status UpdateIndex(const std::filesystem::path& vault, const Index& old, const Index& next,
                   std::span<const IndexRow> rows);

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

  // The entries of a folder and its subfolders (paths starting with scope
  // + prefix), so that a walk looks a folder's files up among those alone,
  // comparing names only (issue 26: at 100k files, a search over the whole
  // index per file was the walk's largest cost in user space).
  struct Folder {
    const IndexEntry* begin = nullptr;
    const IndexEntry* end = nullptr;
    size_t skip = 0;  // bytes of scope + prefix
  };
  // REQUIRES: prefix "" or ending in '/'.
  Folder In(std::string_view prefix) const;
  // Find(prefix + name, stat), for `folder` = In(prefix). REQUIRES: name has no '/'.
  const std::string* Find(const Folder& folder, std::string_view name, const FileStat& stat) const;
  // Files the index knows (what a walk of an unchanged vault finds).
  size_t size() const { return entries_ ? entries_->size() : 0; }

 private:
  // e.sha256 if e's stat data is `stat` and not racy; else nullptr.
  const std::string* Trust(const IndexEntry& e, const FileStat& stat) const;

  const std::vector<IndexEntry>* entries_ = nullptr;
  int64_t walked_ns_ = 0;  // for entries with walked_ns 0
  std::string scope_;  // "" or "P/"
};

// Now, in ns since the epoch (the clock file mtimes are set from).
int64_t WallClockNs();

}  // namespace folio::cli
