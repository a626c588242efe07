// FreePort, TempDir, Process, BinPath/SourcePath.
#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "folio/testing/testing.h"

extern char** environ;

namespace folio::testing {

namespace {

[[noreturn]] void Fatal(const std::string& msg) {
  std::fprintf(stderr, "folio::testing: %s\n", msg.c_str());
  std::abort();
}

// Resolves a bare program name against $PATH (before fork: the child may
// only make async-signal-safe calls).
std::string ResolveExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  // nats-server lives in /usr/sbin on Debian, often not in a user's PATH.
  std::string dirs = std::string(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin") +
                     ":/usr/local/sbin:/usr/sbin:/sbin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return name;  // execve fails in the child and says so
}

// Our environment with `extra` ("K=V") added, replacing same-named entries.
std::vector<std::string> MergeEnv(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view key = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const std::string& x : extra) {
      if (x.compare(0, key.size() + 1, std::string(key) + "=") == 0) overridden = true;
    }
    if (!overridden) env.emplace_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Fatal("socket: " + std::string(strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Fatal("bind 127.0.0.1:0: " + std::string(strerror(errno)));
  }
  close(fd);
  return ntohs(addr.sin_port);
}

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/folio-test-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) Fatal("mkdtemp " + templ + ": " + strerror(errno));
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

// Writes n in decimal into out (room for 20 digits and a NUL); async-signal-safe.
void FormatPid(long n, char* out) {
  char digits[24];
  int len = 0;
  do {
    digits[len++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0 && len < 20);
  for (int i = 0; i < len; ++i) out[i] = digits[len - 1 - i];
  out[len] = '\0';
}

}  // namespace

Process::Process(std::vector<std::string> argv, std::vector<std::string> env, std::string log_path, int listen_fd) {
  if (argv.empty()) Fatal("Process: empty argv");
  std::string exe = ResolveExecutable(argv[0]);
  if (listen_fd >= 0) {
    env.push_back("LISTEN_FDS=1");
    // The child writes its own pid over the padding before exec.
    env.push_back("LISTEN_PID=" + std::string(23, ' '));
  }
  std::vector<std::string> envs = MergeEnv(env);
  std::vector<char*> c_argv = CStrings(argv), c_env = CStrings(envs);
  char* listen_pid = nullptr;  // the value of LISTEN_PID in c_env
  for (char* e : c_env) {
    if (listen_fd >= 0 && e != nullptr && std::strncmp(e, "LISTEN_PID=", 11) == 0) listen_pid = e + 11;
  }
  pid_t parent = getpid();
  // Block signals across fork: until execve the child runs the test's
  // handlers (doctest's crash reporter), so an early Stop() must not reach
  // them. The child resets every handler to default, then unblocks.
  sigset_t all, old_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  pid_ = fork();
  if (pid_ < 0) Fatal("fork: " + std::string(strerror(errno)));
  if (pid_ == 0) {
    // Child: async-signal-safe calls only.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // nothing outlives a crashed test
    if (getppid() != parent) _exit(127);
    if (!log_path.empty()) {
      int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
    }
    if (listen_fd >= 0) {  // after the log: its descriptor may have been 3
      if (listen_fd == 3) {
        fcntl(3, F_SETFD, 0);  // dup2(3, 3) would keep FD_CLOEXEC
      } else if (dup2(listen_fd, 3) != 3) {
        _exit(127);
      }
      if (listen_pid != nullptr) FormatPid(static_cast<long>(getpid()), listen_pid);
    }
    execve(exe.c_str(), c_argv.data(), c_env.data());
    const char msg[] = "folio::testing::Process: execve failed\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid_, pid_);  // also here, so a kill right after fork hits the group
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
}

Process::~Process() {
  if (Running() && Stop(SIGTERM, 5000) == -1) Stop(SIGKILL, 5000);
}

bool Process::Running() {
  if (pid_ <= 0 || status_ != -1) return false;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = st;
    return false;
  }
  return r == 0;
}

int Process::Stop(int signum, int timeout_ms) {
  if (!Running()) return status_;
  if (kill(-pid_, signum) != 0) kill(pid_, signum);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Running()) {
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status_;
}

std::string BinPath(const std::string& name) {
  const char* dir = std::getenv("FOLIO_BIN_DIR");
  if (dir == nullptr || *dir == '\0') {
    Fatal("FOLIO_BIN_DIR is not set (ctest sets it; by hand: FOLIO_BIN_DIR=<build>/bin)");
  }
  return std::string(dir) + "/" + name;
}

int RunShell(const std::string& command, std::string* out) {
  out->clear();
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string SourcePath(const std::string& rel) {
  const char* dir = std::getenv("FOLIO_SOURCE_DIR");
  if (dir == nullptr || *dir == '\0') {
    Fatal("FOLIO_SOURCE_DIR is not set (ctest sets it; by hand: FOLIO_SOURCE_DIR=<repo root>)");
  }
  return std::string(dir) + "/" + rel;
}

}  // namespace folio::testing
