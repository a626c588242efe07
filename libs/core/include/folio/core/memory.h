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
// the hot path, after a burst, not per request. LimitHeapArenas must run
// at startup, before the process starts threads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace folio {

// Resident set size of this process in bytes (/proc/self/statm); 0 if unknown.
uint64_t ResidentBytes();

// Returns the heap's free memory to the kernel (glibc malloc_trim). A no-op
// with other allocators (sanitizer builds).
void ReleaseFreeHeap();

// Bytes the heap holds for live allocations (glibc mallinfo2: in use in
// every arena plus mmapped blocks); 0 with other allocators. Walks the
// free lists like ReleaseFreeHeap: not per request.
uint64_t HeapInUseBytes();

// Caps glibc's malloc arenas at `arenas` (M_ARENA_MAX). By default every
// thread that allocates gets its own arena (up to 8 per core), and memory
// freed into a thread's arena stays resident after the burst that used it:
// malloc_trim cannot give back the top of a thread's arena. With a small
// cap, threads share arenas and the freed memory is reused or released.
// REQUIRES: called before the process starts threads. A no-op with other
// allocators.
void LimitHeapArenas(int arenas);

// Allocations up to `bytes` come from the heap instead of their own mmap, and
// the heap keeps up to 8x that much free memory instead of trimming it, so a
// buffer of that size freed by one request is reused by the next without
// faulting its pages in again (each first touch of a page is a fault: 256 a
// MiB, expensive under virtualization). The price is RSS up to the peak of
// such buffers in flight. glibc caps `bytes` at 32 MiB. REQUIRES: called at
// startup. A no-op with other allocators.
void KeepLargeBuffersResident(size_t bytes);

}  // namespace folio
