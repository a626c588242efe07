// CrashMarks in child processes that really crash: a stack overflow, abort,
// a fault on another thread; and the ends that are no crash of the input:
// SIGKILL, a signal sent by another process, no mark held.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <thread>

#include "folio/core/crash_marks.h"

using namespace folio;

namespace {

std::string MarksPath() {
  static int n = 0;
  return "/tmp/folio-crash-marks-test-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

volatile int g_depth_limit = 1 << 30;

// Recursion without a bound, as in issue 22: each frame keeps a buffer.
int Overflow(int depth) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth >= g_depth_limit) return frame[0];
  return Overflow(depth + 1) + frame[0];
}

// Runs `body` in a child that installed marks at `path`; waits for it to end.
void InChild(const std::string& path, void (*body)()) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The test framework's own crash handlers would report the child's crash
    // as the test's; the child dies the plain way instead.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) signal(sig, SIG_DFL);
    if (!CrashMarks::Install(path).ok()) _exit(99);
    body();
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 99));
}

std::optional<std::string> Crashed(const std::string& path) {
  auto r = CrashMarks::TakeCrashed(path);
  REQUIRE(r.ok());
  CHECK(access(path.c_str(), F_OK) != 0);  // taken: removed
  return *r;
}

}  // namespace

TEST_CASE("crash marks: a stack overflow names the input in hand") {
  std::string path = MarksPath();
  InChild(path, [] {
    CrashMarks::Mark("note a.md");
    CrashMarks::Clear();
    CrashMarks::Mark("note b.md");
    Overflow(0);
  });
  CHECK(Crashed(path) == std::optional<std::string>("note b.md"));
  CHECK(Crashed(path) == std::nullopt);  // once
}

TEST_CASE("crash marks: abort() names it too; so does a fault on another thread") {
  std::string a = MarksPath();
  InChild(a, [] {
    ScopedCrashMark m("note c.md");
    std::abort();
  });
  CHECK(Crashed(a) == std::optional<std::string>("note c.md"));
  std::string b = MarksPath();
  InChild(b, [] {
    CrashMarks::Mark("main thread's note");
    std::thread t([] {
      CrashMarks::Mark("worker's note");
      Overflow(0);
    });
    t.join();
  });
  CHECK(Crashed(b) == std::optional<std::string>("worker's note"));
}

TEST_CASE("crash marks: a SIGKILL, a signal from outside or a crash with no mark held names nothing") {
  std::string killed = MarksPath();
  InChild(killed, [] {
    CrashMarks::Mark("note d.md");
    raise(SIGKILL);
  });
  CHECK(Crashed(killed) == std::nullopt);
  std::string sent = MarksPath();
  InChild(sent, [] {
    CrashMarks::Mark("note e.md");
    // As `kill -SEGV` from a shell would: si_code SI_USER, not a fault.
    union sigval v {};
    sigqueue(getpid(), SIGSEGV, v);
    pause();
  });
  CHECK(Crashed(sent) == std::nullopt);
  std::string idle = MarksPath();
  InChild(idle, [] {
    CrashMarks::Mark("note f.md");
    CrashMarks::Clear();
    Overflow(0);
  });
  CHECK(Crashed(idle) == std::nullopt);
  std::string clean = MarksPath();
  InChild(clean, [] { CrashMarks::Mark("note g.md"); });
  CHECK(Crashed(clean) == std::nullopt);
  CHECK(Crashed("/nonexistent/dir/marks") == std::nullopt);
}

TEST_CASE("crash marks: long marks are cut, not overrun") {
  std::string path = MarksPath();
  InChild(path, [] {
    CrashMarks::Mark(std::string(5000, 'x'));
    std::abort();
  });
  CHECK(Crashed(path) == std::optional<std::string>(std::string(CrashMarks::kMaxTextBytes, 'x')));
}
