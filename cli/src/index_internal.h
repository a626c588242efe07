// The index's line format and file helpers, shared by index.cc (the index
// file) and index_log.cc (its journal). Not part of index.h's contract.
// Pure functions; call from any thread.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "folio/core/status.h"
#include "index.h"

namespace folio::cli::index_internal {

// One file line of the index (index.h), without its '\n'. False if malformed.
bool ParseEntry(std::string_view line, IndexEntry* e);

// Appends e's file line and '\n' to *out.
void AppendEntry(const IndexRow& e, std::string* out);

// Writes the index of `header` (entries not used) with `rows` as its files.
Status WriteRows(const std::filesystem::path& vault, const Index& header, std::span<const IndexRow> rows);

// The stat data FileStat keeps.
inline FileStat StatOf(const struct stat& sb) {
  return {static_cast<int64_t>(sb.st_size),
          static_cast<int64_t>(sb.st_mtim.tv_sec) * 1'000'000'000 + sb.st_mtim.tv_nsec,
          static_cast<uint64_t>(sb.st_ino)};
}

// Writes `text` to a temporary file beside `final_path` and renames it over
// it (no fsync; see index.h). Fails with kInternal; final_path is then intact.
Status ReplaceFile(const std::filesystem::path& final_path, std::string_view text);

// The whole file and, if `stat` is not null, its stat data. kNotFound if
// it does not exist, kInvalidArgument if it cannot be read.
Result<std::string> ReadWholeFile(const std::filesystem::path& path, FileStat* stat);

// Applies the complete blocks of <vault>/.folio/index.log to `index` if the
// journal names index->file as its base; sets index->journal to the text of
// those blocks (with the journal's header), or "" when there is none to
// extend.
void ApplyJournal(const std::filesystem::path& vault, Index* index);

// UpdateIndex (index.h) with the journal's bound in bytes instead of 1/16
// of the index file (tests: the journal of a small index).
Status UpdateIndex(const std::filesystem::path& vault, const Index& old, const Index& next,
                   std::span<const IndexRow> rows, int64_t max_journal_bytes);

}  // namespace folio::cli::index_internal
