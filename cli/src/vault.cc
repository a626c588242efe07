#include "vault.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <system_error>
#include <utility>

#include "folio/core/hash.h"
#include "folio/core/service.h"
#include "folio/core/thread_pool.h"
#include "folio/core/text.h"

namespace folio::cli {
namespace {

namespace fs = std::filesystem;

enum class Kind { kOther, kNote, kAttachment };

Kind KindOf(std::string_view name) {
  if (EndsWith(name, ".md")) return Kind::kNote;
  return IsAttachmentPath(name) ? Kind::kAttachment : Kind::kOther;
}

Status TooLarge(Kind kind, int64_t size, int64_t max_bytes) {
  if (kind == Kind::kAttachment) {
    return Status::TooLarge(FormatBytes(size) + " is over the " + FormatBytes(max_bytes) +
                            " attachment limit");
  }
  return Status::TooLarge("note is " + std::to_string(size) + " bytes, over the " +
                          FormatBytes(max_bytes) + " limit per note");
}

// Reads at most max_bytes of `file`; stats first so a huge file is never read.
Status ReadBounded(const fs::path& file, Kind kind, int64_t max_bytes, std::string* out) {
  std::error_code ec;
  auto size = fs::file_size(file, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return Status::NotFound("file is gone");
    return Status::Internal("cannot read: " + ec.message());
  }
  if (static_cast<int64_t>(size) > max_bytes) {
    return TooLarge(kind, static_cast<int64_t>(size), max_bytes);
  }
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (f == nullptr) return Status::Internal(std::string("cannot read: ") + std::strerror(errno));
  out->clear();
  out->reserve(size);
  char buf[64 * 1024];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    if (static_cast<int64_t>(out->size() + n) > max_bytes) {
      std::fclose(f);
      return TooLarge(kind, static_cast<int64_t>(out->size() + n), max_bytes);  // grew while we read it
    }
    out->append(buf, n);
  }
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  return failed ? Status::Internal("cannot read: I/O error") : Status::Ok();
}

bool IsWithin(const fs::path& canonical, const fs::path& canonical_root) {
  auto [r, c] = std::mismatch(canonical_root.begin(), canonical_root.end(), canonical.begin(),
                              canonical.end());
  return r == canonical_root.end();
}

// Directories still to list, shared by the walking threads: (path, vault-
// relative prefix ending in '/', or "" for the root). A thread that lists a
// directory pushes its subdirectories before it says it is done, so the walk
// ends when the queue is empty and no thread is listing.
class DirQueue {
 public:
  using Dir = std::pair<std::string, std::string>;
  explicit DirQueue(Dir root) { dirs_.push_back(std::move(root)); }
  // The next directory to list; false once the walk is over.
  bool Pop(Dir* dir) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !dirs_.empty() || busy_ == 0; });
    if (dirs_.empty()) return false;
    *dir = std::move(dirs_.back());
    dirs_.pop_back();
    ++busy_;
    return true;
  }
  // After listing a popped directory: its subdirectories.
  void Done(std::vector<Dir>* found) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& d : *found) dirs_.push_back(std::move(d));
    found->clear();
    --busy_;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Dir> dirs_;
  size_t busy_ = 0;
};

// One walking thread: lists directories from the queue into its own Vault
// (merged and sorted by WalkVault). Directories are read with readdir and
// files stat'ed by name relative to their open directory (one path component
// to resolve; a push stats every file), so the walk costs about what
// `find -printf` does; several threads overlap those system calls.
class Walker {
 public:
  Walker(const fs::path& canonical_root, const WalkOptions& options, Vault* out)
      : canonical_root_(canonical_root), options_(options), out_(out) {
    // Room for what the index knew (reserved address space; pages are
    // touched as files are added), so 100k entries are not moved 17 times.
    if (options_.cache) out_->notes.reserve(options_.cache->size());
  }

  // Iterative (a deep tree cannot overflow the stack). Directory symlinks are
  // never descended.
  void Run(DirQueue* queue) {
    DirQueue::Dir dir;
    std::vector<DirQueue::Dir> found;
    while (queue->Pop(&dir)) {
      List(dir.first, dir.second, &found);
      queue->Done(&found);
    }
  }

 private:
  void List(const std::string& dir, const std::string& prefix, std::vector<DirQueue::Dir>* found) {
    folder_ = options_.cache ? options_.cache->In(prefix) : StatCache::Folder{};
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr;
    if (d == nullptr) {
      int err = errno;
      if (fd >= 0) ::close(fd);
      return Skip(prefix, std::string("cannot list directory: ") + std::strerror(err), true);
    }
    for (;;) {
      errno = 0;
      const dirent* e = ::readdir(d);
      if (e == nullptr) {
        if (errno != 0) Skip(prefix, std::string("cannot list directory: ") + std::strerror(errno), true);
        break;
      }
      std::string_view name = e->d_name;
      if (name.empty() || name.front() == '.') continue;  // ., .., .obsidian, .git, .trash, dot files
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {  // file systems that do not say: ask
        struct stat sb;
        if (::fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        type = S_ISLNK(sb.st_mode) ? DT_LNK : S_ISDIR(sb.st_mode) ? DT_DIR : S_ISREG(sb.st_mode) ? DT_REG : DT_UNKNOWN;
      }
      std::string rel = prefix;
      rel.append(name);
      auto path = [&] { return dir + "/" + e->d_name; };  // built only when needed: not for a cached file
      if (type == DT_LNK) {
        OnSymlink(path(), rel);
      } else if (type == DT_DIR) {
        rel.push_back('/');
        found->emplace_back(path(), std::move(rel));
      } else if (type == DT_REG) {
        Kind kind = KindOf(name);
        if (kind != Kind::kOther) AddFile(fd, e->d_name, dir, std::move(rel), kind);
      }  // fifos, sockets, devices: ignored
    }
    ::closedir(d);  // closes fd
  }

  void OnSymlink(const fs::path& link, const std::string& rel) {
    std::error_code ec;
    fs::file_status target = fs::status(link, ec);
    if (fs::is_directory(target)) return Skip(rel, "symbolic link to a directory; not followed", false);
    Kind kind = KindOf(rel);
    if (kind == Kind::kOther) return;
    fs::path canonical = fs::canonical(link, ec);
    if (ec || !fs::exists(target)) return Skip(rel, "dangling symbolic link; not sent", false);
    if (!IsWithin(canonical, canonical_root_)) {
      return Skip(rel, "symbolic link leads outside the vault; not followed", false);
    }
    if (!fs::is_regular_file(target)) return Skip(rel, "not a regular file; not sent", false);
    AddFile(-1, nullptr, link.string(), rel, kind);
  }

  // Reads the file once to hash it, unless the stat cache knows its hash;
  // the content is dropped (re-read at send time). `name` is the file's name
  // in the open directory dir_fd, whose path is `where`; or dir_fd is -1 and
  // `where` is the file's path.
  void AddFile(int dir_fd, const char* name, const std::string& where, std::string rel, Kind kind) {
    if (Status st = CheckVaultPath(rel); !st.ok()) return Skip(rel, st.message() + "; not sent", true);
    bool note = kind == Kind::kNote;
    int64_t max_bytes = note ? options_.max_note_bytes : options_.max_attachment_bytes;
    auto& list = note ? out_->notes : out_->attachments;
    struct stat sb;
    FileStat fst;
    int rc = dir_fd >= 0 ? ::fstatat(dir_fd, name, &sb, 0) : ::stat(where.c_str(), &sb);
    if (rc == 0) {
      fst = {static_cast<int64_t>(sb.st_size), static_cast<int64_t>(sb.st_mtim.tv_sec) * 1'000'000'000 + sb.st_mtim.tv_nsec,
             static_cast<uint64_t>(sb.st_ino)};
      if (fst.size > max_bytes) {
        Skip(rel, TooLarge(kind, fst.size, max_bytes).message() + "; not sent", true);
        out_->skipped.back().too_large = true;
        return;
      }
      // A file of the folder being listed is looked up among its entries alone.
      const std::string* sha = !options_.cache ? nullptr
                               : dir_fd >= 0   ? options_.cache->Find(folder_, name, fst)
                                               : options_.cache->Find(rel, fst);
      if (sha != nullptr) {
        list.push_back({std::move(rel), *sha, fst.size, fst});
        return;
      }
    }
    std::string content;
    const std::string file = dir_fd >= 0 ? where + "/" + name : where;
    if (Status st = ReadBounded(file, kind, max_bytes, &content); !st.ok()) {
      return Skip(rel, st.message() + "; not sent", true);
    }
    ++out_->hashed;
    if (note && !IsValidUtf8(content)) return Skip(rel, "content is not valid UTF-8; not sent", true);
    // Stat data that does not match what was read (changed meanwhile) is never trusted later.
    if (fst.size != static_cast<int64_t>(content.size())) fst = FileStat{};
    list.push_back({std::move(rel), Sha256Hex(content), static_cast<int64_t>(content.size()), fst});
  }

  void Skip(std::string rel, std::string reason, bool is_error) {
    out_->skipped.push_back({rel.empty() ? "." : std::move(rel), std::move(reason), is_error, false});
  }

  const fs::path& canonical_root_;
  const WalkOptions& options_;
  Vault* out_;
  StatCache::Folder folder_;  // the cache's entries under the folder being listed
};

// Re-reads `rel` for sending: still inside the vault, still within the limit.
Result<std::string> ReadInVault(const fs::path& root, std::string_view rel, Kind kind,
                                int64_t max_bytes) {
  fs::path file = root / fs::path(rel);
  std::error_code ec, root_ec;
  fs::path canonical = fs::canonical(file, ec);
  if (ec) return Status::NotFound("file is gone");
  // A symlink may have been re-pointed since the walk: still never read outside.
  if (!IsWithin(canonical, fs::canonical(root, root_ec)) || root_ec) {
    return Status::Invalid("symbolic link now leads outside the vault");
  }
  std::string content;
  if (Status st = ReadBounded(file, kind, max_bytes, &content); !st.ok()) return st;
  return content;
}

}  // namespace

bool IsAttachmentPath(std::string_view path) {
  if (path == "publish.css") return true;  // the site's custom stylesheet (Obsidian Publish's convention)
  static constexpr std::string_view kExtensions[] = {
      "png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "mp3", "wav", "m4a",
      "ogg", "flac", "opus", "mp4", "webm", "ogv", "mov", "mkv", "pdf",
      "woff2", "woff", "ttf", "otf"};  // fonts a publish.css loads (same origin: the pages' CSP allows only 'self')
  size_t dot = path.rfind('.');
  size_t slash = path.rfind('/');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return false;
  std::string_view ext = path.substr(dot + 1);
  for (std::string_view e : kExtensions) {
    if (EqualsIgnoreAsciiCase(ext, e)) return true;
  }
  return false;
}

Result<Vault> WalkVault(const fs::path& root, const WalkOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return Status::NotFound(root.string() + ": no such directory");
  }
  fs::path canonical_root = fs::canonical(root, ec);
  if (ec) return Status::Internal(root.string() + ": " + ec.message());
  DirQueue queue({root.string(), ""});
  // Listing and stat'ing are system calls that overlap well: a 100k-note
  // vault takes ~260 ms on one thread, ~140 ms on two.
  std::vector<Vault> parts(std::min<size_t>(AvailableCpus(), 4));
  ParallelChunks(parts.size(), parts.size(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) Walker(canonical_root, options, &parts[i]).Run(&queue);
  });
  Vault vault = std::move(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    auto move_all = [](auto* from, auto* to) { std::move(from->begin(), from->end(), std::back_inserter(*to)); };
    move_all(&parts[i].notes, &vault.notes);
    move_all(&parts[i].attachments, &vault.attachments);
    move_all(&parts[i].skipped, &vault.skipped);
    vault.hashed += parts[i].hashed;
  }
  auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
  std::sort(vault.notes.begin(), vault.notes.end(), by_path);
  std::sort(vault.attachments.begin(), vault.attachments.end(), by_path);
  std::sort(vault.skipped.begin(), vault.skipped.end(), by_path);
  return vault;
}

Result<std::string> ReadNote(const fs::path& root, std::string_view rel, int64_t max_note_bytes) {
  Result<std::string> content = ReadInVault(root, rel, Kind::kNote, max_note_bytes);
  if (content.ok() && !IsValidUtf8(*content)) return Status::Invalid("content is not valid UTF-8");
  return content;
}

Result<std::string> ReadAttachment(const fs::path& root, std::string_view rel,
                                   int64_t max_attachment_bytes) {
  return ReadInVault(root, rel, Kind::kAttachment, max_attachment_bytes);
}

}  // namespace folio::cli
