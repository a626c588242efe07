// TmpfsMount, FillDisk, FlipByteOf: file-system faults for tests.
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "folio/testing/testing.h"

namespace folio::testing {

TmpfsMount::TmpfsMount(std::string dir, uint64_t bytes) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    error_ = "cannot create " + dir_ + ": " + ec.message();
    return;
  }
  const std::string opts = "size=" + std::to_string(bytes) + ",mode=0755";
  if (mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
    error_ = "mount -t tmpfs on " + dir_ + ": " + std::strerror(errno) +
             (errno == EPERM ? " (needs root or CAP_SYS_ADMIN)" : "");
    return;
  }
  mounted_ = true;
}

TmpfsMount::~TmpfsMount() {
  if (!mounted_) return;
  // Busy (a process still has a file open): detach now, freed once unused.
  if (umount2(dir_.c_str(), 0) != 0) umount2(dir_.c_str(), MNT_DETACH);
}

uint64_t FillDisk(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return 0;
  uint64_t total = 0;
  std::vector<char> buf(1 << 20, 'f');
  for (size_t chunk : {size_t{1} << 20, size_t{4096}, size_t{1}}) {
    for (;;) {
      ssize_t n = write(fd, buf.data(), chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // ENOSPC: on with smaller pieces
      total += static_cast<uint64_t>(n);
    }
  }
  close(fd);
  return total;
}

bool FlipByteOf(const std::string& path, std::string_view needle) {
  std::string file;
  {
    std::ifstream in(path, std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  size_t pos = file.find(needle);
  if (needle.empty() || pos == std::string::npos || file.find(needle, pos + 1) != std::string::npos) return false;
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(static_cast<std::streamoff>(pos));
  const char c = static_cast<char>(file[pos] ^ 0x40);
  f.write(&c, 1);
  return static_cast<bool>(f);
}

}  // namespace folio::testing
