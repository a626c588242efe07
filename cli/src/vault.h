// Finding a vault's notes on disk, for `folio push`.
//
// A vault is a directory tree of Obsidian-style markdown notes. WalkVault lists
// the notes that may be sent (path, size, SHA-256 of the raw bytes) and the
// files it had to leave out, with a reason a user can act on. Contents are not
// kept: ReadNote reads a note again when its batch is sent, so memory stays
// bounded by one batch however large the vault is.
// Thread-safety: pure functions over the file system; call from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio::cli {

inline constexpr int64_t kDefaultMaxNoteBytes = 4 << 20;  // the server's default per-note cap

struct LocalNote {
  std::string path;    // vault-relative with '/' separators: "Folder/Note name.md"
  std::string sha256;  // lower-case hex of the raw file bytes, as in the manifest
  int64_t size = 0;    // bytes
};

struct SkippedFile {
  std::string path;      // vault-relative, as found
  std::string reason;    // "content is not valid UTF-8"
  bool is_error = true;  // true: the push must end non-zero (bad path, bad UTF-8, too
                         // large, unreadable); false: informational (symlink not followed)
};

struct Vault {
  std::vector<LocalNote> notes;       // sorted by path (byte order)
  std::vector<SkippedFile> skipped;   // sorted by path
};

struct WalkOptions {
  int64_t max_note_bytes = kDefaultMaxNoteBytes;  // larger notes are skipped; default 4 MiB
};

// Walks `root` recursively and collects every "*.md" file.
// - Directories and files whose name starts with '.' (.obsidian, .git, .trash, ...)
//   are ignored silently.
// - Symbolic links are never followed out of the vault: a link to a note inside
//   the vault is collected under the link's own path; a link leading outside, a
//   dangling link and a link to a directory are skipped (is_error = false).
// - A note whose path fails CheckVaultPath, whose content is not valid UTF-8,
//   that is larger than max_note_bytes or that cannot be read is skipped
//   (is_error = true) and not listed in notes.
// Fails with kNotFound if `root` is not a directory, kInternal if it cannot be
// listed. A subdirectory that cannot be listed is reported in skipped instead.
Result<Vault> WalkVault(const std::filesystem::path& root, const WalkOptions& options);

// Reads note `rel` (a path from WalkVault) for sending and checks it again,
// since it may have changed since the walk. Fails with kNotFound if the file
// is gone, kTooLarge if it grew past max_note_bytes, kInvalidArgument if it is
// no longer valid UTF-8, kInternal on a read error. Messages omit the path.
Result<std::string> ReadNote(const std::filesystem::path& root, std::string_view rel,
                             int64_t max_note_bytes);

}  // namespace folio::cli
