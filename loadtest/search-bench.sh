#!/usr/bin/env bash
# search-bench: folio-search's vector indexes (vector-bench) and its engine in-process
# (search-bench). Builds Release into BUILD_DIR, runs vector-bench (full matrix) VECTOR_RUNS
# times and search-bench SEARCH_RUNS times, appends every run to
#   loadtest/results/search-vectors-<date>.csv   (vector-bench: one row per index/ef setting)
#   loadtest/results/search-bench-<date>.csv     (search-bench: one row per run)
# and prints the medians over this invocation's runs.
#
# Query latency is measured on one thread pinned to CPU 1 (--pin 1); HNSW builds, the
# import's related-list pool and data generation use both CPUs, as the service would.
#
#   loadtest/search-bench.sh [BUILD_DIR] [VECTOR_RUNS] [SEARCH_RUNS]   (defaults: build-sbench 1 3;
#                                                                        0 skips a driver)
#   QUICK=1 loadtest/search-bench.sh     --quick for both drivers (a few minutes)
#   ALL=1 ...                            summarise every row of today's files, not just this run's
set -euo pipefail
BUILD=${1:-build-sbench}; VRUNS=${2:-1}; SRUNS=${3:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd); cd "$ROOT"
QUICK_FLAG=(); [[ "${QUICK:-0}" == 1 ]] && QUICK_FLAG=(--quick)
command -v python3 >/dev/null || { echo "missing python3"; exit 1; }

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" --target vector-bench search-bench -j "$(nproc)" >/dev/null

DATE=$(date -u +%F); mkdir -p loadtest/results
VCSV=loadtest/results/search-vectors-$DATE.csv; SCSV=loadtest/results/search-bench-$DATE.csv
lines() { [[ -f "$1" ]] && wc -l <"$1" || echo 0; }
V0=$(lines "$VCSV"); S0=$(lines "$SCSV")
[[ "${ALL:-0}" == 1 ]] && V0=0 && S0=0
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared: other work inflates latencies)"; }

echo "== $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for r in $(seq 1 "$VRUNS"); do
  echo "== vector-bench run $r/$VRUNS; $(load)"
  "$BUILD/bin/vector-bench" --pin 1 --csv "$VCSV" "${QUICK_FLAG[@]}"
done
for r in $(seq 1 "$SRUNS"); do
  echo "== search-bench run $r/$SRUNS; $(load)"
  "$BUILD/bin/search-bench" --pin 1 --csv "$SCSV" "${QUICK_FLAG[@]}"
done

# Medians over this invocation's rows (files may hold earlier runs of the same day).
python3 - "$VCSV" "$V0" "$SCSV" "$S0" "$VRUNS" <<'PY'
import csv, statistics, sys
def rows(path, skip):
    with open(path) as f:
        lines = f.read().splitlines()
    header = lines[0].split(",")
    body = lines[max(int(skip), 1):]
    return [dict(zip(header, l.split(","))) for l in body if l]
med = lambda xs: statistics.median(float(x) for x in xs)

v = rows(sys.argv[1], sys.argv[2]) if int(sys.argv[5]) > 0 else []
groups = {}
for r in v:
    groups.setdefault(tuple(r[k] for k in ("data", "queries", "n", "dim", "index", "m", "efc", "ef")), []).append(r)
if groups:
    print("\nvector-bench (medians of %d run(s)); k=10, one query at a time, one thread" %
          max(len(g) for g in groups.values()))
    print("%-9s %-8s %7s %5s %-6s %3s %4s %5s %8s %9s %9s %8s %7s %6s" %
          ("data", "queries", "n", "dim", "index", "M", "efc", "ef", "build_s", "p50_us", "p99_us", "qps", "recall",
           "scores"))
for key, g in groups.items():
    data, q, n, dim, index, m, efc, ef = key
    if data == "embedder":
        print("%-9s %-8s %7s %5s %-6s  %s notes/s, %.1f MB/s (1 thread)" %
              (data, q, n, dim, index, "%.0f" % med(r["qps"] for r in g), med(r["mb_per_s"] for r in g)))
        continue
    opt = lambda x: "-" if x == "0" else x
    print("%-9s %-8s %7s %5s %-6s %3s %4s %5s %8.1f %9.0f %9.0f %8.0f %7.3f %6.3f" %
          (data, q, n, dim, index, opt(m), opt(efc), opt(ef), med(r["build_s"] for r in g),
           med(r["p50_us"] for r in g), med(r["p99_us"] for r in g), med(r["qps"] for r in g),
           med(r["recall"] for r in g), med(r["score_ratio"] for r in g)))

s = rows(sys.argv[3], sys.argv[4])
print("\nsearch-bench (medians of %d run(s))" % len(s))
for col in s[0].keys():
    if col == "date":
        continue
    print("  %-22s %12.3f" % (col, med(r[col] for r in s)))
PY
echo "results appended to $VCSV and $SCSV"
