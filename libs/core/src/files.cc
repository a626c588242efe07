#include "folio/core/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace folio {

Status SyncDirectory(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::Unavailable("cannot open directory " + dir + ": " + strerror(errno));
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  if (rc != 0) return Status::Unavailable("cannot fsync directory " + dir + ": " + strerror(err));
  return Status::Ok();
}

FileLock::~FileLock() { close(fd_); }  // closing releases the flock

Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Unavailable("cannot open lock file " + path + ": " + strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) return Status(Code::kConflict, path + " is locked by another process");
    return Status::Unavailable("cannot lock " + path + ": " + strerror(err));
  }
  return std::make_unique<FileLock>(fd);
}

}  // namespace folio
