#include "folio/core/disk_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "folio/core/log.h"

namespace folio {

Result<DiskUsage> DiskUsageOf(const std::string& path) {
  struct statvfs st {};
  if (statvfs(path.c_str(), &st) != 0) {
    return Status::Unavailable("statvfs '" + path + "': " + std::strerror(errno));
  }
  DiskUsage u;
  u.size_bytes = static_cast<uint64_t>(st.f_blocks) * static_cast<uint64_t>(st.f_frsize);
  u.available_bytes = static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
  return u;
}

Result<uint64_t> AvailableBytes(const std::string& path) {
  Result<DiskUsage> u = DiskUsageOf(path);
  if (!u.ok()) return u.status();
  return u->available_bytes;
}

DiskFull::DiskFull(std::string dir, std::string what, uint64_t resume_bytes)
    : dir_(std::move(dir)), what_(std::move(what)), resume_bytes_(resume_bytes) {}

void DiskFull::Observe(const Status& s) {
  if (s.code() == Code::kNoSpace) Set(true, s.message());
  else if (s.ok()) Set(false, "a write succeeded");
}

bool DiskFull::Recheck() {
  if (!full()) return false;
  Result<uint64_t> free = AvailableBytes(dir_);
  if (free.ok() && *free >= resume_bytes_) Set(false, std::to_string(*free) + " bytes available");
  return full();
}

void DiskFull::Set(bool full, const std::string& why) {
  if (full_.exchange(full) == full) return;  // only transitions are news
  if (full) {
    log::Error("disk full: writes fail until space returns", {{what_, dir_}, {"error", why}});
  } else {
    log::Info("disk has space again: writes resume", {{what_, dir_}, {"why", why}});
  }
}

}  // namespace folio
