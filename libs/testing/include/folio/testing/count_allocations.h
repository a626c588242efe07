// Counts heap allocations per thread, for tests that check a path allocates
// nothing: replaces the test binary's global operator new and delete (every
// form a library may call, the nothrow ones too, so memory a shared library
// allocates with `new (std::nothrow)`, as simdjson does, is freed by the
// delete that matches it; under ASan a mismatch aborts the binary at exit).
// Include it in exactly one .cc of a test binary: it defines, not declares.
// t_allocations is the calling thread's count; any thread may read its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

// (GCC flags free() of operator new's memory, not knowing both are ours.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
thread_local uint64_t t_allocations = 0;
void* operator new(size_t n) {
  ++t_allocations;
  if (void* p = malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  ++t_allocations;
  return malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { free(p); }
#pragma GCC diagnostic pop
