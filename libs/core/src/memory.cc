#include "folio/core/memory.h"

#include <unistd.h>

#include <cstdio>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace folio {

uint64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

void ReleaseFreeHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

uint64_t HeapInUseBytes() {
#if defined(__GLIBC__)
  struct mallinfo2 mi = mallinfo2();
  return static_cast<uint64_t>(mi.uordblks) + static_cast<uint64_t>(mi.hblkhd);
#else
  return 0;
#endif
}

void LimitHeapArenas(int arenas) {
#if defined(__GLIBC__)
  (void)mallopt(M_ARENA_MAX, arenas);
#else
  (void)arenas;
#endif
}

void KeepLargeBuffersResident(size_t bytes) {
#if defined(__GLIBC__)
  const size_t cap = size_t{32} << 20;  // glibc's largest M_MMAP_THRESHOLD on 64-bit
  const size_t b = bytes < cap ? bytes : cap;
  (void)mallopt(M_MMAP_THRESHOLD, static_cast<int>(b));
  (void)mallopt(M_TRIM_THRESHOLD, static_cast<int>(b * 8));
#else
  (void)bytes;
#endif
}

}  // namespace folio
