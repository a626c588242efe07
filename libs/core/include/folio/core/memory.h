// The process's memory as the kernel counts it, and giving freed heap back.
//
// glibc's malloc keeps memory a program freed inside its heap for reuse:
// after a burst (ingest's first import of a large vault builds every page,
// then frees them) the resident set stays at the burst's peak although the
// live data is a fraction of it. ReleaseFreeHeap hands the free pages back
// to the kernel (malloc_trim), so RSS tracks what the process holds.
//
// Threading: any thread. ReleaseFreeHeap walks the free lists of every
// arena (a few ms per GiB of heap) and takes the arenas' locks: call it off
// the hot path, after a burst, not per request.
#pragma once

#include <cstdint>

namespace folio {

// Resident set size of this process in bytes (/proc/self/statm); 0 if unknown.
uint64_t ResidentBytes();

// Returns the heap's free memory to the kernel (glibc malloc_trim). A no-op
// with other allocators (sanitizer builds).
void ReleaseFreeHeap();

}  // namespace folio
