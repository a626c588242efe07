// Finding a vault's notes and attachments on disk, for `folio push`.
//
// A vault is a directory tree of Obsidian-style markdown notes and the media
// they embed. WalkVault lists the notes and attachments that may be sent
// (path, size, SHA-256 of the raw bytes) and the files it had to leave out,
// with a reason a user can act on. Contents are not kept: ReadNote and
// ReadAttachment read a file again when its batch is sent, so memory stays
// bounded by one batch however large the vault is.
// Thread-safety: pure functions over the file system; call from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "folio/ingest_api/limits.h"
#include "index.h"

namespace folio::cli {

// The server's default per-note cap and its cap on one attachment, decoded
// (1 MiB - 16 KiB, so that an asset fits one NATS message): the ingest API's
// limits (folio/ingest_api/limits.h), assumed of a server whose manifest
// does not say.
inline constexpr int64_t kDefaultMaxNoteBytes = static_cast<int64_t>(ingest_api::kMaxNoteBytes);
inline constexpr int64_t kMaxAttachmentBytes = static_cast<int64_t>(ingest_api::kMaxAttachmentBytes);

// A note or an attachment found by the walk.
struct LocalFile {
  std::string path;    // vault-relative with '/' separators: "Folder/Note name.md"
  std::string sha256;  // lower-case hex of the raw file bytes, as in the manifest
  int64_t size = 0;    // bytes
  FileStat stat{};     // the file's stat data before it was read (WalkVault), for the index
};
using LocalNote = LocalFile;        // path ends in ".md"
using LocalAttachment = LocalFile;  // IsAttachmentPath(path)

struct SkippedFile {
  std::string path;      // vault-relative, as found
  std::string reason;    // "content is not valid UTF-8"
  bool is_error = true;  // true: the push must end non-zero (bad path, bad UTF-8, too
                         // large, unreadable); false: informational (symlink not followed)
  bool too_large = false;  // over max_note_bytes / max_attachment_bytes (is_error too)
};

struct Vault {
  std::vector<LocalNote> notes;              // sorted by path (byte order)
  std::vector<LocalAttachment> attachments;  // sorted by path (byte order)
  std::vector<SkippedFile> skipped;          // sorted by path
  size_t hashed = 0;                         // notes and attachments read and hashed by the walk
                                             // (the others' hashes came from the stat cache)
};

struct WalkOptions {
  int64_t max_note_bytes = kDefaultMaxNoteBytes;       // larger notes are skipped; default 4 MiB
  int64_t max_attachment_bytes = kMaxAttachmentBytes;  // larger attachments are skipped;
                                                       // default 1008 KiB (the server's cap)
  // A file whose stat data (size, mtime, inode) the cache trusts takes the
  // cached hash and is not read. nullptr: every file is read and hashed.
  const StatCache* cache = nullptr;
};

// True if `path` names an attachment: its extension, compared ignoring ASCII
// case, is one of png jpg jpeg gif bmp svg webp avif mp3 wav m4a ogg flac opus
// mp4 webm ogv mov mkv pdf, or it is "publish.css" at the vault root (the
// site's custom stylesheet). Looks at the name only.
bool IsAttachmentPath(std::string_view path);

// Walks `root` recursively and collects every "*.md" file as a note and every
// file for which IsAttachmentPath holds as an attachment; other files are
// ignored silently.
// - Directories and files whose name starts with '.' (.obsidian, .git, .trash, ...)
//   are ignored silently.
// - Symbolic links are never followed out of the vault: a link to a note or
//   attachment inside the vault is collected under the link's own path; a link
//   leading outside, a dangling link and a link to a directory are skipped
//   (is_error = false).
// - Files are read and hashed unless options.cache trusts their stat data
//   (a cached note was valid UTF-8 when it was hashed).
// - A note whose path fails CheckVaultPath, whose content is not valid UTF-8,
//   that is larger than max_note_bytes or that cannot be read is skipped
//   (is_error = true) and not listed in notes.
// - An attachment whose path fails CheckVaultPath, that is larger than
//   max_attachment_bytes ("2.3 MiB is over the 1008 KiB attachment limit; not
//   sent"; never read) or that cannot be read is skipped (is_error = true) and
//   not listed in attachments. Its content may be any bytes.
// Fails with kNotFound if `root` is not a directory, kInternal if it cannot be
// listed. A subdirectory that cannot be listed is reported in skipped instead.
Result<Vault> WalkVault(const std::filesystem::path& root, const WalkOptions& options);

// Reads note `rel` (a path from WalkVault) for sending and checks it again,
// since it may have changed since the walk. Fails with kNotFound if the file
// is gone, kTooLarge if it grew past max_note_bytes, kInvalidArgument if it is
// no longer valid UTF-8, kInternal on a read error. Messages omit the path.
Result<std::string> ReadNote(const std::filesystem::path& root, std::string_view rel,
                             int64_t max_note_bytes);

// Reads attachment `rel` (a path from WalkVault) for sending. Fails like
// ReadNote, except that any content is accepted and kTooLarge applies past
// max_attachment_bytes.
Result<std::string> ReadAttachment(const std::filesystem::path& root, std::string_view rel,
                                   int64_t max_attachment_bytes);

}  // namespace folio::cli
