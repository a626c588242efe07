// Test helpers that run real things: a nats-server with JetStream on a free
// loopback port, child processes of folio binaries, temp directories, and
// waiting for a service to answer HTTP. No fakes. For tests only.
// Threading: use from the test's main thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
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

// What makes a NatsServer one node of a JetStream cluster (NatsCluster
// fills it in): its server name, the cluster's name, its route port and
// the route ports of the other nodes.
struct NatsClusterNode {
  std::string server_name;
  std::string cluster_name;
  int cluster_port = 0;
  std::vector<int> route_ports;
};

// nats-server -js on a free port with its store in a TempDir; with a
// NatsClusterNode, a node of a cluster (--cluster, --routes).
class NatsServer {
 public:
  NatsServer();
  explicit NatsServer(NatsClusterNode node);
  ~NatsServer();
  std::string url() const;  // "nats://127.0.0.1:<port>"
  int port() const { return port_; }
  int monitor_port() const { return monitor_port_; }
  const std::string& server_name() const { return node_.server_name; }  // "" standalone
  bool running() const { return proc_ != nullptr; }
  pid_t pid() const { return proc_ ? proc_->pid() : -1; }  // -1 when stopped
  void Restart();           // stop and start again on the same port and store
  void Stop();              // stop (SIGTERM); the store is kept
  void Kill();              // SIGKILL, no shutdown of its own; the store is kept
  void Start();             // start on the same port and store; waits until JetStream is enabled
  void Wipe();              // REQUIRES: stopped. Removes the store: the next Start is a new, empty server
  // Body of GET http://127.0.0.1:<monitor port><path_and_query> ("/jsz?streams=true"),
  // or "" when it does not answer 200.
  std::string Monitor(const std::string& path_and_query) const;
 private:
  TempDir dir_;
  NatsClusterNode node_;
  int port_;
  int monitor_port_ = 0;  // HTTP monitoring, polled for JetStream readiness
  Process* proc_ = nullptr;
};

// A JetStream cluster of `nodes` nats-servers on loopback (routes between
// all of them, one cluster name, server names "n0", "n1", ...), each with
// its own port, monitoring port and store. The constructor returns once
// every node reports healthy (/healthz: a meta leader is known).
class NatsCluster {
 public:
  explicit NatsCluster(int nodes = 3);
  NatsCluster(const NatsCluster&) = delete;
  NatsCluster& operator=(const NatsCluster&) = delete;
  int size() const { return static_cast<int>(nodes_.size()); }
  NatsServer& node(int i) { return *nodes_[static_cast<size_t>(i)]; }
  // Every node's URL, comma-separated: a --nats value.
  std::string urls() const;
  // Polls until every running node answers /healthz with 200 (JetStream has
  // a meta leader and its streams and consumers are current).
  bool WaitHealthy(int timeout_ms);
 private:
  std::vector<std::unique_ptr<NatsServer>> nodes_;
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

// Runs a shell command to its exit; its stdout and stderr in *out. The exit
// code, or -1 if it could not run or did not exit normally.
int RunShell(const std::string& command, std::string* out);

}  // namespace folio::testing
