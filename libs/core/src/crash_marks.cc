#include "folio/core/crash_marks.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <vector>

namespace folio {

namespace {

constexpr char kMagic[8] = {'F', 'O', 'L', 'C', 'R', 'S', 'H', '1'};
constexpr size_t kBootIdBytes = 40;
constexpr size_t kAltStackBytes = 64 * 1024;
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

// The file: one header, then kMaxSlots slots. Fields the signal handler and
// Mark write are atomics, so the compiler keeps their order.
struct Header {
  char magic[8];
  char boot_id[kBootIdBytes];
  std::atomic<int32_t> crashed;  // slot index, or -1
};
struct Slot {
  std::atomic<uint32_t> len;  // 0: idle
  char text[CrashMarks::kMaxTextBytes];
};
struct File {
  Header header;
  Slot slots[CrashMarks::kMaxSlots];
};

static_assert(std::atomic<int32_t>::is_always_lock_free && sizeof(std::atomic<int32_t>) == 4);
static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == 4);

File* g_file = nullptr;  // set once by Install
struct sigaction g_old[NSIG];
std::mutex g_slots_mu;
std::vector<int> g_free_slots;  // GUARDED_BY(g_slots_mu)
int g_next_slot = 0;            // GUARDED_BY(g_slots_mu)

// This thread's slot (-1: none yet or none left), and what it owns: the
// slot and the alternate signal stack, handed back when the thread ends.
thread_local int t_slot = -1;
struct ThreadState {
  void* alt_stack = nullptr;
  bool tried = false;
  ~ThreadState() {
    if (alt_stack != nullptr) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
      munmap(alt_stack, kAltStackBytes);
    }
    if (t_slot >= 0) {
      std::lock_guard<std::mutex> l(g_slots_mu);
      g_free_slots.push_back(t_slot);
      t_slot = -1;
    }
  }
};
thread_local ThreadState t_state;

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id.substr(0, kBootIdBytes - 1);
}

// A fault the kernel raised on this thread, or abort() called here: the
// input in hand crashed us. Not a signal some other process sent.
bool IsCrash(int sig, const siginfo_t* info) {
  if (sig == SIGABRT) return info->si_pid == getpid();
  return info->si_code > 0;
}

void OnFatalSignal(int sig, siginfo_t* info, void*) {
  int expected = -1;
  if (g_file != nullptr && t_slot >= 0 && IsCrash(sig, info) &&
      g_file->slots[t_slot].len.load(std::memory_order_relaxed) != 0) {
    g_file->header.crashed.compare_exchange_strong(expected, t_slot);
  }
  // The handler that was there before takes it from here: a fault repeats
  // when this returns; a raised signal stays pending until then.
  sigaction(sig, &g_old[sig], nullptr);
  if (info->si_code <= 0) raise(sig);
}

// The first Mark of a thread: its slot and an alternate signal stack (a
// stack overflow leaves no room to run the handler on the thread's own).
void PrepareThread() {
  t_state.tried = true;
  {
    std::lock_guard<std::mutex> l(g_slots_mu);
    if (!g_free_slots.empty()) {
      t_slot = g_free_slots.back();
      g_free_slots.pop_back();
    } else if (g_next_slot < static_cast<int>(CrashMarks::kMaxSlots)) {
      t_slot = g_next_slot++;
    }
  }
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) return;  // one is set up
  void* mem = mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
  stack_t ss{};
  ss.ss_sp = mem;
  ss.ss_size = kAltStackBytes;
  if (sigaltstack(&ss, nullptr) != 0) {
    munmap(mem, kAltStackBytes);
    return;
  }
  t_state.alt_stack = mem;
}

}  // namespace

Result<std::optional<std::string>> CrashMarks::TakeCrashed(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::optional<std::string>();
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::Unavailable("cannot remove " + path + ": " + std::strerror(errno));
  }
  if (bytes.size() != sizeof(File) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return std::optional<std::string>();
  }
  const auto* f = reinterpret_cast<const File*>(bytes.data());
  std::string boot(f->header.boot_id, strnlen(f->header.boot_id, kBootIdBytes));
  int32_t crashed = f->header.crashed.load();
  if (boot != BootId() || crashed < 0 || crashed >= static_cast<int32_t>(kMaxSlots)) {
    return std::optional<std::string>();
  }
  const Slot& s = f->slots[crashed];
  uint32_t len = std::min<uint32_t>(s.len.load(), kMaxTextBytes);
  return std::optional<std::string>(std::string(s.text, len));
}

Status CrashMarks::Install(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Unavailable("cannot create " + path + ": " + std::strerror(errno));
  void* mem = MAP_FAILED;
  if (ftruncate(fd, sizeof(File)) == 0) {
    mem = mmap(nullptr, sizeof(File), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  int err = errno;
  close(fd);
  if (mem == MAP_FAILED) return Status::Unavailable("cannot map " + path + ": " + std::strerror(err));
  auto* f = static_cast<File*>(mem);  // zero-filled by ftruncate: every slot idle
  std::memcpy(f->header.magic, kMagic, sizeof(kMagic));
  std::string boot = BootId();
  std::memcpy(f->header.boot_id, boot.data(), boot.size());
  f->header.crashed.store(-1);
  g_file = f;
  struct sigaction sa {};
  sa.sa_sigaction = OnFatalSignal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : kSignals) sigaction(sig, &sa, &g_old[sig]);
  return Status::Ok();
}

void CrashMarks::Mark(std::string_view text) {
  if (g_file == nullptr) return;
  if (!t_state.tried) PrepareThread();
  if (t_slot < 0) return;
  Slot& s = g_file->slots[t_slot];
  size_t n = std::min(text.size(), kMaxTextBytes);
  if (n == 0) return Clear();
  s.len.store(0, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memcpy(s.text, text.data(), n);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  s.len.store(static_cast<uint32_t>(n), std::memory_order_relaxed);
}

void CrashMarks::Clear() {
  if (g_file == nullptr || t_slot < 0) return;
  g_file->slots[t_slot].len.store(0, std::memory_order_relaxed);
}

}  // namespace folio
