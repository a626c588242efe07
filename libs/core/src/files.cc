#include "folio/core/files.h"

#include <fcntl.h>
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

}  // namespace folio
