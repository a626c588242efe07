#!/usr/bin/env bash
# Runs loadtest/push-bench (services pinned to CPU 0, the driver to CPU 1); appends
# its rows (date, commit, figures per vault size) to loadtest/results/push-bench.csv.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export FOLIO_BIN_DIR="$ROOT/$BUILD/bin" FOLIO_SOURCE_DIR="$ROOT"
taskset -c 1 "$BUILD/bin/push-bench" --cpu 0 --csv loadtest/results/push-bench.csv \
  --commit "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" "${@:2}"
