// The import-growth guard of push-bench (--growth N): imports N notes, and
// 10*N notes in ten pushes of N (the bench note shape, bench_notes.h, each
// note linking the hub bench/note_0), into fresh clusters, alternating, and
// compares the cost per note. A cost that is O(log n) per note (tree
// inserts: the vault, its link and listing indexes, SQLite's B-trees) grows
// 1.3x from 2,000 to 20,000 notes by the logarithm alone, and measured
// 1.1-1.5x here once the trees outgrow the CPU caches; a cost that is O(n)
// per note (a walk over the vault or a table per push) grows about 10x
// (the listings of these imports: 6.5-8.3x, every sitemap shard and graph
// chunk rebuilt per push). The bound (default 2.0) sits between the two,
// with room for the machine's noise. The figures compared are medians over
// --reps imports of CPU time, not wall time: ingest's (user + system, /proc)
// and the writer thread's per phase (phases_cpu_ms of ingest's push log
// lines). Benchmark code; one thread.
#pragma once

#include <sys/types.h>

namespace folio::bench {

// User plus system CPU time of process `pid` so far, in ms; 0 if unknown.
double ProcessCpuMs(pid_t pid);

// Runs the guard with push-bench's argv (--growth N [--reps R] [--bound B]
// [--cpu C]); prints a table; returns 0 if every cost per note held the
// bound, else 1.
int GrowthCheck(int argc, char** argv);

}  // namespace folio::bench
