// DefaultEnv: POSIX file I/O for the journal.
#include "folio/journal/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace folio::journal {

File::~File() = default;
DirLock::~DirLock() = default;
Env::~Env() = default;

namespace {

// A full disk (or quota) is kNoSpace: the journal can undo such a write and
// go on once space returns; every other failure is kUnavailable.
Status Errno(const std::string& what, const std::string& path, int err = errno) {
  std::string m = what + " '" + path + "': " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) return Status::NoSpace(std::move(m));
  return Status::Unavailable(std::move(m));
}

class PosixFile final : public File {
 public:
  PosixFile(std::string path, int fd) : File(std::move(path)), fd_(fd) {}
  ~PosixFile() override { close(fd_); }

  Status WriteAt(uint64_t offset, std::span<const std::string_view> parts) override {
    std::vector<iovec> iov;
    iov.reserve(parts.size());
    for (std::string_view p : parts) {
      if (!p.empty()) iov.push_back({const_cast<char*>(p.data()), p.size()});
    }
    size_t first = 0;
    while (first < iov.size()) {
      int count = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
      ssize_t n = pwritev(fd_, &iov[first], count, static_cast<off_t>(offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Errno("write", path());
      }
      if (n == 0) return Status::Unavailable("write '" + path() + "': wrote 0 bytes");
      offset += static_cast<uint64_t>(n);
      auto left = static_cast<size_t>(n);
      while (left > 0) {  // drop what was written; a partial iovec keeps its rest
        if (left >= iov[first].iov_len) {
          left -= iov[first].iov_len;
          ++first;
        } else {
          iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
          iov[first].iov_len -= left;
          left = 0;
        }
      }
    }
    return Status::Ok();
  }

  Status ReadAt(uint64_t offset, size_t n, char* out, size_t* got) const override {
    size_t done = 0;
    while (done < n) {
      ssize_t r = pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Errno("read", path());
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    *got = done;
    return Status::Ok();
  }

  Status Sync() override {
    return fdatasync(fd_) == 0 ? Status::Ok() : Errno("fdatasync", path());
  }

  Status Truncate(uint64_t size) override {
    return ftruncate(fd_, static_cast<off_t>(size)) == 0 ? Status::Ok() : Errno("truncate", path());
  }

  Result<uint64_t> Size() const override {
    struct stat st {};
    if (fstat(fd_, &st) != 0) return Errno("stat", path());
    return static_cast<uint64_t>(st.st_size);
  }

 private:
  int fd_;
};

class PosixLock final : public DirLock {
 public:
  explicit PosixLock(int fd) : fd_(fd) {}
  ~PosixLock() override { close(fd_); }  // closing releases the flock

 private:
  int fd_;
};

class PosixEnv final : public Env {
 public:
  Result<std::unique_ptr<File>> OpenFile(const std::string& path, bool create) override {
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
    if (fd < 0) {
      if (errno == ENOENT) return Status::NotFound("no such file '" + path + "'");
      return Errno("open", path);
    }
    return std::unique_ptr<File>(new PosixFile(path, fd));
  }

  Status ReadFile(const std::string& path, std::string* out) override {
    Result<std::unique_ptr<File>> f = OpenFile(path, false);
    if (!f.ok()) return f.status();
    Result<uint64_t> size = (*f)->Size();
    if (!size.ok()) return size.status();
    out->resize(*size);
    size_t got = 0;
    Status s = (*f)->ReadAt(0, out->size(), out->data(), &got);
    out->resize(got);
    return s;
  }

  Status CreateDir(const std::string& path) override {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return Status::Unavailable("create directory '" + path + "': " + ec.message());
    return Status::Ok();
  }

  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return Errno("list", dir);
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    closedir(d);
    return names;
  }

  Status Remove(const std::string& path) override {
    return unlink(path.c_str()) == 0 ? Status::Ok() : Errno("remove", path);
  }

  Status Rename(const std::string& from, const std::string& to) override {
    return rename(from.c_str(), to.c_str()) == 0 ? Status::Ok() : Errno("rename to '" + to + "'", from);
  }

  Status SyncDir(const std::string& dir) override {
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Errno("open directory", dir);
    int r = fsync(fd);
    int err = errno;
    close(fd);
    return r == 0 ? Status::Ok() : Errno("fsync directory", dir, err);
  }

  Result<std::unique_ptr<DirLock>> LockFile(const std::string& path) override {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Errno("open lock file", path);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      close(fd);
      if (err == EWOULDBLOCK) return Status(Code::kConflict, "journal '" + path + "' is locked by another user");
      return Errno("lock", path, err);
    }
    return std::unique_ptr<DirLock>(new PosixLock(fd));
  }
};

}  // namespace

Env* DefaultEnv() {
  static Env* env = new PosixEnv();  // never freed: journals may outlive static destruction order
  return env;
}

}  // namespace folio::journal
