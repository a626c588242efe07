// RunOnSmallStack: runs a function on a new thread with a small stack and
// waits for it. Tests and fuzz targets render untrusted input this way, so
// a recursion without a depth bound crashes at a few hundred levels instead
// of thousands, where a fuzzer rarely gets (issue 22: 4,500 nested inline
// footnotes overflowed ingest's 8 MiB stack; the fuzzer never built one).
//
// Header-only (pthreads), so targets that link no folio lib can use it.
// Threading: any thread; `fn` runs on the new thread, which is joined
// before the call returns, so `fn` may capture the caller's locals.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace folio::testing {

#if defined(__SANITIZE_ADDRESS__)
#define FOLIO_TESTING_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FOLIO_TESTING_ASAN 1
#endif
#endif

// 256 KiB: a thirty-second of a usual thread's 8 MiB. AddressSanitizer's
// redzones make frames several times larger, so its builds get 1 MiB.
#ifdef FOLIO_TESTING_ASAN
inline constexpr size_t kSmallStackBytes = size_t{1} << 20;
#else
inline constexpr size_t kSmallStackBytes = size_t{256} << 10;
#endif

// Aborts if the thread cannot be started (a test bug, never a result).
inline void RunOnSmallStack(const std::function<void()>& fn, size_t stack_bytes = kSmallStackBytes) {
  pthread_attr_t attr;
  pthread_t thread;
  auto run = [](void* f) -> void* {
    (*static_cast<const std::function<void()>*>(f))();
    return nullptr;
  };
  if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, stack_bytes) != 0 ||
      pthread_create(&thread, &attr, run, const_cast<std::function<void()>*>(&fn)) != 0) {
    std::fprintf(stderr, "RunOnSmallStack: cannot start a thread with a %zu-byte stack\n", stack_bytes);
    std::abort();
  }
  pthread_attr_destroy(&attr);
  pthread_join(thread, nullptr);
}

}  // namespace folio::testing
