// Crash marks: what each thread of a process is working on, kept in a small
// file that outlives a crash, so that after a restart the service can tell
// which input crashed it and refuse that input instead of crashing on every
// retry (issue 22: one note overflowed ingest's stack on each retry of its
// push).
//
// The file (a few KiB, mmap'd shared) holds one slot per thread that marks
// its work. A thread calls CrashMarks::Mark(text) before it handles an input
// and Clear() after (or holds a ScopedCrashMark). When a thread dies of a
// fault the kernel raises on it (SIGSEGV, including a stack overflow, SIGBUS,
// SIGILL, SIGFPE) or calls abort(), a signal handler running on a per-thread
// alternate stack flags that thread's slot as the one that crashed, then
// lets the signal take its course: the handler that was there before runs
// (a sanitizer's report), or the default (the process dies). A SIGKILL
// flags nothing: an operator's kill or the OOM killer says nothing about the
// input. Neither does a signal another process sends, nor a reboot: the
// file remembers the boot it was written in.
//
// Ownership and threads: Install once, on the main thread, before other
// threads mark; then Mark/Clear from any thread (each writes only its own
// slot; slots are taken on a thread's first Mark, at most kMaxSlots; later
// threads mark nothing). TakeCrashed is for start-up, before Install.
// Nothing here allocates in the signal handler.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "folio/core/status.h"

namespace folio {

class CrashMarks {
 public:
  static constexpr size_t kMaxSlots = 64;
  static constexpr size_t kMaxTextBytes = 1000;  // longer marks are cut

  // The text of the mark that crashed the last process to use `path` (in
  // this boot), or nullopt when it ended otherwise or no file is there.
  // Removes the file either way. kUnavailable if it exists but cannot be
  // read or removed.
  static Result<std::optional<std::string>> TakeCrashed(const std::string& path);

  // Creates `path` afresh (mode 0600) and installs the signal handlers.
  // kUnavailable if the file cannot be created or mapped.
  // REQUIRES: called once per process.
  static Status Install(const std::string& path);

  // This thread now works on `text` (until Clear or the next Mark). A no-op
  // before Install or when every slot is taken. The first Mark of a thread
  // also gives it an alternate signal stack, freed when the thread ends.
  static void Mark(std::string_view text);
  static void Clear();
};

// Marks `text` for its lifetime.
class ScopedCrashMark {
 public:
  explicit ScopedCrashMark(std::string_view text) { CrashMarks::Mark(text); }
  ~ScopedCrashMark() { CrashMarks::Clear(); }
  ScopedCrashMark(const ScopedCrashMark&) = delete;
  ScopedCrashMark& operator=(const ScopedCrashMark&) = delete;
};

}  // namespace folio
