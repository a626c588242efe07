// Test helpers that run real things: a nats-server with JetStream on a free
// loopback port, child processes of folio binaries, temp directories, and
// waiting for a service to answer HTTP. No fakes. For tests only.
// Threading: use from the test's main thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace folio::testing {

// A free TCP port on 127.0.0.1 (bound then released; racy but fine locally).
int FreePort();

// A fresh directory under $TMPDIR, removed (recursively) by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
 private:
  std::string path_;
};

// A child process; killed (SIGTERM, then SIGKILL after 5 s) by the destructor.
class Process {
 public:
  // argv[0] is the executable path. env entries "K=V" are added to ours.
  // stdout/stderr go to log_path if non-empty (appended), else inherited.
  // listen_fd >= 0: systemd socket activation; the child gets that socket
  // as fd 3 with LISTEN_FDS=1 and LISTEN_PID=<the child's pid> (set between
  // fork and exec); the caller keeps its own descriptor.
  Process(std::vector<std::string> argv, std::vector<std::string> env = {},
          std::string log_path = "", int listen_fd = -1);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool Running();
  // Sends a signal and waits up to timeout_ms for exit; returns the exit
  // status (as from waitpid) or -1 if still running.
  int Stop(int signum = 15, int timeout_ms = 5000);
  void Kill() { Stop(9, 5000); }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// nats-server -js on a free port with its store in a TempDir.
class NatsServer {
 public:
  NatsServer();
  ~NatsServer();
  std::string url() const;  // "nats://127.0.0.1:<port>"
  int port() const { return port_; }
  void Restart();           // stop and start again on the same port and store
  void Stop();              // stop (SIGTERM); the store is kept
  void Start();             // start on the same port and store; waits until JetStream is ready
  void Wipe();              // REQUIRES: stopped. Removes the store: the next Start is a new, empty server
 private:
  TempDir dir_;
  int port_;
  int monitor_port_ = 0;  // HTTP monitoring, polled for JetStream readiness
  Process* proc_ = nullptr;
};

// A tmpfs of `bytes` mounted at `dir` (created if missing): a small disk a
// test can fill. Mounting needs root or CAP_SYS_ADMIN; where it is not
// permitted, mounted() is false and error() says why (the test skips). The
// destructor unmounts (lazily if a process still has a file open), also
// when a check failed.
class TmpfsMount {
 public:
  TmpfsMount(std::string dir, uint64_t bytes);
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string error_;
  bool mounted_ = false;
};

// Writes a file at `path` until its file system is full (ENOSPC); returns
// the bytes written. Remove the file to give the space back.
uint64_t FillDisk(const std::string& path);

// Flips one bit of the first byte of `needle` inside the file at `path`.
// False (nothing changed) unless needle occurs there exactly once.
bool FlipByteOf(const std::string& path, std::string_view needle);

// Polls GET url until it answers `status` or timeout_ms passes.
bool WaitForHttp(const std::string& url, int status = 200, int timeout_ms = 10000);

// Path of a built folio binary ("folio-ingest"): $FOLIO_BIN_DIR/<name>.
std::string BinPath(const std::string& name);
// Path under the source tree: $FOLIO_SOURCE_DIR/<rel>.
std::string SourcePath(const std::string& rel);

}  // namespace folio::testing
